package natsbus_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/natsbus"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/subscribe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitTimeout bounds every wait for a delivery: the tests check that it
// happens, not how fast.
const waitTimeout = 20 * time.Second

// startNATS starts a NATS server on port (-1 for a free one), shut down
// when t ends.
func startNATS(t testing.TB, port int) *natsserver.Server {
	t.Helper()
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: port, NoLog: true, NoSigs: true})
	require.NoError(t, err)
	go ns.Start()
	require.True(t, ns.ReadyForConnections(10*time.Second), "NATS server did not start")
	t.Cleanup(ns.Shutdown)
	return ns
}

// logBuffer is a log sink safe for concurrent use.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), s)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// connect returns a Bus on url, closed when t ends.
func connect(t *testing.T, url string, opts *natsbus.Options) *natsbus.Bus {
	t.Helper()
	b, err := natsbus.Connect(url, opts)
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	return b
}

// inbox is a listener's record of the changes it was given.
type inbox chan subscribe.Change

func listen(t *testing.T, b *natsbus.Bus) inbox {
	t.Helper()
	in := make(inbox, 100_000)
	stop, err := b.Listen(func(c subscribe.Change) { in <- c })
	require.NoError(t, err)
	t.Cleanup(stop)
	return in
}

func (in inbox) next(t *testing.T) subscribe.Change {
	t.Helper()
	select {
	case c := <-in:
		return c
	case <-time.After(waitTimeout):
		t.Fatal("no change arrived")
		panic("unreachable")
	}
}

// Every kind of change published on one Bus reaches the others, in order,
// and never comes back to it; a message from another publisher, without
// "from", reaches every Bus.
func TestChangesReachOtherBuses(t *testing.T) {
	t.Parallel()
	ns := startNATS(t, -1)
	a, b, c := connect(t, ns.ClientURL(), nil), connect(t, ns.ClientURL(), nil), connect(t, ns.ClientURL(), nil)
	ina, inb, inc := listen(t, a), listen(t, b), listen(t, c)
	changes := []subscribe.Change{
		{Kind: subscribe.Updated, Value: "db://users/42"},
		{Kind: subscribe.UpdatedPrefix, Value: "log://prod/"},
		{Kind: subscribe.UpdatedTemplate, Value: "db://users/{id}"},
		{Kind: subscribe.ListChanged},
	}
	for _, ch := range changes {
		a.Publish(ch)
	}
	for _, in := range []inbox{inb, inc} {
		for _, want := range changes {
			assert.Equal(t, want, in.next(t))
		}
	}

	nc, err := nats.Connect(ns.ClientURL())
	require.NoError(t, err)
	defer nc.Close()
	require.NoError(t, nc.Publish(natsbus.DefaultSubject, []byte(`{"changes":[{"uri":"x://trigger"}]}`)))
	for _, in := range []inbox{ina, inb, inc} {
		assert.Equal(t, subscribe.Change{Kind: subscribe.Updated, Value: "x://trigger"}, in.next(t))
	}
	assert.Empty(t, ina, "a Bus never receives its own changes")
	assert.EqualValues(t, 4, a.Stats().Sent)
	assert.EqualValues(t, 5, b.Stats().Received)
}

// Buses on different subjects do not hear each other.
func TestSubjects(t *testing.T) {
	t.Parallel()
	ns := startNATS(t, -1)
	a := connect(t, ns.ClientURL(), &natsbus.Options{Subject: "svc.one"})
	b := connect(t, ns.ClientURL(), &natsbus.Options{Subject: "svc.two"})
	c := connect(t, ns.ClientURL(), &natsbus.Options{Subject: "svc.two"})
	ina, inc := listen(t, a), listen(t, c)
	b.Publish(subscribe.Change{Kind: subscribe.ListChanged})
	assert.Equal(t, subscribe.ListChanged, inc.next(t).Kind)
	a.Publish(subscribe.Change{Kind: subscribe.ListChanged}) // nobody else on svc.one
	b.Publish(subscribe.Change{Kind: subscribe.Updated, Value: "x://last"})
	assert.Equal(t, "x://last", inc.next(t).Value)
	assert.Empty(t, ina)
}

