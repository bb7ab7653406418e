package natsbus_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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

// waitTimeout bounds every wait: the tests check that something happens,
// not how fast.
const waitTimeout = 10 * time.Second

// startNATS starts a NATS server on port (-1 for a free one), shut down
// when t ends.
func startNATS(t testing.TB, port int) *natsserver.Server {
	t.Helper()
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: port, NoLog: true, NoSigs: true})
	require.NoError(t, err)
	go ns.Start()
	require.True(t, ns.ReadyForConnections(5*time.Second), "NATS server did not start")
	t.Cleanup(ns.Shutdown)
	return ns
}

// restart shuts ns down, calls while, and starts a new server on ns's
// port, shut down when t ends.
func restart(t *testing.T, ns *natsserver.Server, while func()) *natsserver.Server {
	t.Helper()
	port := ns.Addr().(*net.TCPAddr).Port
	ns.Shutdown()
	ns.WaitForShutdown()
	while()
	return startNATS(t, port)
}

// logBuffer is a log sink safe for concurrent use.
type logBuffer struct{ mcptest.Buffer }

// logger returns a logger writing text lines to l.
func (l *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// lines returns the number of lines logged that contain s.
func (l *logBuffer) lines(s string) int {
	n := 0
	for line := range strings.Lines(l.String()) {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

// The outbox's lines at the start and the end of an outage.
const (
	downLine = "unreachable"
	upLine   = "reachable again"
)

// connect returns a Bus on url, closed when t ends.
func connect(t testing.TB, url string, opts *natsbus.Options) *natsbus.Bus {
	t.Helper()
	b, err := natsbus.Connect(url, opts)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, b.Close()) })
	return b
}

// A recorder records the changes a listener is given, Resyncs included.
type recorder struct {
	mu      sync.Mutex
	changes []subscribe.Change // without their Sent
	sent    []time.Time        // their Sent
	at      []time.Time        // when each was delivered
	signal  chan struct{}
}

// listen makes a recorder b's listener, stopped when t ends.
func listen(t *testing.T, b *natsbus.Bus) *recorder {
	t.Helper()
	r := &recorder{signal: make(chan struct{}, 1)}
	stop, err := b.Listen(func(c subscribe.Change) {
		r.mu.Lock()
		r.sent = append(r.sent, c.Sent)
		r.at = append(r.at, time.Now())
		c.Sent = time.Time{} // compared apart
		r.changes = append(r.changes, c)
		r.mu.Unlock()
		select {
		case r.signal <- struct{}{}:
		default:
		}
	})
	require.NoError(t, err)
	t.Cleanup(stop)
	return r
}

// all returns the changes recorded so far.
func (r *recorder) all() []subscribe.Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.changes)
}

// updates returns the changes recorded so far, without the Resyncs.
func (r *recorder) updates() []subscribe.Change {
	return slices.DeleteFunc(r.all(), isResync)
}

// resyncs returns the number of Resyncs recorded so far.
func (r *recorder) resyncs() int {
	return len(r.all()) - len(r.updates())
}

func isResync(c subscribe.Change) bool { return c.Kind == subscribe.Resync }

// wait waits until done, called with every change recorded so far,
// returns true; every poll, if not 0, it calls poke.
func (r *recorder) wait(t *testing.T, what string, done func([]subscribe.Change) bool, poll time.Duration, poke func()) {
	t.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	var tick <-chan time.Time
	if poll > 0 {
		ticker := time.NewTicker(poll)
		defer ticker.Stop()
		tick = ticker.C
	}
	for !done(r.all()) {
		select {
		case <-r.signal:
		case <-tick:
			poke()
		case <-deadline.C:
			t.Fatalf("waited %v for %s; got %d changes", waitTimeout, what, len(r.all()))
		}
	}
}

// waitFor waits until r has recorded want, and returns how many changes
// it recorded up to and including it.
func (r *recorder) waitFor(t *testing.T, want subscribe.Change) int {
	t.Helper()
	n := 0
	r.wait(t, want.Kind.String()+" "+want.Value, func(cs []subscribe.Change) bool {
		n = slices.Index(cs, want) + 1
		return n > 0
	}, 0, nil)
	return n
}

