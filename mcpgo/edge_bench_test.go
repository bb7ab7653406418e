//go:build unix

package mcpgo_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpres/mcpres/mcpgo"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkEdge measures what the HTTP edge of package serve costs on a
// request over loopback, for each SDK against the SDK's own streamable
// HTTP handler with no edge in front:
//
//   - gosdk: mcp.NewStreamableHTTPHandler (stateful) of a go-sdk server
//     made by Registry.NewServer;
//   - gosdk+edge: serve.Handler of the same server, at /mcp;
//   - mcpgo: server.NewStreamableHTTPServer of an mcp-go server with
//     mcpgo.WithRegistry;
//   - mcpgo+edge: the same handler behind serve.Guard.
//
// All four serve one registry of 100 static text resources and are
// reached by a go-sdk client over streamable HTTP, at protocol version
// 2025-11-25 (a stateful session, set up once per row, outside the timed
// loop). Each op is one request and its response:
//
//   - read: resources/read of one static resource;
//   - list: resources/list, first page.
//
// Client and server run in the benchmark's process, so ns/op, B/op and
// allocs/op count both sides (client encoding, HTTP client and server,
// loopback, SDK, registry, and the edge where there is one); the edge's
// own cost is the difference between a row and its SDK's row without the
// edge. cpu-ns/op is the CPU time (user+system) of the whole process per
// op, from getrusage: on a loaded machine it moves less than ns/op, the
// wall time, which counts the waits for a CPU too.
//
//	go test -run '^$' -bench BenchmarkEdge -benchmem -count 5 ./mcpgo/
func BenchmarkEdge(b *testing.B) {
	reg, err := resource.NewRegistry(&resource.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { reg.Close() })
	for i := range 100 {
		uri := fmt.Sprintf("bench://r%03d", i)
		if err := reg.Add(&sdk.Resource{URI: uri, Name: fmt.Sprintf("r%03d", i), MIMEType: "text/plain"}, resource.Text("hello, world")); err != nil {
			b.Fatal(err)
		}
	}
	gosdk := func(b *testing.B) *sdk.Server {
		s, err := reg.NewServer(&sdk.Implementation{Name: "b", Version: "v0"}, nil)
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	mcpgoHandler := func() http.Handler {
		return server.NewStreamableHTTPServer(server.NewMCPServer("b", "v0", mcpgo.WithRegistry(reg)))
	}
	rows := []struct {
		name    string
		path    string
		handler func(b *testing.B) http.Handler
	}{
		{"gosdk", "/", func(b *testing.B) http.Handler {
			s := gosdk(b)
			return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
		}},
		{"gosdk+edge", "/mcp", func(b *testing.B) http.Handler {
			h, err := serve.Handler(gosdk(b), nil)
			if err != nil {
				b.Fatal(err)
			}
			return h
		}},
		{"mcpgo", "/", func(*testing.B) http.Handler { return mcpgoHandler() }},
		{"mcpgo+edge", "/", func(b *testing.B) http.Handler {
			h, err := serve.Guard(mcpgoHandler(), nil)
			if err != nil {
				b.Fatal(err)
			}
			return h
		}},
	}
	for _, row := range rows {
		b.Run(row.name, func(b *testing.B) {
			cs := edgeSession(b, row.handler(b), row.path)
			ctx := context.Background()
			b.Run("read", func(b *testing.B) {
				b.ReportAllocs()
				defer reportCPU(b)()
				for b.Loop() {
					res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "bench://r042"})
					if err != nil {
						b.Fatal(err)
					}
					if len(res.Contents) != 1 {
						b.Fatalf("%d contents", len(res.Contents))
					}
				}
			})
			b.Run("list", func(b *testing.B) {
				b.ReportAllocs()
				defer reportCPU(b)()
				for b.Loop() {
					res, err := cs.ListResources(ctx, &sdk.ListResourcesParams{})
					if err != nil {
						b.Fatal(err)
					}
					if len(res.Resources) == 0 {
						b.Fatal("no resources")
					}
				}
			})
		})
	}
}

// edgeSession serves h on loopback and connects a go-sdk client to it at
// path, at protocol version 2025-11-25, with an HTTP client of its own.
func edgeSession(b *testing.B, h http.Handler, path string) *sdk.ClientSession {
	ts := httptest.NewServer(h)
	b.Cleanup(ts.Close)
	transport := &sdk.StreamableClientTransport{
		Endpoint:   ts.URL + path,
		HTTPClient: &http.Client{Transport: &http.Transport{}},
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "v0"}, nil)
	cs, err := client.Connect(context.Background(), transport, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != "2025-11-25" {
		b.Fatalf("protocol version %q", got)
	}
	return cs
}

// reportCPU reads the process's CPU time; the function it returns reports
// the CPU time spent since, per op, as cpu-ns/op.
func reportCPU(b *testing.B) func() {
	start := cpuTime(b)
	return func() { b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op") }
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
