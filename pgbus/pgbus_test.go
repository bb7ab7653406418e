package pgbus_test

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/pgbus"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/subscribe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitTimeout bounds every wait for a delivery: the tests check that it
// happens, not how fast.
const waitTimeout = 20 * time.Second

// dsn returns the test database's DSN, skipping t without one.
func dsn(t testing.TB) string {
	d := os.Getenv("MCPRES_TEST_POSTGRES_DSN")
	if d == "" {
		t.Skip("MCPRES_TEST_POSTGRES_DSN not set: run through scripts/postgres.sh")
	}
	return d
}

// channel returns a channel of t's own, so that tests run in parallel.
func channel(t testing.TB) string {
	return "pgbus_test_" + strings.ToLower(strings.NewReplacer("/", "_", "=", "_", "-", "_").Replace(t.Name()))
}

// logBuffer is a log sink safe for concurrent use.
type logBuffer struct{ mcptest.Buffer }

func (l *logBuffer) count(s string) int { return strings.Count(l.String(), s) }

func open(t testing.TB, opts *pgbus.Options) *pgbus.Bus {
	t.Helper()
	o := pgbus.Options{Channel: channel(t), Logger: slog.New(slog.DiscardHandler)}
	if opts != nil {
		if opts.Logger != nil {
			o.Logger = opts.Logger
		}
		o.QueueSize = opts.QueueSize
	}
	b, err := pgbus.Open(context.Background(), appDSN(t), &o)
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	return b
}

// appDSN is the test database's DSN, with t's channel as the connections'
// application_name, so that a test that cuts connections cuts its own
// only (tests run in parallel).
func appDSN(t testing.TB) string {
	sep := "?"
	if strings.Contains(dsn(t), "?") {
		sep = "&"
	}
	return dsn(t) + sep + "application_name=" + channel(t)
}

type inbox chan subscribe.Change

func listen(t *testing.T, b *pgbus.Bus) inbox {
	t.Helper()
	in := make(inbox, 100_000)
	stop, err := b.Listen(func(c subscribe.Change) { in <- c })
	require.NoError(t, err)
	t.Cleanup(stop)
	return in
}

// next returns the next change, without its Sent (see nextSent).
func (in inbox) next(t *testing.T) subscribe.Change {
	t.Helper()
	c, _ := in.nextSent(t)
	return c
}

// nextSent returns the next change without its Sent, and its Sent.
func (in inbox) nextSent(t *testing.T) (subscribe.Change, time.Time) {
	t.Helper()
	select {
	case c := <-in:
		sent := c.Sent
		c.Sent = time.Time{}
		return c, sent
	case <-time.After(waitTimeout):
		t.Fatal("no change arrived")
		panic("unreachable")
	}
}

// notify sends payload on t's channel from a plain connection, as a
// trigger or psql would.
func notify(t *testing.T, payload string) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn(t))
	require.NoError(t, err)
	defer conn.Close(context.Background())
	_, err = conn.Exec(t.Context(), "SELECT pg_notify($1, $2)", channel(t), payload)
	require.NoError(t, err)
}

// Every kind of change published on one Bus reaches the others, in order,
// and never comes back to it; a notification from elsewhere, without
// "from", reaches every Bus.
func TestPostgresChangesReachOtherBuses(t *testing.T) {
	t.Parallel()
	a, b, c := open(t, nil), open(t, nil), open(t, nil)
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
			got, sent := in.nextSent(t)
			assert.Equal(t, want, got)
			assert.WithinDuration(t, time.Now(), sent, waitTimeout, "a Bus says when it sent a change")
		}
	}
	notify(t, `{"changes":[{"uri":"x://trigger"}]}`)
	for _, in := range []inbox{ina, inb, inc} {
		got, sent := in.nextSent(t)
		assert.Equal(t, subscribe.Change{Kind: subscribe.Updated, Value: "x://trigger"}, got)
		assert.True(t, sent.IsZero(), "a trigger that does not say when it sent has no Sent")
	}
	assert.Empty(t, ina, "a Bus never receives its own changes")
	assert.EqualValues(t, 4, a.Stats().Sent)
	assert.EqualValues(t, 5, b.Stats().Received)
}

// Over NOTIFY's 8,000-byte limit: a batch of 2,000 changes arrives whole
// and in order, and single changes of 20 kB and 100 kB arrive intact.
func TestPostgresLargePayloads(t *testing.T) {
	t.Parallel()
	a, b := open(t, nil), open(t, nil)
	in := listen(t, b)
	var want []string
	for i := range 2000 {
		u := "x://" + strings.Repeat("p", 90) + "/" + strings.Repeat("0", 6-len(itoa(i))) + itoa(i)
		want = append(want, u)
		a.Publish(subscribe.Change{Kind: subscribe.Updated, Value: u})
	}
	big := []string{"x://" + strings.Repeat("é", 10_000), "x://" + strings.Repeat("b", 100_000)}
	for _, u := range big {
		a.Publish(subscribe.Change{Kind: subscribe.Updated, Value: u})
	}
	want = append(want, big...)
	for i, w := range want {
		got := in.next(t)
		require.Equal(t, w, got.Value, "change %d", i)
	}
	assert.EqualValues(t, len(want), a.Stats().Sent)
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}

