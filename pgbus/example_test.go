package pgbus_test

import (
	"context"
	"log"

	"github.com/mcpres/mcpres/pgbus"
	"github.com/mcpres/mcpres/resource"
)

// Every replica of a server gives its registry a Bus on the same
// database: a change any of them reports reaches the subscribers of all.
func ExampleOpen() {
	ctx := context.Background()
	bus, err := pgbus.Open(ctx, "postgres://app@db/app", nil)
	if err != nil {
		log.Fatal(err) // a bad DSN, or the database refused the first connection
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
