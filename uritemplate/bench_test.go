package uritemplate_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/mcpres/mcpres/uritemplate"
	yosida "github.com/yosida95/uritemplate/v3"
)

// benchTemplates returns n templates with distinct literals, in sorted
// order, and a URI that matches the last of them.
func benchTemplates(n int) (templates []string, uri string) {
	for i := range n {
		templates = append(templates, fmt.Sprintf("db://table%04d/{id}", i))
	}
	slices.Sort(templates)
	return templates, fmt.Sprintf("db://table%04d/42", n-1)
}

// BenchmarkLookup compares Router.Lookup with go-sdk v1.8's dispatch of
// resources/read, side by side: go-sdk walks its templates in sorted order
// and, for each, parses the template and compiles its regexp anew
// (uritemplate.New(t).Regexp().MatchString(uri), in
// serverResourceTemplate.Matches), until one matches.
//
//	go test -run '^$' -bench Lookup -benchmem -count 5 ./uritemplate/
func BenchmarkLookup(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 10_000} {
		templates, uri := benchTemplates(n)
		b.Run(fmt.Sprintf("n=%d/router", n), func(b *testing.B) {
			var r uritemplate.Router[int]
			for i, t := range templates {
				if err := r.Add(uritemplate.MustParse(t), i); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if v, vars, ok := r.Lookup(uri); !ok || v != n-1 || vars.Get("id") != "42" {
					b.Fatalf("Lookup(%q) = %v, %v, %v", uri, v, vars.Get("id"), ok)
				}
			}
		})
		b.Run(fmt.Sprintf("n=%d/gosdk", n), func(b *testing.B) {
			if n > 1000 {
				b.Skip("go-sdk's dispatch grows with n: 1,000 templates show it")
			}
			b.ReportAllocs()
			for b.Loop() {
				found := -1
				for i, t := range templates {
					tmpl, err := yosida.New(t)
					if err != nil {
						b.Fatal(err)
					}
					if tmpl.Regexp().MatchString(uri) {
						found = i
						break
					}
				}
				if found != n-1 {
					b.Fatalf("go-sdk dispatch found %d", found)
				}
			}
		})
	}
}

// BenchmarkFind measures Router.Find on the routers of BenchmarkLookup:
// the same choice of template, without the values, so without their
// allocations.
//
//	go test -run '^$' -bench 'Lookup|Find' -benchmem -count 5 ./uritemplate/
func BenchmarkFind(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 10_000} {
		templates, uri := benchTemplates(n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			var r uritemplate.Router[int]
			for i, t := range templates {
				if err := r.Add(uritemplate.MustParse(t), i); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if v, ok := r.Find(uri); !ok || v != n-1 {
					b.Fatalf("Find(%q) = %v, %v", uri, v, ok)
				}
			}
		})
	}
}

// BenchmarkMatch measures one compiled template against yosida95's own
// Match, which the registry used before.
func BenchmarkMatch(b *testing.B) {
	const tmpl, uri = "file:///{+path}{?v}", "file:///notes/2026/11/meeting%20notes.md?v=3"
	b.Run("uritemplate", func(b *testing.B) {
		t := uritemplate.MustParse(tmpl)
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := t.Match(uri); !ok {
				b.Fatal("no match")
			}
		}
	})
	b.Run("yosida95", func(b *testing.B) {
		t := yosida.MustNew(tmpl)
		b.ReportAllocs()
		for b.Loop() {
			if t.Match(uri) == nil {
				b.Fatal("no match")
			}
		}
	})
}

// BenchmarkAdd measures what Add costs per template: each is compared with
// those that share its literal prefix or extend it, so templates with
// distinct literal prefixes add in constant time, and templates that all
// start with the same literal in time that grows with their number.
//
//	go test -run '^$' -bench Add -benchmem ./uritemplate/
func BenchmarkAdd(b *testing.B) {
	for _, c := range []struct {
		name   string
		format string
	}{
		{"distinct prefixes", "db://table%04d/{id}"},
		{"one prefix", "db://{table}/n%04d/{id}"},
	} {
		for _, n := range []int{100, 1000} {
			templates := make([]*uritemplate.Template, n)
			for i := range templates {
				templates[i] = uritemplate.MustParse(fmt.Sprintf(c.format, i))
			}
			b.Run(fmt.Sprintf("%s/n=%d", c.name, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					var r uritemplate.Router[int]
					for i, t := range templates {
						if err := r.Add(t, i); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/template")
			})
		}
	}
}