// flow waits until changes flow from pub to r: it publishes a probe on
// pub every 20 ms until r has one.
func (r *recorder) flow(t *testing.T, pub *natsbus.Bus) {
	t.Helper()
	probe := subscribe.Change{Kind: subscribe.Updated, Value: "x://probe"}
	pub.Publish(probe)
	r.wait(t, "a probe", func(cs []subscribe.Change) bool { return slices.Contains(cs, probe) },
		20*time.Millisecond, func() { pub.Publish(probe) })
}

func updated(uri string) subscribe.Change {
	return subscribe.Change{Kind: subscribe.Updated, Value: uri}
}

// Every kind of change published on one Bus reaches the others, in order,
// and never comes back to it; a message from another publisher, without
// "from", reaches every Bus.
func TestChangesReachOtherBuses(t *testing.T) {
	t.Parallel()
	ns := startNATS(t, -1)
	a, b, c := connect(t, ns.ClientURL(), nil), connect(t, ns.ClientURL(), nil), connect(t, ns.ClientURL(), nil)
	ra, rb, rc := listen(t, a), listen(t, b), listen(t, c)
	changes := []subscribe.Change{
		updated("db://users/42"),
		{Kind: subscribe.UpdatedPrefix, Value: "log://prod/"},
		{Kind: subscribe.UpdatedPrefix, Value: ""},
		{Kind: subscribe.UpdatedTemplate, Value: "db://users/{id}"},
		{Kind: subscribe.ListChanged},
		updated("x://quote\"back\\slash/é/\u2028"),
	}
	for _, ch := range changes {
		a.Publish(ch)
	}
	for _, r := range []*recorder{rb, rc} {
		r.waitFor(t, changes[len(changes)-1])
		assert.Equal(t, changes, r.all())
		r.mu.Lock()
		for _, sent := range r.sent {
			assert.WithinDuration(t, time.Now(), sent, waitTimeout, "a Bus says when it sent a change")
		}
		r.mu.Unlock()
	}

	nc, err := nats.Connect(ns.ClientURL())
	require.NoError(t, err)
	defer nc.Close()
	require.NoError(t, nc.Publish(natsbus.DefaultSubject, []byte(`{"changes":[{"uri":"x://a"}]}`)))
	for _, r := range []*recorder{ra, rb, rc} {
		r.waitFor(t, updated("x://a"))
	}
	assert.Equal(t, []subscribe.Change{updated("x://a")}, ra.all(), "a Bus never receives its own changes")
	assert.True(t, ra.sent[0].IsZero(), "a publisher that does not say when it sent gives no Sent")
	require.Eventually(t, func() bool { return a.Stats() == natsbus.Stats{Sent: uint64(len(changes)), Received: 1} },
		waitTimeout, time.Millisecond, "%+v", a.Stats())
	assert.Equal(t, natsbus.Stats{Received: uint64(len(changes)) + 1}, b.Stats())
}

// Buses on different subjects do not hear each other.
func TestSubjects(t *testing.T) {
	t.Parallel()
	ns := startNATS(t, -1)
	a := connect(t, ns.ClientURL(), &natsbus.Options{Subject: "svc.one"})
	b := connect(t, ns.ClientURL(), &natsbus.Options{Subject: "svc.two"})
	c := connect(t, ns.ClientURL(), &natsbus.Options{Subject: "svc.two"})
	ra, rc := listen(t, a), listen(t, c)
	a.Publish(updated("x://one")) // nobody else on svc.one
	b.Publish(updated("x://two"))
	rc.waitFor(t, updated("x://two"))
	// c is not a's: a's change never reaches it.
	assert.Equal(t, []subscribe.Change{updated("x://two")}, rc.all())
	assert.Empty(t, ra.all())
}

// A replica is a registry on its own Bus, served to an in-memory client
// subscribed to db://users/7 that records its updates.
type replica struct {
	reg *resource.Registry
	bus *natsbus.Bus
	n   *mcptest.Notifications
	lag *lagObserver
}

