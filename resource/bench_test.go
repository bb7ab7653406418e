package resource_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The list benchmarks compare the registry's resources/list with go-sdk
// v1.8's own, side by side, both called directly (no transport): the
// registry's handler method, and go-sdk's handler chain as a server
// installs it, captured with a receiving middleware and called with a
// real session.
//
//	go test -run '^$' -bench 'List' -benchmem -count 5 ./resource/

const benchPageSize = 100

func benchURI(i int) string { return fmt.Sprintf("bench://items/%06d", i) }

func benchRead(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "x"}}}, nil
}

func newBenchRegistry(b *testing.B, n int) *resource.Registry {
	reg := newRegistry(b, &resource.Options{PageSize: benchPageSize})
	for i := range n {
		if err := reg.Add(&mcp.Resource{URI: benchURI(i), Name: "item"}, benchRead); err != nil {
			b.Fatal(err)
		}
	}
	return reg
}

// sdkList is go-sdk's resources/list, called directly.
type sdkList struct {
	server  *mcp.Server
	handler mcp.MethodHandler
	session *mcp.ServerSession
}

func newSDKList(b *testing.B, n int) *sdkList {
	server := mcp.NewServer(&mcp.Implementation{Name: "bench"}, &mcp.ServerOptions{PageSize: benchPageSize})
	for i := range n {
		server.AddResource(&mcp.Resource{URI: benchURI(i), Name: "item"}, benchRead)
	}
	s := &sdkList{server: server}
	s.handler, s.session, _ = methodHandler(b, server)
	return s
}

// methodHandler connects a go-sdk client to server in memory and returns
// the server's receiving method handler chain, captured by a middleware
// added last, with the server's and the client's sessions: go-sdk's
// dispatch of a method, without transport and JSON, for a benchmark to
// call with a request of the server session.
func methodHandler(b *testing.B, server *mcp.Server) (mcp.MethodHandler, *mcp.ServerSession, *mcp.ClientSession) {
	var handler mcp.MethodHandler
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		handler = next
		return next
	})
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close(); ss.Wait() })
	return handler, ss, cs
}

func (s *sdkList) page(ctx context.Context, cursor string) (*mcp.ListResourcesResult, error) {
	res, err := s.handler(ctx, "resources/list", &mcp.ListResourcesRequest{Session: s.session, Params: &mcp.ListResourcesParams{Cursor: cursor}})
	if err != nil {
		return nil, err
	}
	return res.(*mcp.ListResourcesResult), nil
}

// pager is one page of a list, from a cursor.
type pager func(ctx context.Context, cursor string) (*mcp.ListResourcesResult, error)

func registryPager(reg *resource.Registry) pager {
	return func(ctx context.Context, cursor string) (*mcp.ListResourcesResult, error) {
		return reg.ListResources(ctx, &mcp.ListResourcesRequest{Params: &mcp.ListResourcesParams{Cursor: cursor}})
	}
}

// walk lists every page and returns the number of resources seen.
func walk(b *testing.B, page pager) int {
	ctx := context.Background()
	n, cursor := 0, ""
	for {
		res, err := page(ctx, cursor)
		if err != nil {
			b.Fatal(err)
		}
		n += len(res.Resources)
		if res.NextCursor == "" {
			return n
		}
		cursor = res.NextCursor
	}
}

// middleCursor returns the cursor of the page halfway through.
func middleCursor(b *testing.B, page pager, n int) string {
	ctx := context.Background()
	cursor := ""
	for range n / benchPageSize / 2 {
		res, err := page(ctx, cursor)
		if err != nil {
			b.Fatal(err)
		}
		cursor = res.NextCursor
	}
	return cursor
}

var benchSizes = []int{1_000, 10_000, 100_000}

// BenchmarkListWalk lists every page of N static resources; the time per
// page is reported as ns/page.
func BenchmarkListWalk(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("N=%d/mcpres", n), func(b *testing.B) {
			p := registryPager(newBenchRegistry(b, n))
			b.ReportAllocs()
			for b.Loop() {
				if got := walk(b, p); got != n {
					b.Fatalf("walked %d of %d", got, n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n/benchPageSize), "ns/page")
		})
		b.Run(fmt.Sprintf("N=%d/gosdk", n), func(b *testing.B) {
			p := newSDKList(b, n).page
			b.ReportAllocs()
			for b.Loop() {
				if got := walk(b, p); got != n {
					b.Fatalf("walked %d of %d", got, n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n/benchPageSize), "ns/page")
		})
	}
}

// BenchmarkListPage reads one page from the middle of N static resources,
// and for mcpres also of 1,000,000 (go-sdk takes minutes to add as many).
func BenchmarkListPage(b *testing.B) {
	for _, n := range append(benchSizes, 1_000_000) {
		b.Run(fmt.Sprintf("N=%d/mcpres", n), func(b *testing.B) {
			p := registryPager(newBenchRegistry(b, n))
			benchPage(b, p, middleCursor(b, p, n))
		})
		if n > slices.Max(benchSizes) {
			continue
		}
		b.Run(fmt.Sprintf("N=%d/gosdk", n), func(b *testing.B) {
			p := newSDKList(b, n).page
			benchPage(b, p, middleCursor(b, p, n))
		})
	}
}

