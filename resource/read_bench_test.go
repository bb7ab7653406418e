package resource_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/uritemplate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkRead compares, side by side, what one resources/read of a
// templated resource costs among N templates, from the router alone to a
// whole server's dispatch, for mcpres and for go-sdk v1.8:
//
//   - Router: uritemplate.Router.Lookup of the URI alone, the lower bound
//     of any template dispatch.
//   - ReadResource: the registry's handler method, called directly with a
//     request that has no session: URI check, lookup, read function, the
//     contents filled in and MIME-checked, the caching hint set.
//   - mounted: a server with the registry mounted (resource.Mount),
//     through the server's whole receiving middleware chain: the
//     registry's middleware, which passes the read to go-sdk's own
//     resources/read addressed to its marker resource, go-sdk's static
//     lookup of the marker, the registry's ReadResource, and go-sdk's
//     finishing of the result (resultType, caching hints).
//   - go-sdk: a plain go-sdk server with the same templates added with
//     AddResourceTemplate, through the same chain: go-sdk's resources/read,
//     which walks its templates in sorted order and, for each, parses the
//     template and compiles its regexp anew
//     (serverResourceTemplate.Matches) until one matches.
//
// mounted and go-sdk are measured the same way, without a transport and
// without JSON: go-sdk has no public way to call a server's method
// handler, so a receiving middleware added last (outermost, after Mount)
// captures the chain it wraps, and the benchmark calls that with a
// *mcp.ReadResourceRequest whose Session is a real server session (a
// go-sdk client connected over in-memory transports, speaking the
// client's default protocol version, 2026-07-28), as go-sdk's own
// dispatch would after decoding the request. What they leave out, the
// JSON-RPC framing, the JSON coding of request and result and the
// transport, is the same for both.
//
// The templates have distinct literals, bench://t0000/{id} and on, and
// the URI matches the last of them in go-sdk's (sorted) order: its worst
// case, which the router's cost does not depend on. The read function
// returns a small fixed text/plain content, new for each read, so that
// the MIME check costs little.
//
//	go test -run '^$' -bench 'BenchmarkRead$' -benchmem -count 5 ./resource/
//
// go-sdk at 10,000 templates takes tens of milliseconds a read: run it
// apart with a fixed count,
//
//	go test -run '^$' -bench 'BenchmarkRead$' -skip 'BenchmarkRead/templates=10000/go-sdk' -benchmem -count 5 ./resource/
//	go test -run '^$' -bench 'BenchmarkRead$/templates=10000/go-sdk' -benchtime 20x -benchmem -count 5 ./resource/
func BenchmarkRead(b *testing.B) {
	for _, n := range []int{10, 1_000, 10_000} {
		templates, uri := readBenchTemplates(n)
		b.Run(fmt.Sprintf("templates=%d/Router", n), func(b *testing.B) {
			var r uritemplate.Router[int]
			for i, t := range templates {
				if err := r.Add(uritemplate.MustParse(t), i); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if v, vars, ok := r.Lookup(uri); !ok || v != n-1 || vars.Get("id") != "42" {
					b.Fatalf("Lookup(%q) = %v, %q, %v", uri, v, vars.Get("id"), ok)
				}
			}
		})
		b.Run(fmt.Sprintf("templates=%d/ReadResource", n), func(b *testing.B) {
			reg := newReadBenchRegistry(b, templates)
			req := &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: uri}}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				res, err := reg.ReadResource(ctx, req)
				checkReadBench(b, uri, res, err)
			}
		})
		b.Run(fmt.Sprintf("templates=%d/mounted", n), func(b *testing.B) {
			reg := newReadBenchRegistry(b, templates)
			benchServerRead(b, uri, func(s *mcp.Server) { resource.Mount(s, reg) })
		})
		b.Run(fmt.Sprintf("templates=%d/go-sdk", n), func(b *testing.B) {
			benchServerRead(b, uri, func(s *mcp.Server) {
				for _, t := range templates {
					s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: t, Name: "item", MIMEType: "text/plain"}, readBenchRead)
				}
			})
		})
	}
}

// readBenchTemplates returns n templates with distinct literals, in
// sorted order, and a URI that matches the last of them.
func readBenchTemplates(n int) (templates []string, uri string) {
	for i := range n {
		templates = append(templates, fmt.Sprintf("bench://t%04d/{id}", i))
	}
	return templates, fmt.Sprintf("bench://t%04d/42", n-1)
}

