package pgbus_test

import (
	"testing"

	"github.com/mcpres/mcpres/subscribe"
)

// BenchmarkPublish measures what Publish costs its caller: it queues the
// change, and the Bus's goroutine sends it.
//
//	bash scripts/postgres.sh go test -run '^$' -bench Publish -benchmem -count 5 ./pgbus/
func BenchmarkPublish(b *testing.B) {
	bus := open(b, nil)
	c := subscribe.Change{Kind: subscribe.Updated, Value: "db://users/42"}
	b.ReportAllocs()
	for b.Loop() {
		bus.Publish(c)
	}
}