// Malformed messages are skipped and logged once, and delivery goes on.
func TestMalformedMessages(t *testing.T) {
	t.Parallel()
	ns := startNATS(t, -1)
	var logs logBuffer
	a := connect(t, ns.ClientURL(), &natsbus.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	in := listen(t, a)
	nc, err := nats.Connect(ns.ClientURL())
	require.NoError(t, err)
	defer nc.Close()
	for _, bad := range []string{"", "{", `{"changes":[{"nope":1}]}`, `[]`, `{"changes":[{"list":false}]}`} {
		require.NoError(t, nc.Publish(natsbus.DefaultSubject, []byte(bad)))
	}
	require.NoError(t, nc.Publish(natsbus.DefaultSubject, []byte(`{"changes":[{"uri":"x://fine"}]}`)))
	assert.Equal(t, "x://fine", in.next(t).Value)
	assert.Equal(t, 1, logs.count("skipped a malformed message"), logs.String())
	assert.EqualValues(t, 5, a.Stats().Malformed)
}

// Bad options are refused; a Bus has one listener at a time, and none
// once closed.
func TestBadInput(t *testing.T) {
	t.Parallel()
	ns := startNATS(t, -1)
	for _, subject := range []string{"a..b", "a.*", "a.>", "has space", ".a", "a."} {
		_, err := natsbus.Connect(ns.ClientURL(), &natsbus.Options{Subject: subject})
		assert.Error(t, err, subject)
	}
	_, err := natsbus.Connect(ns.ClientURL(), &natsbus.Options{QueueSize: -1})
	assert.Error(t, err)
	_, err = natsbus.Connect("", nil)
	assert.Error(t, err)
	_, err = natsbus.Connect("nats://bad host:4222", nil)
	assert.Error(t, err)

	b := connect(t, ns.ClientURL(), nil)
	stop, err := b.Listen(func(subscribe.Change) {})
	require.NoError(t, err)
	_, err = b.Listen(func(subscribe.Change) {})
	assert.Error(t, err, "a second listener")
	stop()
	stop()
	stop, err = b.Listen(func(subscribe.Change) {})
	require.NoError(t, err, "a listener after stop")
	stop()
	require.NoError(t, b.Close())
	require.NoError(t, b.Close())
	_, err = b.Listen(func(subscribe.Change) {})
	assert.Error(t, err, "Listen after Close")
	b.Publish(subscribe.Change{Kind: subscribe.ListChanged}) // dropped, no panic
}

// replica is a registry on its own Bus, served to an in-memory client
// subscribed to db://users/7 that records its updates.
type replica struct {
	reg *resource.Registry
	n   *mcptest.Notifications
}

func newReplica(t *testing.T, bus subscribe.Bus, version string) *replica {
	t.Helper()
	reg, err := resource.NewRegistry(&resource.Options{Logger: slog.New(slog.DiscardHandler),
		Subscriptions: resource.SubscriptionOptions{Bus: bus, Window: 5 * time.Millisecond}})
	require.NoError(t, err)
	t.Cleanup(func() { reg.Close() })
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "db://users/{id}", Name: "user"},
		func(_ context.Context, req *mcp.ReadResourceRequest, _ resource.Vars) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "row"}}}, nil
		}))
	server, err := reg.NewServer(&mcp.Implementation{Name: "replica", Version: "v0"}, &mcp.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	r := &replica{reg: reg, n: new(mcptest.Notifications)}
	cs := mcptest.Connect(t, server, version, r.n.ClientOptions(nil))
	require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "db://users/7"}))
	require.Eventually(t, func() bool { n, _, _ := reg.SubscriptionStats(); return n == 1 }, waitTimeout, time.Millisecond)
	return r
}

// updates returns how many updates r's client has received for
// db://users/7 so far, after waiting for one if want is at least one.
func (r *replica) updates() int {
	n := 0
	for _, u := range r.n.Updated() {
		if u == "db://users/7" {
			n++
		}
	}
	return n
}

// Through real registries: a change reported on one replica reaches the
// subscribers of the other, in both eras, and the reporting replica's
// subscriber once.
func TestRegistries(t *testing.T) {
	t.Parallel()
	ns := startNATS(t, -1)
	a := newReplica(t, connect(t, ns.ClientURL(), nil), "2025-11-25")
	b := newReplica(t, connect(t, ns.ClientURL(), nil), "2026-07-28")
	b.n.WaitUpdated(t, "db://users/7", func() { require.NoError(t, a.reg.Changed("db://users/7")) })
	a.n.WaitUpdated(t, "db://users/7", nil)
	// One more change from b: when it has reached a, anything a would
	// have been sent twice for the first would have arrived too.
	a.n.WaitUpdated(t, "db://users/7", func() { require.NoError(t, b.reg.Changed("db://users/7")) })
	b.n.WaitUpdated(t, "db://users/7", nil)
	assert.Zero(t, a.updates(), "no second update on the reporting replica")
	assert.Zero(t, b.updates())
}

