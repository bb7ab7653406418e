package natsbus_test

import (
	"log/slog"
	"testing"

	"github.com/mcpres/mcpres/natsbus"
	"github.com/mcpres/mcpres/subscribe"
)

// BenchmarkPublish measures what Publish costs its caller, with the
// broker up and down: it queues the change, and the Bus's goroutine sends
// it.
//
//	go test -run '^$' -bench Publish -benchmem -count 5 ./natsbus/
func BenchmarkPublish(b *testing.B) {
	for _, down := range []bool{false, true} {
		name := "broker=up"
		if down {
			name = "broker=down"
		}
		b.Run(name, func(b *testing.B) {
			ns := startNATS(b, -1)
			bus, err := natsbus.Connect(ns.ClientURL(), &natsbus.Options{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			defer bus.Close()
			if down {
				ns.Shutdown()
				ns.WaitForShutdown()
			}
			c := subscribe.Change{Kind: subscribe.Updated, Value: "db://users/42"}
			b.ReportAllocs()
			for b.Loop() {
				bus.Publish(c)
			}
		})
	}
}
