package pgbus_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mcpres/mcpres/pgbus"
	"github.com/mcpres/mcpres/subscribe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pgctl runs scripts/postgres.sh's stop/start script with cmd ("stop" or
// "start"), skipping t without it.
func pgctl(t *testing.T, cmd string) {
	t.Helper()
	ctl := os.Getenv("MCPRES_TEST_POSTGRES_CTL")
	if ctl == "" {
		t.Skip("MCPRES_TEST_POSTGRES_CTL not set: run through scripts/postgres.sh")
	}
	out, err := exec.Command(ctl, cmd).CombinedOutput()
	require.NoError(t, err, "%s %s: %s", ctl, cmd, out)
}

// nextBefore returns the next change, without its Sent, failing t if
// none has come by deadline.
func (in inbox) nextBefore(t *testing.T, deadline time.Time) subscribe.Change {
	t.Helper()
	select {
	case c := <-in:
		c.Sent = time.Time{}
		return c
	case <-time.After(time.Until(deadline)): // real Postgres, real clock: the deadline is the "within 5 s of Postgres being back"
		t.Fatal("no change arrived in time")
		panic("unreachable")
	}
}

func textLogger(l *logBuffer) *pgbus.Options {
	return &pgbus.Options{Logger: slog.New(slog.NewTextHandler(l, nil))}
}

// sentOne waits until each bus has had the answer to its one change
// sent: a listener may get a change before its sender has had the
// server's answer, which an outage that begins then would lose.
func sentOne(t *testing.T, buses ...*pgbus.Bus) {
	t.Helper()
	for _, b := range buses {
		require.Eventually(t, func() bool { return b.Stats().Sent == 1 }, waitTimeout, time.Millisecond)
	}
}

// waitLog waits for logs to hold s.
func waitLog(t *testing.T, logs *logBuffer, s string) {
	t.Helper()
	require.Eventually(t, func() bool { return logs.count(s) > 0 }, waitTimeout, time.Millisecond, "no %q in the log:\n%s", s, logs.String())
}

// When Postgres restarts under running replicas, each logs the outage as
// it begins; each listener is told to resync once it listens again,
// within seconds of Postgres being back; and the first change after
// that reaches the other replicas, from a replica that listens and from
// one that only publishes: none is lost to a sending connection that died
// with the old server.
//
// Not parallel: it restarts the server every test uses, while the
// parallel tests wait.
func TestPostgresRestart(t *testing.T) {
	var logsA, logsB logBuffer
	a, b := open(t, textLogger(&logsA)), open(t, textLogger(&logsB))
	c := open(t, nil) // publishes only: no listener of its own sees the outage
	ina, inb := listen(t, a), listen(t, b)
	// Every Bus has sent on its connection, and been heard.
	a.Publish(subscribe.Change{Kind: subscribe.Updated, Value: "x://a/before"})
	require.Equal(t, "x://a/before", inb.next(t).Value)
	b.Publish(subscribe.Change{Kind: subscribe.Updated, Value: "x://b/before"})
	require.Equal(t, "x://b/before", ina.next(t).Value)
	c.Publish(subscribe.Change{Kind: subscribe.Updated, Value: "x://c/before"})
	require.Equal(t, "x://c/before", ina.next(t).Value)
	require.Equal(t, "x://c/before", inb.next(t).Value)
	sentOne(t, a, b, c)

	pgctl(t, "stop")
	// The outage is logged as it begins, not at the next change.
	waitLog(t, &logsA, "broker unreachable")
	waitLog(t, &logsB, "broker unreachable")
	// A change made while Postgres is down is lost to the others, and
	// counted.
	a.Publish(subscribe.Change{Kind: subscribe.Updated, Value: "x://a/during"})
	require.Eventually(t, func() bool { return a.Stats().Dropped == 1 }, waitTimeout, time.Millisecond)
	pgctl(t, "start")
	back := time.Now()

	// (a) Each listener is told to resync once it listens again.
	for _, in := range []inbox{ina, inb} {
		r := in.nextBefore(t, back.Add(5*time.Second))
		require.Equal(t, subscribe.Resync, r.Kind, "%v", r)
		assert.Contains(t, r.Value, "connection to Postgres lost")
		t.Logf("resync delivered %v after Postgres was back", time.Since(back).Round(time.Millisecond))
	}
	// (b) The first change after that reaches the other replica. Its
	// listener also learns that a's change made during the outage was
	// lost, from a gap in a's numbers: at once if it listened again
	// before a did (a reveals the gap then), else with this change.
	published := time.Now()
	a.Publish(subscribe.Change{Kind: subscribe.Updated, Value: "x://a/after"})
	for got, gaps := false, 0; !got || gaps == 0; {
		c := inb.next(t)
		switch {
		case c == subscribe.Change{Kind: subscribe.Updated, Value: "x://a/after"} && !got:
			got = true
			t.Logf("first change delivered %v after Postgres was back, %v after it was published",
				time.Since(back).Round(time.Millisecond), time.Since(published).Round(time.Millisecond))
		case c.Kind == subscribe.Resync && gaps == 0:
			gaps++
			assert.Regexp(t, `^lost \d+ messages of replica `, c.Value)
		default:
			t.Fatalf("unexpected %v", c)
		}
	}
	b.Publish(subscribe.Change{Kind: subscribe.Updated, Value: "x://b/after"})
	assert.Equal(t, subscribe.Change{Kind: subscribe.Updated, Value: "x://b/after"}, ina.next(t))
	published = time.Now()
	c.Publish(subscribe.Change{Kind: subscribe.Updated, Value: "x://c/after"})
	assert.Equal(t, subscribe.Change{Kind: subscribe.Updated, Value: "x://c/after"}, ina.next(t))
	assert.Equal(t, subscribe.Change{Kind: subscribe.Updated, Value: "x://c/after"}, inb.next(t))
	t.Logf("first change of the Bus without a listener delivered %v after it was published", time.Since(published).Round(time.Millisecond))

	assert.Empty(t, ina)
	assert.Empty(t, inb)
	assert.EqualValues(t, 1, a.Stats().Dropped)
	assert.Zero(t, b.Stats().Dropped)
	assert.Zero(t, c.Stats().Dropped, "no change lost to a dead connection")
	assert.EqualValues(t, 1, a.Stats().Resyncs)
	assert.EqualValues(t, 2, b.Stats().Resyncs)
	// The outage's end is logged, with what was lost.
	waitLog(t, &logsA, "broker reachable again")
	waitLog(t, &logsB, "broker reachable again")
	for _, logs := range []*logBuffer{&logsA, &logsB} {
		assert.Equal(t, 1, logs.count("broker unreachable"), logs.String())
		assert.Equal(t, 1, logs.count("cannot listen"), logs.String())
		assert.Equal(t, 1, logs.count("listening again"), logs.String())
	}
	assert.Contains(t, logsA.String(), "lost=1")
	assert.Contains(t, logsB.String(), "lost=0")
}

