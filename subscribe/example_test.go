package subscribe_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/mcpres/mcpres/subscribe"
)

// A Manager with sessions named by strings: the data source watches a file
// only while someone is subscribed to it; a change after a quiet spell is
// delivered at once, and the burst that follows it, once, when the window
// ends.
func ExampleManager() {
	delivered := make(chan struct{})
	m, err := subscribe.New[string](&subscribe.Options{
		Window: 100 * time.Millisecond,
		Deliver: func(uri string) {
			fmt.Println("notify subscribers of", uri)
			delivered <- struct{}{}
		},
		OnWatch:   func(uri string) { fmt.Println("start watching", uri) },
		OnUnwatch: func(uri string) { fmt.Println("stop watching", uri) },
	})
	if err != nil {
		panic(err)
	}
	defer m.Close()

	_ = m.Subscribe("alice", "file:///notes.txt")
	_ = m.Subscribe("bob", "file:///notes.txt") // already watched: no hook

	m.Changed("file:///notes.txt") // delivered at once
	for range 3 {                  // within its window: one delivery when it ends
		m.Changed("file:///notes.txt")
	}
	m.Changed("file:///other.txt") // no one watches it: no delivery
	<-delivered
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
	// notify subscribers of file:///notes.txt
	// 2 subscriptions, 2 sessions, 1 URI
	// stop watching file:///notes.txt
	// 0 subscriptions, 0 sessions, 0 URIs
}

// New refuses what it would have to guess at; zero means the default,
// and NoLimit lifts the cap on subscriptions per session.
func ExampleNew() {
	_, err := subscribe.New[string](&subscribe.Options{Window: -time.Second})
	fmt.Println(err)

	m, err := subscribe.New[string](&subscribe.Options{MaxPerSession: subscribe.NoLimit})
	fmt.Println(err)
	m.Close()

	// Output:
	// subscribe: negative Window -1s
	// <nil>
}

// After Close nothing is delivered and Subscribe refuses, but the
// subscriptions held can still be taken apart, and the data source is
// told to stop watching.
func ExampleManager_Close() {
	delivered := make(chan struct{}, 1)
	m, err := subscribe.New[string](&subscribe.Options{
		Window: time.Minute,
		Deliver: func(uri string) {
			fmt.Println("notify subscribers of", uri)
			delivered <- struct{}{}
		},
		OnUnwatch: func(uri string) { fmt.Println("stop watching", uri) },
	})
	if err != nil {
		panic(err)
	}
	_ = m.Subscribe("alice", "file:///notes.txt")
	m.Changed("file:///notes.txt") // delivered at once
	<-delivered
	m.Changed("file:///notes.txt") // waits for its window's end, dropped by Close

	m.Close() // when it returns, no delivery is under way or to come
	err = m.Subscribe("bob", "file:///notes.txt")
	fmt.Println(errors.Is(err, subscribe.ErrClosed))
	m.Drop("alice")

	// Output:
	// notify subscribers of file:///notes.txt
	// true
	// stop watching file:///notes.txt
}

// Two replicas in one process share changes through a Hub: what one
// publishes, the other is given, and the publisher is not.
func ExampleHub() {
	var hub subscribe.Hub
	a, b := hub.Bus(), hub.Bus()
	got := make(chan subscribe.Change, 1)
	stop, err := b.Listen(func(c subscribe.Change) { got <- c })
	if err != nil {
		panic(err)
	}
	defer stop()
	a.Publish(subscribe.Change{Kind: subscribe.Updated, Value: "db://users/42"})
	c := <-got
	fmt.Println(c.Kind, c.Value)

	msg, _ := subscribe.Message{From: "replica-a", Changes: []subscribe.Change{c}}.AppendJSON(nil)
	fmt.Println(string(msg))
	// Output:
	// uri db://users/42
	// {"from":"replica-a","changes":[{"uri":"db://users/42"}]}
}
