// Package bench holds the benchmarks and load programs that need more
// than the core module: brokers (NATS, Postgres) and their buses.
package bench

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/natsbus"
	"github.com/mcpres/mcpres/pgbus"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/subscribe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	natsserver "github.com/nats-io/nats-server/v2/server"
)

// BenchmarkChanged measures what Registry.Changed costs its caller with
// each bus, its broker up and down: a URI a session on this replica
// watches (watched), and one only other replicas might (unwatched, which
// is checked against the registry before it is published). The changes go
// out from the bus's own goroutine; this is the caller's share.
//
//	go test -run '^$' -bench Changed -benchmem -count 5 ./bench/
//	bash scripts/postgres.sh go test -run '^$' -bench Changed -benchmem -count 5 ./bench/
func BenchmarkChanged(b *testing.B) {
	quiet := slog.New(slog.DiscardHandler)
	cases := []struct {
		name string
		bus  func(b *testing.B) (subscribe.Bus, func())
	}{
		{"bus=none", func(*testing.B) (subscribe.Bus, func()) { return nil, func() {} }},
		{"bus=hub", func(*testing.B) (subscribe.Bus, func()) {
			var hub subscribe.Hub
			other := hub.Bus()
			stop, _ := other.Listen(func(subscribe.Change) {})
			return hub.Bus(), stop
		}},
		{"bus=nats/broker=up", func(b *testing.B) (subscribe.Bus, func()) {
			ns := startNATS(b)
			bus, err := natsbus.Connect(ns.ClientURL(), &natsbus.Options{Logger: quiet})
			if err != nil {
				b.Fatal(err)
			}
			return bus, func() { bus.Close() }
		}},
		{"bus=nats/broker=down", func(b *testing.B) (subscribe.Bus, func()) {
			ns := startNATS(b)
			bus, err := natsbus.Connect(ns.ClientURL(), &natsbus.Options{Logger: quiet})
			if err != nil {
				b.Fatal(err)
			}
			ns.Shutdown()
			ns.WaitForShutdown()
			return bus, func() { bus.Close() }
		}},
		{"bus=postgres/broker=up", func(b *testing.B) (subscribe.Bus, func()) {
			dsn := os.Getenv("MCPRES_TEST_POSTGRES_DSN")
			if dsn == "" {
				b.Skip("MCPRES_TEST_POSTGRES_DSN not set: run through scripts/postgres.sh")
			}
			bus, err := pgbus.Open(context.Background(), dsn, &pgbus.Options{Channel: "bench_changed", Logger: quiet})
			if err != nil {
				b.Fatal(err)
			}
			return bus, func() { bus.Close() }
		}},
	}
	for _, c := range cases {
		for _, watched := range []bool{true, false} {
			name := c.name + "/watched"
			if !watched {
				name = c.name + "/unwatched"
			}
			b.Run(name, func(b *testing.B) {
				bus, done := c.bus(b)
				defer done()
				reg, err := resource.NewRegistry(&resource.Options{Logger: quiet,
					Subscriptions: resource.SubscriptionOptions{Bus: bus, Window: time.Hour}})
				if err != nil {
					b.Fatal(err)
				}
				defer reg.Close()
				err = reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "db://users/{id}", Name: "user"},
					func(context.Context, *mcp.ReadResourceRequest, resource.Vars) (*mcp.ReadResourceResult, error) {
						return nil, resource.ErrNotFound
					})
				if err != nil {
					b.Fatal(err)
				}
				server, err := reg.NewServer(&mcp.Implementation{Name: "bench", Version: "v0"}, &mcp.ServerOptions{Logger: quiet})
				if err != nil {
					b.Fatal(err)
				}
				cs := mcptest.Connect(b, server, "2025-11-25", nil)
				if err := cs.Subscribe(b.Context(), &mcp.SubscribeParams{URI: "db://users/1"}); err != nil {
					b.Fatal(err)
				}
				uri := "db://users/1"
				if !watched {
					uri = "db://users/2"
				}
				b.ReportAllocs()
				for b.Loop() {
					reg.Changed(uri)
				}
			})
		}
	}
}

// startNATS starts a NATS server on a free loopback port, stopped when b
// ends.
func startNATS(b *testing.B) *natsserver.Server {
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		b.Fatal(err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		b.Fatal("NATS server did not start")
	}
	b.Cleanup(ns.Shutdown)
	return ns
}