// A sender's numbers that skip one tell the listener that messages were
// lost: it is delivered the message's changes, then a Resync saying why.
// Messages without "from" or "seq" (a trigger's, an older pgbus's) tell
// nothing, nor does a sender first heard past its first message.
func TestPostgresSequenceGap(t *testing.T) {
	t.Parallel()
	b := open(t, nil)
	in := listen(t, b)
	for _, p := range []string{
		`{"changes":[{"uri":"x://trigger"}]}`,
		`{"changes":[{"uri":"x://trigger"}]}`,
		`{"from":"old","changes":[{"uri":"x://old"}]}`,
		`{"from":"old","changes":[{"uri":"x://old"}]}`,
		`{"from":"late","seq":40,"changes":[{"uri":"x://40"}]}`,
		`{"from":"other","seq":1,"changes":[{"uri":"x://1"}]}`,
		`{"from":"other","seq":2,"changes":[{"uri":"x://2"}]}`,
		`{"from":"other","seq":4,"changes":[{"uri":"x://4a"},{"uri":"x://4b"}]}`,
		`{"from":"other","seq":5,"changes":[]}`,
		`{"from":"late","seq":41,"changes":[{"uri":"x://41"}]}`,
		`{"changes":[{"uri":"x://end"}]}`,
	} {
		notify(t, p)
	}
	for _, want := range []string{"x://trigger", "x://trigger", "x://old", "x://old", "x://40", "x://1", "x://2", "x://4a", "x://4b"} {
		assert.Equal(t, subscribe.Change{Kind: subscribe.Updated, Value: want}, in.next(t))
	}
	assert.Equal(t, subscribe.Change{Kind: subscribe.Resync, Value: "lost 1 messages of replica other (got number 4, expected 3)"}, in.next(t))
	for _, want := range []string{"x://41", "x://end"} {
		assert.Equal(t, subscribe.Change{Kind: subscribe.Updated, Value: want}, in.next(t))
	}
	assert.Empty(t, in)
	assert.EqualValues(t, 1, b.Stats().Resyncs)
}