// benchPage times page p from cursor. It collects the garbage of the
// setup first: the collection that building a million resources starts
// would otherwise still be marking them while the pages are timed, which
// made a page at 1,000,000 resources look 38% slower than at 100,000.
func benchPage(b *testing.B, p pager, cursor string) {
	ctx := context.Background()
	runtime.GC()
	b.ReportAllocs()
	for b.Loop() {
		res, err := p(ctx, cursor)
		if err != nil || len(res.Resources) != benchPageSize {
			b.Fatalf("page: %v, %d resources", err, len(res.Resources))
		}
	}
}

// BenchmarkListPageAfterChange changes one resource among N (adds it
// anew) and then reads the next page of a walk in progress: the page a
// client asks for right after the list changed.
func BenchmarkListPageAfterChange(b *testing.B) {
	const n = 100_000
	b.Run(fmt.Sprintf("N=%d/mcpres", n), func(b *testing.B) {
		reg := newBenchRegistry(b, n)
		p := registryPager(reg)
		cursor := middleCursor(b, p, n)
		changed := &mcp.Resource{URI: benchURI(n / 4), Name: "changed"}
		benchAfterChange(b, p, cursor, func() {
			if err := reg.Add(changed, benchRead); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run(fmt.Sprintf("N=%d/gosdk", n), func(b *testing.B) {
		s := newSDKList(b, n)
		cursor := middleCursor(b, s.page, n)
		changed := &mcp.Resource{URI: benchURI(n / 4), Name: "changed"}
		benchAfterChange(b, s.page, cursor, func() { s.server.AddResource(changed, benchRead) })
	})
}

func benchAfterChange(b *testing.B, p pager, cursor string, change func()) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		change()
		res, err := p(ctx, cursor)
		if err != nil || len(res.Resources) != benchPageSize {
			b.Fatalf("page: %v", err)
		}
	}
}

// BenchmarkReadMIME reads a 100 KB JSON resource and a 1 MB PNG through
// the registry with the MIME check on (MIMEStrict, the default) and off,
// side by side: what checking every read costs. For scale, "wire"
// marshals the read result to JSON, as go-sdk does for every response.
//
//	go test -run '^$' -bench ReadMIME -benchmem -count 5 ./resource/
func BenchmarkReadMIME(b *testing.B) {
	var doc []byte
	doc = append(doc, '[')
	for i := 0; len(doc) < 100<<10; i++ {
		if i > 0 {
			doc = append(doc, ',')
		}
		doc = fmt.Appendf(doc, `{"id":%d,"name":"item %d","tags":["a","b"],"ok":true}`, i, i)
	}
	doc = append(doc, ']')
	png := make([]byte, 1<<20)
	copy(png, "\x89PNG\r\n\x1a\n")
	for _, policy := range []struct {
		name string
		p    resource.MIMEPolicy
	}{{"strict", resource.MIMEStrict}, {"off", resource.MIMEOff}} {
		reg := newRegistry(b, &resource.Options{MIME: policy.p})
		if err := reg.Add(&mcp.Resource{URI: "bench://doc.json", Name: "doc", MIMEType: "application/json"}, resource.Text(string(doc))); err != nil {
			b.Fatal(err)
		}
		if err := reg.Add(&mcp.Resource{URI: "bench://image.png", Name: "image", MIMEType: "image/png"}, resource.Bytes(png)); err != nil {
			b.Fatal(err)
		}
		for _, uri := range []string{"bench://doc.json", "bench://image.png"} {
			if policy.p == resource.MIMEOff {
				b.Run(uri[len("bench://"):]+"/wire", func(b *testing.B) {
					res, err := reg.ReadResource(context.Background(), &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: uri}})
					if err != nil {
						b.Fatal(err)
					}
					b.ReportAllocs()
					for b.Loop() {
						if _, err := json.Marshal(res); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
			b.Run(uri[len("bench://"):]+"/"+policy.name, func(b *testing.B) {
				req := &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: uri}}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := reg.ReadResource(context.Background(), req); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkProviderPage reads one page of 100 resources that a template's
// instance list returns from memory: what the registry's check of each
// listed resource (a URI a client could send, read by a template, with a
// name) costs a page. "mime" leaves every MIME type to the template's.
//
//	go test -run '^$' -bench ProviderPage -benchmem -count 5 ./resource/
func BenchmarkProviderPage(b *testing.B) {
	for _, mime := range []string{"text/plain", ""} {
		name := "typed"
		if mime == "" {
			name = "mime"
		}
		b.Run(name, func(b *testing.B) {
			all := make([]cursor.Item[*mcp.Resource], 10*benchPageSize)
			for i := range all {
				u := fmt.Sprintf("bench://rows/%06d", i)
				all[i] = cursor.Item[*mcp.Resource]{Key: u, Value: &mcp.Resource{URI: u, Name: "row", MIMEType: mime}}
			}
			reg := newRegistry(b, &resource.Options{PageSize: benchPageSize})
			err := reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "bench://rows/{id}", Name: "row", MIMEType: "text/plain"},
				func(context.Context, *mcp.ReadResourceRequest, resource.Vars) (*mcp.ReadResourceResult, error) {
					return nil, resource.ErrNotFound
				},
				resource.WithInstances(func(_ context.Context, after string, limit int) ([]cursor.Item[*mcp.Resource], error) {
					i, _ := slices.BinarySearchFunc(all, after, func(it cursor.Item[*mcp.Resource], k string) int { return strings.Compare(it.Key, k) })
					if i < len(all) && all[i].Key == after {
						i++
					}
					return all[i:min(i+limit, len(all))], nil
				}))
			if err != nil {
				b.Fatal(err)
			}
			benchPage(b, registryPager(reg), "")
		})
	}
}
