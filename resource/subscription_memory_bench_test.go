package resource_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkSubscriptionMemory compares, side by side, the heap a
// session's subscriptions hold beyond its first: go-sdk clients connected
// over in-memory transports at protocol 2025-11-25 subscribe through
// resources/subscribe to a server with the registry mounted (mcpres), and
// to a plain go-sdk server whose SubscribeHandler accepts everything
// (go-sdk). Each session first subscribes once; the live heap is measured
// after a garbage collection, then every session subscribes to the rest
// of its URIs, and the heap is measured again: B/subscription is the
// difference over the subscriptions added. For mcpres it includes the
// entry go-sdk's server keeps for each subscription as well as the
// registry's; "mcpres-own" is the difference between the two, what the
// registry adds. Three shapes: many sessions watching a few URIs each, all
// watched by all (sessions=1000/each=10), and a few sessions each
// watching its own many URIs (sessions=10/each=1000), and between them
// 1,000 sessions watching 100 shared URIs each (sessions=1000/each=100).
//
//	go test -run '^$' -bench SubscriptionMemory -benchtime 1x -count 5 ./resource/
func BenchmarkSubscriptionMemory(b *testing.B) {
	for _, shape := range []struct{ sessions, each int }{{1000, 10}, {1000, 100}, {10, 1000}} {
		uriOf := func(session, j int) string {
			if shape.sessions > shape.each { // shared URIs
				return fmt.Sprintf("bench://items/%06d", j)
			}
			return fmt.Sprintf("bench://items/%06d", session*shape.each+j)
		}
		var perSub [2]float64
		for i, impl := range []string{"mcpres", "go-sdk"} {
			b.Run(fmt.Sprintf("sessions=%d/each=%d/%s", shape.sessions, shape.each, impl), func(b *testing.B) {
				for b.Loop() {
					perSub[i] = subscriptionHeap(b, impl == "mcpres", shape.sessions, shape.each, uriOf)
				}
				b.ReportMetric(perSub[i], "B/subscription")
			})
		}
		b.Run(fmt.Sprintf("sessions=%d/each=%d/mcpres-own", shape.sessions, shape.each), func(b *testing.B) {
			for b.Loop() {
			}
			b.ReportMetric(perSub[0]-perSub[1], "B/subscription")
		})
	}
}

// subscriptionHeap connects sessions clients to a new server, mcpres's or
// go-sdk's, subscribes each to uriOf(session, 0), and returns the live heap
// that subscribing each to uriOf(session, 1 ... each-1) adds, per
// subscription.
func subscriptionHeap(b *testing.B, mcpres bool, sessions, each int, uriOf func(session, j int) string) float64 {
	ctx := context.Background()
	quiet := quietLogger()
	var server *mcp.Server
	if mcpres {
		reg, err := resource.NewRegistry(&resource.Options{Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		defer reg.Close()
		if err := reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "bench://items/{id}", Name: "item"}, func(ctx context.Context, req *mcp.ReadResourceRequest, _ resource.Vars) (*mcp.ReadResourceResult, error) {
			return readBenchRead(ctx, req)
		}); err != nil {
			b.Fatal(err)
		}
		if server, err = reg.NewServer(&mcp.Implementation{Name: "bench"}, &mcp.ServerOptions{Logger: quiet}); err != nil {
			b.Fatal(err)
		}
	} else {
		server = mcp.NewServer(&mcp.Implementation{Name: "bench"}, &mcp.ServerOptions{
			Logger:             quiet,
			SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
			UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		})
		server.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "bench://items/{id}", Name: "item"}, readBenchRead)
	}
	clients := make([]*mcp.ClientSession, sessions)
	for i := range clients {
		st, ct := mcp.NewInMemoryTransports()
		ss, err := server.Connect(ctx, st, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer ss.Wait()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			ss.Close() // else the deferred Wait would wait for good
			b.Fatal(err)
		}
		defer cs.Close()
		clients[i] = cs
	}
	subscribe := func(from, to int) {
		for i, cs := range clients {
			for j := from; j < to; j++ {
				if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uriOf(i, j)}); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	subscribe(0, 1)
	before := liveHeap()
	subscribe(1, each)
	after := liveHeap()
	runtime.KeepAlive(server)
	return float64(after-before) / float64(sessions*(each-1))
}