// A lagObserver is a resource.Observer that keeps the lags of the
// changes its registry receives from the bus.
type lagObserver struct {
	mu   sync.Mutex
	lags []time.Duration
}

func (o *lagObserver) StartCall(ctx context.Context, _ *resource.Call) context.Context { return ctx }
func (o *lagObserver) EndCall(context.Context, *resource.Call)                         {}
func (o *lagObserver) Event(e resource.Event) {
	if e.Kind == resource.EventBusReceived {
		o.mu.Lock()
		o.lags = append(o.lags, e.Lag)
		o.mu.Unlock()
	}
}

func (o *lagObserver) received() []time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.lags)
}

const userURI = "db://users/7"

func newReplica(t *testing.T, bus *natsbus.Bus, version string) *replica {
	t.Helper()
	lag := &lagObserver{}
	reg, err := resource.NewRegistry(&resource.Options{Logger: slog.New(slog.DiscardHandler), Observer: lag,
		Subscriptions: resource.SubscriptionOptions{Bus: bus, Window: 5 * time.Millisecond}})
	require.NoError(t, err)
	t.Cleanup(func() { reg.Close() })
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "db://users/{id}", Name: "user"},
		func(_ context.Context, req *mcp.ReadResourceRequest, _ resource.Vars) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "row"}}}, nil
		}))
	server, err := reg.NewServer(&mcp.Implementation{Name: "replica", Version: "v0"}, &mcp.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	acked := make(chan struct{}, 1)
	server.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			// The acknowledgment of the subscription's listen, not of the
			// one the client opens for list_changed as it connects. (A
			// middleware added after the registry's sees it as go-sdk
			// makes it: see resource.Registry.NewServer.)
			if p, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams); ok && len(p.Notifications.ResourceSubscriptions) > 0 {
				acked <- struct{}{}
			}
			return next(ctx, method, req)
		}
	})
	r := &replica{reg: reg, bus: bus, n: new(mcptest.Notifications), lag: lag}
	cs := mcptest.Connect(t, server, version, r.n.ClientOptions(nil))
	require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: userURI}))
	// go-sdk holds the subscription, and notifies of a change reported from
	// then on, once it has answered resources/subscribe, or at 2026-07-28
	// (whose Subscribe returns once the listen is sent) once it sends the
	// listen's acknowledgment. The registry counts it (SubscriptionStats)
	// before either, inside go-sdk's SubscribeHandler.
	if version >= "2026-07-28" {
		mcptest.Receive(t, acked, "acknowledgment of the subscriptions/listen")
	}
	return r
}

// updates returns how many updates of userURI r's client has received
// and not yet waited for.
func (r *replica) updates() int {
	n := 0
	for _, u := range r.n.Updated() {
		if u == userURI {
			n++
		}
	}
	return n
}

// Through real registries: a change reported on one replica reaches the
// subscribers of the other, in both eras, and the subscriber of the
// reporting replica once; the receiving registry's Observer hears of it
// with the bus's lag.
func TestRegistries(t *testing.T) {
	t.Parallel()
	ns := startNATS(t, -1)
	a := newReplica(t, connect(t, ns.ClientURL(), nil), "2025-11-25")
	b := newReplica(t, connect(t, ns.ClientURL(), nil), "2026-07-28")

	require.NoError(t, a.reg.Changed(userURI)) // once: WaitUpdated is given no change to repeat
	b.n.WaitUpdated(t, userURI, nil)
	a.n.WaitUpdated(t, userURI, nil)

	// One change back from b: when it has reached a, a's own message,
	// sent to the NATS server before it, has reached a too, and was
	// skipped.
	require.NoError(t, b.reg.Changed(userURI))
	a.n.WaitUpdated(t, userURI, nil)
	b.n.WaitUpdated(t, userURI, nil)
	assert.Zero(t, a.updates(), "a second update on the reporting replica")
	assert.Zero(t, b.updates(), "a second update on the reporting replica")
	assert.EqualValues(t, 1, a.bus.Stats().Received, "a replica receives its own change")
	assert.EqualValues(t, 1, b.bus.Stats().Received)
	// Each registry's Observer was told of the one change from the other,
	// with the lag the message's "sent" gives (one clock here).
	for _, r := range []*replica{a, b} {
		lags := r.lag.received()
		require.Len(t, lags, 1)
		assert.GreaterOrEqual(t, lags[0], time.Duration(0), "a lag the publisher dated")
		assert.Less(t, lags[0], waitTimeout)
	}
}