// readBenchRead is the read function of every template: a small fixed
// text, in a new result each time.
func readBenchRead(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: req.Params.URI, MIMEType: "text/plain", Text: "hello, world"},
	}}, nil
}

func newReadBenchRegistry(b *testing.B, templates []string) *resource.Registry {
	reg := newRegistry(b, &resource.Options{Logger: slog.New(slog.DiscardHandler)})
	read := func(ctx context.Context, req *mcp.ReadResourceRequest, _ resource.Vars) (*mcp.ReadResourceResult, error) {
		return readBenchRead(ctx, req)
	}
	for _, t := range templates {
		if err := reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: t, Name: "item", MIMEType: "text/plain"}, read); err != nil {
			b.Fatal(err)
		}
	}
	return reg
}

// benchServerRead creates a server, sets it up with setup, connects a
// client to it so that there is a real session, and times resources/read
// of uri through the server's receiving method handler chain, captured by
// a middleware added last (see BenchmarkRead).
func benchServerRead(b *testing.B, uri string, setup func(*mcp.Server)) {
	server := mcp.NewServer(&mcp.Implementation{Name: "bench"}, &mcp.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	setup(server)
	handler, ss, cs := methodHandler(b, server)
	ctx := context.Background()
	req := &mcp.ReadResourceRequest{Session: ss, Params: &mcp.ReadResourceParams{URI: uri}}
	// Once over the client, to check that the read the benchmark times
	// is the one a client gets.
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	checkReadBench(b, uri, res, err)
	b.ReportAllocs()
	for b.Loop() {
		res, err := handler(ctx, "resources/read", req)
		if err != nil {
			b.Fatal(err)
		}
		checkReadBench(b, uri, res.(*mcp.ReadResourceResult), nil)
	}
}

func checkReadBench(b *testing.B, uri string, res *mcp.ReadResourceResult, err error) {
	if err != nil {
		b.Fatal(err)
	}
	if len(res.Contents) != 1 || res.Contents[0].URI != uri || res.Contents[0].Text != "hello, world" || res.Contents[0].MIMEType != "text/plain" {
		b.Fatalf("read %s: %+v", uri, res.Contents)
	}
}

// BenchmarkReadStatic compares, side by side, one resources/read of a
// static resource: the registry's ReadResource called directly, a server
// with the registry mounted, and a plain go-sdk server holding the same
// resource (AddResource), both through the server's receiving method
// handler chain, measured as BenchmarkRead measures them (no transport,
// no JSON). The read function returns a small text/plain content, new
// for each read; the MIME check is on, as by default, and off in
// ReadResource/MIMEOff, which shows what it costs.
//
//	go test -run '^$' -bench 'BenchmarkReadStatic$' -benchmem -count 5 ./resource/
func BenchmarkReadStatic(b *testing.B) {
	const uri = "bench://static/note.txt"
	res := &mcp.Resource{URI: uri, Name: "note", MIMEType: "text/plain"}
	for _, c := range []struct {
		name string
		mime resource.MIMEPolicy
	}{{"ReadResource", resource.MIMEStrict}, {"ReadResource/MIMEOff", resource.MIMEOff}} {
		b.Run(c.name, func(b *testing.B) {
			reg := newRegistry(b, &resource.Options{Logger: slog.New(slog.DiscardHandler), MIME: c.mime})
			if err := reg.Add(res, readBenchRead); err != nil {
				b.Fatal(err)
			}
			req := &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: uri}}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				got, err := reg.ReadResource(ctx, req)
				checkReadBench(b, uri, got, err)
			}
		})
	}
	b.Run("mounted", func(b *testing.B) {
		reg := newRegistry(b, &resource.Options{Logger: slog.New(slog.DiscardHandler)})
		if err := reg.Add(res, readBenchRead); err != nil {
			b.Fatal(err)
		}
		benchServerRead(b, uri, func(s *mcp.Server) { resource.Mount(s, reg) })
	})
	b.Run("go-sdk", func(b *testing.B) {
		benchServerRead(b, uri, func(s *mcp.Server) { s.AddResource(res, readBenchRead) })
	})
}
