package cursor

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkCodec measures one Encode and one Decode of a typical
// position.
func BenchmarkCodec(b *testing.B) {
	p := Position{Source: "users://{id}/profile", Key: "users://ada.lovelace/profile"}
	for _, bc := range []struct {
		name      string
		enc, dec  *Codec
		scope     string
		expecting bool
	}{
		{name: "plain"},
		{name: "ttl+scope", scope: "user:ada@example.com", expecting: true},
		{name: "rotated"}, // verified by the second of two keys
	} {
		b.Run(bc.name, func(b *testing.B) {
			enc := newTestCodec(b, nil)
			dec := enc
			switch bc.name {
			case "ttl+scope":
				enc = newTestCodec(b, &Options{Keys: [][]byte{testKey}, TTL: time.Hour})
				dec = enc
			case "rotated":
				dec = newTestCodec(b, &Options{Keys: [][]byte{newKey, testKey}})
			}
			b.ReportAllocs()
			for b.Loop() {
				s := enc.Encode("resources/list", bc.scope, p)
				if _, err := dec.Decode("resources/list", bc.scope, s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchKey is the key of item i of a benchmark collection.
func benchKey(i int) string { return fmt.Sprintf("file:///srv/data/item-%08d.json", i) }

type benchValue struct{ uri, name string }

func benchSorted(n int) *Sorted[*benchValue] {
	s := new(Sorted[*benchValue])
	for i := range n {
		k := benchKey(2 * i) // odd keys are free for inserts
		s.Set(k, &benchValue{uri: k, name: fmt.Sprint(i)})
	}
	return s
}

var benchSizes = []int{1_000, 10_000, 100_000}

// BenchmarkPaginate measures one page of 100 from a cursor in the middle
// of a Sorted of N items: its cost should not depend on N.
func BenchmarkPaginate(b *testing.B) {
	ctx := context.Background()
	c := newTestCodec(b, nil)
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			s := benchSorted(n)
			sources := []Source[*benchValue]{{Name: "", Provider: s}}
			req := Request{Method: "resources/list", Size: 100,
				Cursor: c.Encode("resources/list", "", Position{Key: benchKey(n)})}
			b.ReportAllocs()
			for b.Loop() {
				page, next, err := Paginate(ctx, c, req, sources)
				if err != nil || len(page) != 100 || next == "" {
					b.Fatal(len(page), next, err)
				}
			}
		})
	}
}

// BenchmarkPageAfterSet measures a change to one item among N followed by
// the page that shows it: Set of a new key just after the cursor, the page
// of 100 from that cursor, and Delete of the key (to keep N fixed).
func BenchmarkPageAfterSet(b *testing.B) {
	ctx := context.Background()
	c := newTestCodec(b, nil)
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			s := benchSorted(n)
			sources := []Source[*benchValue]{{Name: "", Provider: s}}
			req := Request{Method: "resources/list", Size: 100,
				Cursor: c.Encode("resources/list", "", Position{Key: benchKey(n)})}
			k := benchKey(n + 1)
			v := &benchValue{uri: k}
			b.ReportAllocs()
			for b.Loop() {
				s.Set(k, v)
				page, next, err := Paginate(ctx, c, req, sources)
				if err != nil || page[0] != v || next == "" {
					b.Fatal(len(page), next, err)
				}
				s.Delete(k)
			}
		})
	}
}
