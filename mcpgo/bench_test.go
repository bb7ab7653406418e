package mcpgo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpres/mcpres/mcpgo"
	"github.com/mcpres/mcpres/resource"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkMCPGo compares, side by side in one run, a registry mounted on
// an mcp-go v1.2.1 server (mcpres) with the same resources held by mcp-go
// itself (mcp-go):
//
//   - list: the second page of 100 of resources/list among 10,000
//     static resources (mcp-go: WithPaginationLimit(100), its cursor the
//     base64 of the last name; mcpres: the registry's encrypted keyset
//     cursor).
//   - read: resources/read of a URI matched by the last of 1,000
//     templates with distinct literals, bench://t0000/{id} and on
//     (mcp-go: a walk of its template map, in Go's map order, matching
//     each template's regexp; mcpres: the registry's router).
//   - notify: reporting one change to a resource 1,000 sessions
//     subscribed to with resources/subscribe, each an mcp-go in-process
//     client counting the notifications/resources/updated it receives
//     (notifications/op). mcp-go keeps no subscriptions: its side is what
//     a server on mcp-go alone writes, an after-subscribe hook recording
//     each session ID and, on a change, SendNotificationToSpecificClient
//     to each, which drops a notification for a session whose channel is
//     full; mcpres's is reg.Changed, which returns at once and has the
//     registry's sending goroutines send each session's notification,
//     coalescing changes within the window (100 ms).
//
// list and read go through the server's HandleMessage, from the JSON
// request to the response marshalled as the transport would; no
// transport.
//
//	go test -run '^$' -bench MCPGo -benchmem -count 5 ./mcpgo/
func BenchmarkMCPGo(b *testing.B) {
	b.Run("list/resources=10000/mcpres", func(b *testing.B) {
		reg := benchRegistry(b)
		for i := range 10_000 {
			uri := fmt.Sprintf("bench://r%05d", i)
			if err := reg.Add(&sdk.Resource{URI: uri, Name: fmt.Sprintf("r%05d", i), MIMEType: "text/plain"}, resource.Text("x")); err != nil {
				b.Fatal(err)
			}
		}
		benchList(b, server.NewMCPServer("bench", "v0", mcpgo.WithRegistry(reg)))
	})
	b.Run("list/resources=10000/mcp-go", func(b *testing.B) {
		s := server.NewMCPServer("bench", "v0", server.WithPaginationLimit(100))
		var rs []server.ServerResource
		for i := range 10_000 {
			rs = append(rs, server.ServerResource{
				Resource: mcp.Resource{URI: fmt.Sprintf("bench://r%05d", i), Name: fmt.Sprintf("r%05d", i), MIMEType: "text/plain"},
				Handler:  mcpgoText("x"),
			})
		}
		s.AddResources(rs...)
		benchList(b, s)
	})

	const templates = 1_000
	uri := fmt.Sprintf("bench://t%04d/42", templates-1)
	b.Run("read/templates=1000/mcpres", func(b *testing.B) {
		reg := benchRegistry(b)
		for i := range templates {
			err := reg.AddTemplate(&sdk.ResourceTemplate{URITemplate: fmt.Sprintf("bench://t%04d/{id}", i), Name: "item", MIMEType: "text/plain"},
				func(_ context.Context, req *sdk.ReadResourceRequest, _ resource.Vars) (*sdk.ReadResourceResult, error) {
					return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "hello, world"}}}, nil
				})
			if err != nil {
				b.Fatal(err)
			}
		}
		benchRead(b, server.NewMCPServer("bench", "v0", mcpgo.WithRegistry(reg)), uri)
	})
	b.Run("read/templates=1000/mcp-go", func(b *testing.B) {
		s := server.NewMCPServer("bench", "v0")
		for i := range templates {
			s.AddResourceTemplate(mcp.NewResourceTemplate(fmt.Sprintf("bench://t%04d/{id}", i), "item", mcp.WithTemplateMIMEType("text/plain")),
				func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
					return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: "hello, world"}}, nil
				})
		}
		benchRead(b, s, uri)
	})

	const subscribers = 1_000
	b.Run("notify/subscribers=1000/mcpres", func(b *testing.B) {
		reg := benchRegistry(b)
		if err := reg.Add(&sdk.Resource{URI: notifyURI, Name: "watched", MIMEType: "text/plain"}, resource.Text("x")); err != nil {
			b.Fatal(err)
		}
		n := newNotifyBench(b, server.NewMCPServer("bench", "v0", mcpgo.WithRegistry(reg)), subscribers)
		if subs, _, _ := reg.SubscriptionStats(); subs != subscribers {
			b.Fatalf("%d subscriptions, want %d", subs, subscribers)
		}
		n.run(b, func() { reg.Changed(notifyURI) })
	})
	b.Run("notify/subscribers=1000/mcp-go", func(b *testing.B) {
		// What a server on mcp-go alone does: record the subscribers in a
		// hook, and notify each.
		var mu sync.Mutex
		subscribed := make(map[string][]string) // URI → session IDs
		hooks := new(server.Hooks)
		hooks.AddAfterSubscribe(func(ctx context.Context, _ any, req *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
			if cs := server.ClientSessionFromContext(ctx); cs != nil {
				mu.Lock()
				subscribed[req.Params.URI] = append(subscribed[req.Params.URI], cs.SessionID())
				mu.Unlock()
			}
		})
		s := server.NewMCPServer("bench", "v0", server.WithResourceCapabilities(true, true), server.WithHooks(hooks))
		s.AddResource(mcp.NewResource(notifyURI, "watched"), mcpgoText("x"))
		n := newNotifyBench(b, s, subscribers)
		params := map[string]any{"uri": notifyURI}
		n.run(b, func() {
			mu.Lock()
			ids := subscribed[notifyURI]
			mu.Unlock()
			for _, id := range ids {
				s.SendNotificationToSpecificClient(id, mcp.MethodNotificationResourceUpdated, params)
			}
		})
	})
}