// restart shuts ns down and starts a new server on its port, shut down
// when t ends; in between, it calls while.
func restart(t *testing.T, ns *natsserver.Server, while func()) *natsserver.Server {
	t.Helper()
	port := ns.Addr().(*net.TCPAddr).Port
	ns.Shutdown()
	ns.WaitForShutdown()
	while()
	return startNATS(t, port)
}

// With NATS down, Publish returns, the replica's own subscriber is still
// notified, and the outage is logged once; once NATS is back, that is
// logged once, and changes flow again.
func TestBrokerDown(t *testing.T) {
	t.Parallel()
	ns := startNATS(t, -1)
	var logs logBuffer
	bus := connect(t, ns.ClientURL(), &natsbus.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	a := newReplica(t, bus, "2025-11-25")
	var otherLogs logBuffer
	other := connect(t, ns.ClientURL(), &natsbus.Options{Logger: slog.New(slog.NewTextHandler(&otherLogs, nil))})
	in := listen(t, other)
	a.n.WaitUpdated(t, "db://users/7", func() { require.NoError(t, a.reg.Changed("db://users/7")) })
	assert.Equal(t, "db://users/7", in.next(t).Value)

	restart(t, ns, func() {
		require.Eventually(t, func() bool { return logs.count("broker unreachable") == 1 }, waitTimeout, time.Millisecond, logs.String())
		for range 100_000 {
			bus.Publish(subscribe.Change{Kind: subscribe.Updated, Value: "db://users/8"}) // returns at once
		}
		a.n.WaitUpdated(t, "db://users/7", func() { require.NoError(t, a.reg.Changed("db://users/7")) })
		assert.Equal(t, 1, logs.count("broker unreachable"), "the outage is logged once")
		assert.Zero(t, logs.count("reachable again"))
	})
	require.Eventually(t, func() bool {
		return logs.count("broker reachable again") == 1 && otherLogs.count("broker reachable again") == 1
	}, waitTimeout, time.Millisecond, logs.String())
	// Changes flow again: a last one reaches the other Bus, whatever of
	// those held during the outage arrived before it.
	bus.Publish(subscribe.Change{Kind: subscribe.Updated, Value: "x://after"})
	for c := in.next(t); c.Value != "x://after"; c = in.next(t) {
		require.Contains(t, []string{"db://users/7", "db://users/8"}, c.Value, "held during the outage")
	}
	assert.Equal(t, 1, logs.count("broker unreachable"))
	assert.Equal(t, 1, logs.count("broker reachable again"))
}

// A burst of changes goes on while NATS is stopped and started again:
// whatever arrives arrives once and in order, and every change published
// after both buses are back arrives.
func TestRestartMidBurst(t *testing.T) {
	t.Parallel()
	ns := startNATS(t, -1)
	var logsA, logsB logBuffer
	a := connect(t, ns.ClientURL(), &natsbus.Options{Logger: slog.New(slog.NewTextHandler(&logsA, nil))})
	b := connect(t, ns.ClientURL(), &natsbus.Options{Logger: slog.New(slog.NewTextHandler(&logsB, nil))})
	in := listen(t, b)
	publish := func(from, to int) {
		for i := from; i < to; i++ {
			a.Publish(subscribe.Change{Kind: subscribe.Updated, Value: "x://" + strconv.Itoa(i)})
			if i%10 == 0 {
				time.Sleep(time.Millisecond) // a steady pace, not one batch
			}
		}
	}
	publish(0, 500)
	restart(t, ns, func() { publish(500, 1000) })
	publish(1000, 1500)
	require.Eventually(t, func() bool {
		return logsA.count("broker reachable again") == 1 && logsB.count("broker reachable again") == 1
	}, waitTimeout, time.Millisecond)
	publish(1500, 2000)
	last := -1
	got := 0
	for last != 1999 {
		c := in.next(t)
		i, err := strconv.Atoi(strings.TrimPrefix(c.Value, "x://"))
		require.NoError(t, err)
		require.Greater(t, i, last, "in order, and once")
		last = i
		got++
	}
	t.Logf("delivered %d of 2000 changes across a broker restart (lost %d); sent %d, dropped %d",
		got, 2000-got, a.Stats().Sent, a.Stats().Dropped)
	assert.Equal(t, 1, logsA.count("broker unreachable"))
}