// Malformed notifications are skipped and logged once; delivery goes on.
func TestPostgresMalformed(t *testing.T) {
	t.Parallel()
	var logs logBuffer
	a := open(t, &pgbus.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	in := listen(t, a)
	for _, bad := range []string{"", "{", `{"changes":[{"nope":1}]}`, "#x:1:2/2:orphan", "#bad"} {
		notify(t, bad)
	}
	notify(t, `{"changes":[{"uri":"x://fine"}]}`)
	assert.Equal(t, "x://fine", in.next(t).Value)
	assert.Equal(t, 1, logs.count("skipped a malformed notification"), logs.String())
	assert.EqualValues(t, 5, a.Stats().Malformed)
}

// A Bus has one listener at a time, and none once closed.
func TestPostgresListen(t *testing.T) {
	t.Parallel()
	b := open(t, nil)
	stop, err := b.Listen(func(subscribe.Change) {})
	require.NoError(t, err)
	_, err = b.Listen(func(subscribe.Change) {})
	assert.Error(t, err, "a second listener")
	stop()
	stop()
	stop, err = b.Listen(func(subscribe.Change) {})
	require.NoError(t, err)
	stop()
	require.NoError(t, b.Close())
	require.NoError(t, b.Close())
	_, err = b.Listen(func(subscribe.Change) {})
	assert.Error(t, err, "Listen after Close")
	b.Publish(subscribe.Change{Kind: subscribe.ListChanged}) // dropped, no panic
}

// Through real registries: a change reported on one replica reaches the
// other's subscriber, and the reporting replica's subscriber once.
func TestPostgresRegistries(t *testing.T) {
	t.Parallel()
	type replica struct {
		reg *resource.Registry
		n   *mcptest.Notifications
	}
	newReplica := func(version string) *replica {
		reg, err := resource.NewRegistry(&resource.Options{Logger: slog.New(slog.DiscardHandler),
			Subscriptions: resource.SubscriptionOptions{Bus: open(t, nil), Window: 5 * time.Millisecond}})
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
		r := &replica{reg: reg, n: new(mcptest.Notifications)}
		cs := mcptest.Connect(t, server, version, r.n.ClientOptions(nil))
		require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "db://users/7"}))
		// go-sdk holds the subscription once it has answered
		// resources/subscribe, or at 2026-07-28 (whose Subscribe returns
		// once the listen is sent) once it sends the listen's
		// acknowledgment; the registry counts it before either.
		if version >= "2026-07-28" {
			mcptest.Receive(t, acked, "acknowledgment of the subscriptions/listen")
		}
		return r
	}
	a, b := newReplica("2025-11-25"), newReplica("2026-07-28")
	// Each change once: WaitUpdated is given none to repeat.
	require.NoError(t, a.reg.Changed("db://users/7"))
	b.n.WaitUpdated(t, "db://users/7", nil)
	a.n.WaitUpdated(t, "db://users/7", nil)
	require.NoError(t, b.reg.Changed("db://users/7"))
	a.n.WaitUpdated(t, "db://users/7", nil)
	b.n.WaitUpdated(t, "db://users/7", nil)
	assert.Empty(t, a.n.Updated(), "no second update on the reporting replica")
	assert.Empty(t, b.n.Updated())
}

// When its connections are cut, a Bus logs the outage once, Publish keeps
// returning, and once the database answers again, changes flow again and
// that is logged once.
func TestPostgresConnectionLoss(t *testing.T) {
	t.Parallel()
	var logsA, logsB logBuffer
	a := open(t, &pgbus.Options{Logger: slog.New(slog.NewTextHandler(&logsA, nil))})
	b := open(t, &pgbus.Options{Logger: slog.New(slog.NewTextHandler(&logsB, nil))})
	in := listen(t, b)
	a.Publish(subscribe.Change{Kind: subscribe.Updated, Value: "x://before"})
	assert.Equal(t, "x://before", in.next(t).Value)

	// Cut the connections of t's buses (their application_name is t's
	// channel): a's sender and b's listener among them.
	conn, err := pgx.Connect(t.Context(), dsn(t))
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var killed int
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = $1`, channel(t)).Scan(&killed))
	require.GreaterOrEqual(t, killed, 2)

	for range 10_000 {
		a.Publish(subscribe.Change{Kind: subscribe.Updated, Value: "x://during"})
	}
	require.Eventually(t, func() bool { return logsB.count("listening again") == 1 }, waitTimeout, 10*time.Millisecond, logsB.String())
	assert.Equal(t, 1, logsB.count("cannot listen"), logsB.String())
	// Changes flow again: a last one arrives.
	require.Eventually(t, func() bool {
		a.Publish(subscribe.Change{Kind: subscribe.Updated, Value: "x://after"})
		for {
			select {
			case c := <-in:
				if c.Value == "x://after" {
					return true
				}
			case <-time.After(100 * time.Millisecond):
				return false
			}
		}
	}, waitTimeout, time.Millisecond)
	assert.LessOrEqual(t, logsA.count("broker unreachable"), 1, logsA.String())
	// The sender logs its recovery once its send has returned, which may
	// be after the listener has the change.
	assert.Eventually(t, func() bool {
		return logsA.count("broker unreachable") == logsA.count("broker reachable again")
	}, waitTimeout, time.Millisecond, logsA.String())
}