// With NATS down, Publish returns, the replica's own subscriber is still
// notified, and the outage is logged once; once NATS is back, that is
// logged once, changes flow again, and each listener, having lost its
// connection, is delivered a Resync.
func TestBrokerDown(t *testing.T) {
	t.Parallel()
	ns := startNATS(t, -1)
	var logs, otherLogs logBuffer
	a := newReplica(t, connect(t, ns.ClientURL(), &natsbus.Options{Logger: logs.logger()}), "2025-11-25")
	other := connect(t, ns.ClientURL(), &natsbus.Options{Logger: otherLogs.logger()})
	r := listen(t, other)
	require.NoError(t, a.reg.Changed(userURI))
	a.n.WaitUpdated(t, userURI, nil)
	r.waitFor(t, updated(userURI))

	ns = restart(t, ns, func() {
		require.Eventually(t, func() bool { return logs.lines(downLine) > 0 }, waitTimeout, time.Millisecond, logs.String())
		for range 100_000 {
			a.bus.Publish(updated("db://users/8")) // returns at once
		}
		require.NoError(t, a.reg.Changed(userURI))
		a.n.WaitUpdated(t, userURI, nil) // the replica's own subscriber
		assert.Zero(t, logs.lines(upLine))
	})
	require.Eventually(t, func() bool { return logs.lines(upLine) > 0 && otherLogs.lines(upLine) > 0 },
		waitTimeout, time.Millisecond, logs.String())
	// Changes flow again, after whatever of those held during the outage
	// arrived.
	r.flow(t, a.bus)
	for _, c := range r.updates() {
		require.Contains(t, []string{userURI, "db://users/8", "x://probe"}, c.Value)
	}
	r.wait(t, "a Resync", func(cs []subscribe.Change) bool { return slices.ContainsFunc(cs, isResync) }, 0, nil)
	require.Eventually(t, func() bool { n, _ := a.reg.ResyncStats(); return n > 0 }, waitTimeout, time.Millisecond,
		"the registry's bus delivers it a Resync")
	assert.EqualValues(t, r.resyncs(), other.Stats().Resyncs)
	assert.Equal(t, 1, logs.lines(downLine), "the outage is logged once\n%s", logs.String())
	assert.Equal(t, 1, logs.lines(upLine), "its end is logged once\n%s", logs.String())
	assert.Equal(t, 1, otherLogs.lines(downLine), otherLogs.String())
	assert.Equal(t, 1, otherLogs.lines(upLine), otherLogs.String())
	st := a.bus.Stats()
	t.Logf("publisher: %d changes sent (held by nats.go during the outage), %d dropped; the other replica got %d",
		st.Sent, st.Dropped, len(r.updates()))
}

// Connect succeeds while NATS is down, and the Bus connects once it is
// up; a listener started meanwhile is delivered a Resync then.
func TestConnectWhileDown(t *testing.T) {
	t.Parallel()
	ns := startNATS(t, -1)
	url := ns.ClientURL()
	port := ns.Addr().(*net.TCPAddr).Port
	ns.Shutdown()
	ns.WaitForShutdown()

	var logs logBuffer
	a := connect(t, url, &natsbus.Options{Logger: logs.logger()})
	// Subscribed once connected: what others publish until then is lost
	// to it.
	ra := listen(t, a)
	a.Publish(updated("x://early")) // returns at once
	require.Eventually(t, func() bool { return logs.lines(downLine) > 0 }, waitTimeout, time.Millisecond)
	startNATS(t, port)
	require.Eventually(t, func() bool { return logs.lines(upLine) > 0 }, waitTimeout, time.Millisecond, logs.String())
	r := listen(t, connect(t, url, nil))
	r.flow(t, a)
	ra.wait(t, "a Resync", func(cs []subscribe.Change) bool { return slices.ContainsFunc(cs, isResync) }, 0, nil)
	assert.Equal(t, 1, ra.resyncs())
	assert.Zero(t, r.resyncs(), "a listener started while connected missed nothing")
	assert.Equal(t, 1, logs.lines(downLine), logs.String())
	assert.Equal(t, 1, logs.lines(upLine), logs.String())
}

