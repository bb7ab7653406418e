package natsbus_test

import (
	"log"

	"github.com/mcpres/mcpres/natsbus"
	"github.com/mcpres/mcpres/resource"
)

// Every replica of a server gives its registry a Bus on the same NATS:
// a change any of them reports reaches the subscribers of all.
func ExampleConnect() {
	bus, err := natsbus.Connect("nats://nats:4222", nil) // or pgbus.Open(ctx, dsn, nil)
	if err != nil {
		log.Fatal(err) // a bad URL; an unreachable broker is not an error
	}
	defer bus.Close()
	reg, err := resource.NewRegistry(&resource.Options{
		Subscriptions: resource.SubscriptionOptions{Bus: bus},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()
	// Register resources, serve reg.NewServer(…) with serve.ListenAndServe,
	// and report changes with reg.Changed: every replica's subscribers hear.
}