const notifyURI = "bench://watched"

func benchRegistry(b *testing.B) *resource.Registry {
	reg, err := resource.NewRegistry(&resource.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { reg.Close() })
	return reg
}

func mcpgoText(text string) server.ResourceHandlerFunc {
	return func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: text}}, nil
	}
}

// handle sends s the JSON-RPC request of method with params, as a
// transport would, and returns the response marshalled.
func handle(b *testing.B, s *server.MCPServer, request []byte) []byte {
	resp := s.HandleMessage(context.Background(), request)
	out, err := json.Marshal(resp)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

func request(method string, params any) []byte {
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	return out
}

// benchList measures the second page of resources/list on s.
func benchList(b *testing.B, s *server.MCPServer) {
	var first struct {
		Result mcp.ListResourcesResult `json:"result"`
	}
	if err := json.Unmarshal(handle(b, s, request("resources/list", map[string]any{})), &first); err != nil || first.Result.NextCursor == "" {
		b.Fatalf("first page: %v, next cursor %q", err, first.Result.NextCursor)
	}
	req := request("resources/list", map[string]any{"cursor": first.Result.NextCursor})
	var page struct {
		Result mcp.ListResourcesResult `json:"result"`
	}
	if err := json.Unmarshal(handle(b, s, req), &page); err != nil || len(page.Result.Resources) != 100 || page.Result.Resources[0].URI != "bench://r00100" {
		b.Fatalf("second page: %v, %d resources", err, len(page.Result.Resources))
	}
	b.ReportAllocs()
	for b.Loop() {
		handle(b, s, req)
	}
}

// benchRead measures resources/read of uri on s.
func benchRead(b *testing.B, s *server.MCPServer, uri string) {
	req := request("resources/read", map[string]any{"uri": uri})
	var res struct {
		Result struct {
			Contents []struct{ Text string } `json:"contents"`
		} `json:"result"`
	}
	if err := json.Unmarshal(handle(b, s, req), &res); err != nil || len(res.Result.Contents) != 1 || res.Result.Contents[0].Text != "hello, world" {
		b.Fatalf("read %s: %v, %+v", uri, err, res.Result)
	}
	b.ReportAllocs()
	for b.Loop() {
		handle(b, s, req)
	}
}

// A notifyBench is a server with in-process clients, each subscribed to
// notifyURI and counting its notifications.
type notifyBench struct {
	total atomic.Int64 // notifications/resources/updated received, by all
}

// newNotifyBench connects sessions in-process clients of 2025-11-25 to s
// and subscribes each to notifyURI.
func newNotifyBench(b *testing.B, s *server.MCPServer, sessions int) *notifyBench {
	n := new(notifyBench)
	ctx := context.Background()
	for range sessions {
		c, err := client.NewInProcessClient(s)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		c.OnNotification(func(note mcp.JSONRPCNotification) {
			if note.Method == mcp.MethodNotificationResourceUpdated {
				n.total.Add(1)
			}
		})
		if err := c.Start(ctx); err != nil {
			b.Fatal(err)
		}
		init := mcp.InitializeRequest{}
		init.Params.ProtocolVersion = "2025-11-25"
		if _, err := c.Initialize(ctx, init); err != nil {
			b.Fatal(err)
		}
		sub := mcp.SubscribeRequest{}
		sub.Params.URI = notifyURI
		if err := c.Subscribe(ctx, sub); err != nil {
			b.Fatal(err)
		}
	}
	return n
}

// run measures change, and reports the notifications the clients
// received per operation, once no more arrive.
func (n *notifyBench) run(b *testing.B, change func()) {
	start := n.total.Load()
	b.ReportAllocs()
	ops := 0
	for b.Loop() {
		change()
		ops++
	}
	b.StopTimer()
	// Let what was sent arrive (the last window's too), for the count.
	prev := int64(-1)
	for cur := n.total.Load(); cur != prev; cur = n.total.Load() {
		prev = cur
		time.Sleep(150 * time.Millisecond) // a benchmark on the real clock: more than a window (100 ms) with nothing new means all arrived
	}
	b.ReportMetric(float64(n.total.Load()-start)/float64(ops), "notifications/op")
}