// A burst of changes goes on at a steady pace while NATS is stopped and
// started again: whatever of it arrives arrives once and in order, every
// change published once both buses are back arrives, and the listener is
// delivered a Resync.
func TestRestartMidBurst(t *testing.T) {
	t.Parallel()
	ns := startNATS(t, -1)
	var logsA, logsB logBuffer
	a := connect(t, ns.ClientURL(), &natsbus.Options{Logger: logsA.logger()})
	b := connect(t, ns.ClientURL(), &natsbus.Options{Logger: logsB.logger()})
	r := listen(t, b)

	var seq atomic.Int64 // the number of the next change published
	publish := func() int {
		i := int(seq.Add(1) - 1)
		a.Publish(updated("x://" + strconv.Itoa(i)))
		return i
	}
	stopBurst, burstDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(burstDone)
		for {
			select {
			case <-stopBurst:
				return
			default:
			}
			if publish()%10 == 9 {
				// A steady pace, not one batch, on the real clock:
				// NATS runs over real TCP, on which a synctest
				// bubble's goroutines never durably block.
				time.Sleep(time.Millisecond)
			}
		}
	}()
	r.wait(t, "the start of the burst", func(cs []subscribe.Change) bool { return len(cs) >= 100 }, 0, nil)
	restart(t, ns, func() {
		require.Eventually(t, func() bool { return logsA.lines(downLine) > 0 && logsB.lines(downLine) > 0 },
			waitTimeout, time.Millisecond)
	})
	require.Eventually(t, func() bool { return logsA.lines(upLine) > 0 && logsB.lines(upLine) > 0 },
		waitTimeout, time.Millisecond)
	close(stopBurst)
	<-burstDone
	burst := int(seq.Load())

	// b's subscription is back on the server once a change reaches it.
	r.wait(t, "a change after reconnection", func(cs []subscribe.Change) bool {
		cs = slices.DeleteFunc(cs, isResync)
		return len(cs) > 0 && cs[len(cs)-1].Value == "x://"+strconv.FormatInt(seq.Load()-1, 10)
	}, 20*time.Millisecond, func() { publish() })
	first := int(seq.Load())
	for i := range 500 {
		publish()
		if i%10 == 9 {
			time.Sleep(time.Millisecond) // the same pace, on the real clock
		}
	}
	last := int(seq.Load()) - 1
	r.waitFor(t, updated("x://"+strconv.Itoa(last)))

	var got []int
	for _, c := range r.updates() {
		i, err := strconv.Atoi(strings.TrimPrefix(c.Value, "x://"))
		require.NoError(t, err, c.Value)
		got = append(got, i)
	}
	require.True(t, slices.IsSorted(got), "in publish order")
	require.Equal(t, len(got), len(slices.Compact(slices.Clone(got))), "each change once")
	i := slices.Index(got, first)
	require.GreaterOrEqual(t, i, 0, "change %d, the first after reconnection, was lost", first)
	require.Len(t, got[i:], last-first+1, "every change after reconnection arrives")
	inBurst := 0
	for _, n := range got {
		if n < burst {
			inBurst++
		}
	}
	// b lost its connection: a Resync follows its reconnection (if it has
	// not already), and another if a's messages show a gap.
	r.wait(t, "a Resync", func(cs []subscribe.Change) bool { return slices.ContainsFunc(cs, isResync) }, 0, nil)
	st := a.Stats()
	t.Logf("burst across a broker restart: %d changes, %d delivered, %d lost, %d Resyncs; after reconnection: %d of %d delivered; publisher: %d sent, %d dropped",
		burst, inBurst, burst-inBurst, r.resyncs(), len(got[i:]), last-first+1, st.Sent, st.Dropped)
	assert.Equal(t, 1, logsA.lines(downLine), logsA.String())
	assert.Equal(t, 1, logsA.lines(upLine), logsA.String())
}