// A Bus numbers its messages from 1, a chunked message as one: the
// number is the message's "seq", not the chunk header's count.
func TestPostgresMessagesNumbered(t *testing.T) {
	t.Parallel()
	a := open(t, nil)
	conn, err := pgx.Connect(t.Context(), dsn(t))
	require.NoError(t, err)
	defer conn.Close(context.Background())
	_, err = conn.Exec(t.Context(), "LISTEN "+pgx.Identifier{channel(t)}.Sanitize())
	require.NoError(t, err)
	// receive returns the next message, joining its chunks.
	receive := func() map[string]any {
		t.Helper()
		var msg []byte
		for {
			ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
			n, err := conn.WaitForNotification(ctx)
			cancel()
			require.NoError(t, err)
			if !strings.HasPrefix(n.Payload, "#") {
				msg = []byte(n.Payload)
				break
			}
			f := strings.SplitN(n.Payload[1:], ":", 4) // from, seq, i/n, part
			require.Len(t, f, 4)
			msg = append(msg, f[3]...)
			if i, n, _ := strings.Cut(f[2], "/"); i == n {
				break
			}
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal(msg, &m), "%.200s", msg)
		return m
	}
	for i, u := range []string{"x://small", "x://" + strings.Repeat("b", 20_000), "x://small"} {
		a.Publish(subscribe.Change{Kind: subscribe.Updated, Value: u})
		m := receive()
		assert.EqualValues(t, i+1, m["seq"])
		assert.NotEmpty(t, m["from"])
	}
}

// A proxy forwards TCP connections to the test database, until it is
// cut: as the network between one replica and Postgres would.
type proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	conns []net.Conn
}

// newProxy starts a proxy to the test database, closed at t's end.
func newProxy(t *testing.T) *proxy {
	u, err := url.Parse(dsn(t))
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &proxy{ln: ln, target: u.Host}
	t.Cleanup(func() {
		ln.Close()
		p.setCut(true)
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
	return p
}

// forward joins c to a new connection to the database, unless p is cut.
func (p *proxy) forward(c net.Conn) {
	d, err := net.Dial("tcp", p.target)
	p.mu.Lock()
	if err != nil || p.cut {
		p.mu.Unlock()
		c.Close()
		if d != nil {
			d.Close()
		}
		return
	}
	p.conns = append(p.conns, c, d)
	p.mu.Unlock()
	go func() { io.Copy(d, c); d.Close() }()
	io.Copy(c, d)
	c.Close()
}

// setCut cuts p, closing every connection it forwards and refusing new
// ones, or joins it again.
func (p *proxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for _, c := range p.conns {
			c.Close()
		}
		p.conns = nil
	}
}

// dsn returns t's DSN through p.
func (p *proxy) dsn(t *testing.T) string {
	u, err := url.Parse(appDSN(t))
	require.NoError(t, err)
	u.Host = p.ln.Addr().String()
	return u.String()
}

// When one replica alone loses Postgres (a network cut), the others hear
// nothing amiss, and the changes it makes meanwhile are lost. Once it is
// back it resyncs its own listener, and shows the others the gap in its
// numbers at once, so that they resync too without waiting for its next
// change, which may never come.
func TestPostgresPartition(t *testing.T) {
	t.Parallel()
	p := newProxy(t)
	var logsA logBuffer
	a, err := pgbus.Open(t.Context(), p.dsn(t), &pgbus.Options{Channel: channel(t), Logger: slog.New(slog.NewTextHandler(&logsA, nil))})
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	b := open(t, nil)
	ina, inb := listen(t, a), listen(t, b)
	a.Publish(subscribe.Change{Kind: subscribe.Updated, Value: "x://before"})
	require.Equal(t, "x://before", inb.next(t).Value)
	sentOne(t, a)

	p.setCut(true)
	waitLog(t, &logsA, "broker unreachable")
	a.Publish(subscribe.Change{Kind: subscribe.Updated, Value: "x://during"})
	require.Eventually(t, func() bool { return a.Stats().Dropped == 1 }, waitTimeout, time.Millisecond)
	p.setCut(false)

	assert.Equal(t, subscribe.Change{Kind: subscribe.Resync, Value: "connection to Postgres lost: changes published meanwhile may be missed"}, ina.next(t))
	r := inb.next(t)
	assert.Equal(t, subscribe.Resync, r.Kind, "%v", r)
	assert.Regexp(t, `^lost 2 messages of replica \w+ \(got number 4, expected 2\)$`, r.Value) // x://during's, and the number skipped for its loss
	assert.Empty(t, inb)
	assert.EqualValues(t, 1, b.Stats().Received)
	assert.EqualValues(t, 1, b.Stats().Resyncs)
	waitLog(t, &logsA, "broker reachable again")
	assert.Contains(t, logsA.String(), "lost=1")
}
