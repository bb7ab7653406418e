package resource_test

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"testing"

	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkStaticMemory compares, side by side, the heap a static
// resource holds once added: 100,000 resources added to a registry, and
// the same to a plain go-sdk server (AddResource), each measured as the
// live heap after a garbage collection, before and after, over the number
// added (B/resource). The resources are made in the loop, as a server
// would, with a URI and a name of their own; what the caller made and
// dropped is not counted, what the registry or server keeps is.
//
//	go test -run '^$' -bench StaticMemory -benchtime 1x -count 5 ./resource/
func BenchmarkStaticMemory(b *testing.B) {
	const n = 100_000
	read := func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return readBenchRead(nil, req)
	}
	for _, c := range []struct {
		name string
		add  func(b *testing.B) (keep any)
	}{
		{"mcpres", func(b *testing.B) any {
			reg, err := resource.NewRegistry(&resource.Options{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			for i := range n {
				if err := reg.Add(&mcp.Resource{URI: fmt.Sprintf("bench://items/%06d", i), Name: fmt.Sprintf("item %d", i)}, read); err != nil {
					b.Fatal(err)
				}
			}
			return reg
		}},
		{"go-sdk", func(b *testing.B) any {
			s := mcp.NewServer(&mcp.Implementation{Name: "bench"}, nil)
			for i := range n {
				s.AddResource(&mcp.Resource{URI: fmt.Sprintf("bench://items/%06d", i), Name: fmt.Sprintf("item %d", i)}, read)
			}
			return s
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var perResource float64
			for b.Loop() {
				before := liveHeap()
				keep := c.add(b)
				after := liveHeap()
				runtime.KeepAlive(keep)
				perResource = float64(after-before) / n
			}
			b.ReportMetric(perResource, "B/resource")
		})
	}
}

// liveHeap returns the bytes of live heap after a collection.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