// stop waits for a deliver call under way, and no call follows it.
func TestStopWaitsForDeliver(t *testing.T) {
	t.Parallel()
	ns := startNATS(t, -1)
	a, b := connect(t, ns.ClientURL(), nil), connect(t, ns.ClientURL(), nil)
	entered, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	stop, err := b.Listen(func(subscribe.Change) {
		if calls.Add(1) == 1 {
			close(entered)
			<-release
		}
	})
	require.NoError(t, err)
	a.Publish(updated("x://1"))
	a.Publish(updated("x://2"))
	select {
	case <-entered:
	case <-time.After(waitTimeout):
		t.Fatal("deliver was not called")
	}
	stopped := make(chan struct{})
	go func() { stop(); close(stopped) }()
	select {
	case <-stopped:
		t.Fatal("stop returned while deliver was running")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	select {
	case <-stopped:
	case <-time.After(waitTimeout):
		t.Fatal("stop did not return")
	}
	r := listen(t, b) // a listener again, after stop
	a.Publish(updated("x://3"))
	r.waitFor(t, updated("x://3"))
	assert.EqualValues(t, 1, calls.Load(), "deliver called after stop")
}

// Bad options are refused; a Bus has one listener at a time, and none
// once closed; a malformed change is dropped.
func TestBadInput(t *testing.T) {
	t.Parallel()
	ns := startNATS(t, -1)
	for _, subject := range []string{"a..b", "a.*", "*", ">", "a.>", "a>b", "has space", "tab\there", ".a", "a.", "."} {
		b, err := natsbus.Connect(ns.ClientURL(), &natsbus.Options{Subject: subject})
		assert.Error(t, err, subject)
		assert.Nil(t, b)
	}
	for _, ok := range []string{"a", "svc.one", "Svc-1_x.changes"} {
		b, err := natsbus.Connect(ns.ClientURL(), &natsbus.Options{Subject: ok})
		if assert.NoError(t, err, ok) {
			b.Close()
		}
	}
	_, err := natsbus.Connect(ns.ClientURL(), &natsbus.Options{QueueSize: -1})
	assert.ErrorContains(t, err, "QueueSize")
	_, err = natsbus.Connect("", nil)
	assert.Error(t, err)
	_, err = natsbus.Connect("nats://bad host:4222", nil)
	assert.Error(t, err)
	_, err = natsbus.Connect(ns.ClientURL(), &natsbus.Options{NATS: []nats.Option{nats.RootCAs("testdata/no-such-file.pem")}})
	assert.Error(t, err, "an option nats.go refuses")

	var logs logBuffer
	b := connect(t, ns.ClientURL(), &natsbus.Options{Logger: logs.logger()})
	stop, err := b.Listen(func(subscribe.Change) {})
	require.NoError(t, err)
	_, err = b.Listen(func(subscribe.Change) {})
	assert.Error(t, err, "a second listener")
	stop()
	stop()
	stop, err = b.Listen(func(subscribe.Change) {})
	require.NoError(t, err, "a listener after stop")
	stop()

	b.Publish(subscribe.Change{})
	b.Publish(subscribe.Change{Kind: subscribe.ListChanged, Value: "x"})
	b.Publish(subscribe.Change{Kind: 9, Value: "x"})
	assert.EqualValues(t, 3, b.Stats().Dropped)
	assert.Equal(t, 1, logs.lines("malformed change"), logs.String())

	require.NoError(t, b.Close())
	require.NoError(t, b.Close())
	_, err = b.Listen(func(subscribe.Change) {})
	assert.Error(t, err, "Listen after Close")
	b.Publish(updated("x://late"))
	assert.EqualValues(t, 4, b.Stats().Dropped, "a change published after Close")
}

// Malformed messages are skipped and logged once, and delivery goes on.
func TestMalformedMessages(t *testing.T) {
	t.Parallel()
	ns := startNATS(t, -1)
	var logs logBuffer
	a := connect(t, ns.ClientURL(), &natsbus.Options{Logger: logs.logger()})
	r := listen(t, a)
	nc, err := nats.Connect(ns.ClientURL())
	require.NoError(t, err)
	defer nc.Close()
	msgs := []string{
		"", "{", `{"changes":[{"nope":1}]}`, `[]`, `{"changes":[{"list":false}]}`,
		`{"changes":[{"uri":"x://1"}]}`,
		`{"from":"x","changes":[{"uri":"x://2","prefix":"x://"}]}`, `{"changes":[]} {}`, `{"from":1,"changes":[]}`,
		`{"from":"someone","changes":[{"uri":"x://2"},{"list":true}]}`,
	}
	for _, m := range msgs {
		require.NoError(t, nc.Publish(natsbus.DefaultSubject, []byte(m)))
	}
	r.waitFor(t, subscribe.Change{Kind: subscribe.ListChanged})
	assert.Equal(t, []subscribe.Change{updated("x://1"), updated("x://2"), {Kind: subscribe.ListChanged}}, r.all())
	assert.Equal(t, 1, logs.lines("malformed message"), logs.String())
	assert.EqualValues(t, 8, a.Stats().Malformed)
	assert.EqualValues(t, 3, a.Stats().Received)
}

// A gap in a sender's numbers is told with a Resync after the changes of
// the message that shows it; numbers that go on, a sender first heard
// from above 1 (it began before the listener), numbers that go back (a
// sender restarted), and messages without "from" or "seq" are not.
func TestGaps(t *testing.T) {
	t.Parallel()
	ns := startNATS(t, -1)
	b := connect(t, ns.ClientURL(), nil)
	r := listen(t, b)
	nc, err := nats.Connect(ns.ClientURL())
	require.NoError(t, err)
	defer nc.Close()
	resync := subscribe.Change{Kind: subscribe.Resync}
	steps := []struct {
		msg  string
		want []subscribe.Change // Resyncs without their Value
	}{
		{`{"from":"r1","seq":1,"changes":[{"uri":"x://1"}]}`, []subscribe.Change{updated("x://1")}},
		{`{"from":"r1","seq":2,"changes":[{"uri":"x://2"}]}`, []subscribe.Change{updated("x://2")}},
		{`{"from":"r1","seq":4,"changes":[{"uri":"x://4"},{"list":true}]}`,
			[]subscribe.Change{updated("x://4"), {Kind: subscribe.ListChanged}, resync}},
		{`{"from":"r2","seq":7,"changes":[{"uri":"x://r2"}]}`, []subscribe.Change{updated("x://r2")}},
		{`{"from":"r1","seq":6,"changes":[]}`, []subscribe.Change{resync}}, // an empty message shows a gap too
		{`{"from":"r1","seq":1,"changes":[{"uri":"x://again"}]}`, []subscribe.Change{updated("x://again")}},
		{`{"from":"r1","seq":2,"changes":[{"uri":"x://again2"}]}`, []subscribe.Change{updated("x://again2")}},
		{`{"changes":[{"uri":"x://trigger"}]}`, []subscribe.Change{updated("x://trigger")}},
		{`{"from":"r3","changes":[{"uri":"x://r3"}]}`, []subscribe.Change{updated("x://r3")}},
		{`{"from":"r3","changes":[{"uri":"x://r3b"}]}`, []subscribe.Change{updated("x://r3b")}},
		{`{"seq":5,"changes":[{"uri":"x://anonymous"}]}`, []subscribe.Change{updated("x://anonymous")}},
		{`{"seq":9,"changes":[{"uri":"x://anonymous2"}]}`, []subscribe.Change{updated("x://anonymous2")}},
	}
	var want []subscribe.Change
	for _, s := range steps {
		require.NoError(t, nc.Publish(natsbus.DefaultSubject, []byte(s.msg)))
		want = append(want, s.want...)
	}
	r.wait(t, "every change", func(cs []subscribe.Change) bool { return len(cs) >= len(want) }, 0, nil)
	got := r.all()
	for i, c := range got {
		if c.Kind == subscribe.Resync {
			assert.NotEmpty(t, c.Value, "a Resync says why")
			got[i].Value = ""
		}
	}
	assert.Equal(t, want, got)
	assert.Contains(t, r.all()[4].Value, "r1")
	st := b.Stats()
	assert.EqualValues(t, 2, st.Resyncs)
	assert.EqualValues(t, len(want)-2, st.Received, "Resyncs are not changes received")
}

// A proxy forwards TCP connections to a NATS server, and can cut them:
// the connection of one Bus drops while the others' stay up.
type proxy struct {
	target, addr string

	mu    sync.Mutex
	ln    net.Listener
	conns []net.Conn
}

// startProxy returns a proxy to target, stopped when t ends.
func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &proxy{target: target, addr: ln.Addr().String(), ln: ln}
	go p.serve(ln)
	t.Cleanup(p.cut)
	return p
}

