package natsbus_test

import (
	"log/slog"
	"testing"

	"github.com/mcpres/mcpres/natsbus"
	"github.com/mcpres/mcpres/subscribe"
)

// BenchmarkPublish measures what Publish costs its caller, with the
// broker up and down: it queues the change, and the Bus's goroutine sends
// it. Publishing in a tight loop outruns any broker, so most changes find
// the queue full and are dropped (reported as dropped/op); sent/op is the
// share the Bus's goroutine sent meanwhile (into nats.go's reconnect
// buffer, while the broker is down, until that is full).
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
			b.StopTimer()
			bus.Close() // sends what is queued, for the counts
			st := bus.Stats()
			b.ReportMetric(float64(st.Sent)/float64(b.N), "sent/op")
			b.ReportMetric(float64(st.Dropped)/float64(b.N), "dropped/op")
		})
	}
}
