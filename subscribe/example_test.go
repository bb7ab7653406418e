package subscribe_test

import (
	"fmt"
	"time"

	"github.com/mcpres/mcpres/subscribe"
)

// A Manager with sessions named by strings: the data source watches a file
// only while someone is subscribed to it, and a burst of changes yields
// one delivery.
func ExampleManager() {
	delivered := make(chan struct{})
	m := subscribe.New[string](&subscribe.Options{
		Window: 10 * time.Millisecond,
		Deliver: func(uri string) {
			fmt.Println("notify subscribers of", uri)
			delivered <- struct{}{}
		},
		OnWatch:   func(uri string) { fmt.Println("start watching", uri) },
		OnUnwatch: func(uri string) { fmt.Println("stop watching", uri) },
	})
	defer m.Close()

	_ = m.Subscribe("alice", "file:///notes.txt")
	_ = m.Subscribe("bob", "file:///notes.txt") // already watched: no hook

	for range 3 { // a burst: one delivery
		m.Changed("file:///notes.txt")
	}
	m.Changed("file:///other.txt") // no one watches it: no delivery
	<-delivered

	subs, sessions, uris := m.Stats()
	fmt.Println(subs, "subscriptions,", sessions, "sessions,", uris, "URI")

	m.Drop("alice") // the sessions end
	m.Drop("bob")
	subs, sessions, uris = m.Stats()
	fmt.Println(subs, "subscriptions,", sessions, "sessions,", uris, "URIs")

	// Output:
	// start watching file:///notes.txt
	// notify subscribers of file:///notes.txt
	// 2 subscriptions, 2 sessions, 1 URI
	// stop watching file:///notes.txt
	// 0 subscriptions, 0 sessions, 0 URIs
}