// url is the NATS URL of the proxy.
func (p *proxy) url() string { return "nats://" + p.addr }

func (p *proxy) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		go func() { io.Copy(s, c); s.Close() }()
		go func() { io.Copy(c, s); c.Close() }()
	}
}

// cut closes the connections and refuses new ones.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// restore accepts connections again, on the same address.
func (p *proxy) restore(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	require.NoError(t, err)
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go p.serve(ln)
}

// When the connection of one replica alone drops, the changes it
// publishes meanwhile wait in nats.go's reconnect buffer, and the other
// replicas, connected throughout, receive them once it is back, with no
// Resync. With the buffer disabled, they are dropped, and the others are
// delivered a Resync once it is back, though it publishes nothing more.
func TestPublisherOutage(t *testing.T) {
	t.Parallel()
	ns := startNATS(t, -1)
	for _, buffered := range []bool{true, false} {
		name := "buffered"
		opts := &natsbus.Options{}
		if !buffered {
			name = "unbuffered"
			opts.NATS = []nats.Option{nats.ReconnectBufSize(-1)}
		}
		t.Run(name, func(t *testing.T) {
			var logs logBuffer
			opts.Logger = logs.logger()
			opts.Subject = "outage." + name
			p := startProxy(t, ns.Addr().String())
			a := connect(t, p.url(), opts)
			b := connect(t, ns.ClientURL(), &natsbus.Options{Subject: opts.Subject})
			r := listen(t, b)
			a.Publish(updated("x://before"))
			r.waitFor(t, updated("x://before"))

			p.cut()
			require.Eventually(t, func() bool { return logs.lines(downLine) > 0 }, waitTimeout, time.Millisecond, logs.String())
			var held []subscribe.Change
			for i := range 5 {
				c := updated("x://held/" + strconv.Itoa(i))
				held = append(held, c)
				a.Publish(c)
			}
			// Handed to nats.go, before the connection is back: buffered,
			// or refused.
			require.Eventually(t, func() bool { st := a.Stats(); return st.Sent+st.Dropped == 1+uint64(len(held)) },
				waitTimeout, time.Millisecond)
			p.restore(t)
			require.Eventually(t, func() bool { return logs.lines(upLine) > 0 }, waitTimeout, time.Millisecond, logs.String())

			if buffered {
				r.waitFor(t, held[len(held)-1])
				assert.Equal(t, held, r.updates()[len(r.updates())-len(held):], "the changes held, in order")
				assert.Zero(t, r.resyncs(), "nothing missed")
				assert.Zero(t, a.Stats().Dropped)
			} else {
				r.wait(t, "a Resync", func(cs []subscribe.Change) bool { return slices.ContainsFunc(cs, isResync) }, 0, nil)
				for _, c := range held {
					assert.NotContains(t, r.all(), c)
				}
				assert.EqualValues(t, len(held), a.Stats().Dropped)
				assert.Contains(t, logs.String(), "lost="+strconv.Itoa(len(held)), "the end of the outage counts them")
			}
			assert.EqualValues(t, r.resyncs(), b.Stats().Resyncs)
		})
	}
}
