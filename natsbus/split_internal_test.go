package natsbus

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/subscribe"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lockedWriter is a log sink safe for concurrent use.
type lockedWriter = mcptest.Buffer

// send splits a batch into messages no larger than the server's maximum
// payload, in order, numbered from 1, and drops (and logs once) a change
// larger than a message by itself, skipping a number for it.
func TestSendSplitsBatches(t *testing.T) {
	const maxPayload = 1024
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true, MaxPayload: maxPayload})
	require.NoError(t, err)
	go ns.Start()
	require.True(t, ns.ReadyForConnections(5*time.Second))
	t.Cleanup(ns.Shutdown)

	var logs lockedWriter
	b, err := Connect(ns.ClientURL(), &Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	defer b.Close()
	require.EqualValues(t, maxPayload, b.nc.MaxPayload())

	nc, err := nats.Connect(ns.ClientURL())
	require.NoError(t, err)
	defer nc.Close()
	msgs := make(chan *nats.Msg, 1000)
	_, err = nc.ChanSubscribe(DefaultSubject, msgs)
	require.NoError(t, err)
	require.NoError(t, nc.Flush())

	var batch, want []subscribe.Change
	huge := subscribe.Change{Kind: subscribe.Updated, Value: "x://" + strings.Repeat("h", maxPayload)}
	for i := range 300 {
		c := subscribe.Change{Kind: subscribe.Updated, Value: fmt.Sprintf("x://split/%04d", i)}
		batch, want = append(batch, c), append(want, c)
		if i == 100 || i == 200 {
			batch = append(batch, huge)
		}
	}
	// Called directly: nothing was published, so the outbox's goroutine
	// does not call send meanwhile.
	require.NoError(t, b.send(batch))
	assert.EqualValues(t, 2, b.tooLarge.Load())
	assert.Equal(t, 1, strings.Count(logs.String(), "larger than the NATS maximum payload"), logs.String())

	var got []subscribe.Change
	var seqs []uint64
	n := 0
	for len(got) < len(want) {
		select {
		case msg := <-msgs:
			n++
			assert.LessOrEqual(t, len(msg.Data), maxPayload)
			m, err := subscribe.ParseMessage(msg.Data)
			require.NoError(t, err)
			assert.Equal(t, b.id, m.From)
			assert.Len(t, m.From, 16)
			assert.False(t, m.Sent.IsZero(), "a message says when it was sent")
			seqs = append(seqs, m.Seq)
			for _, c := range m.Changes {
				assert.Equal(t, m.Sent, c.Sent)
				c.Sent = time.Time{}
				got = append(got, c)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("got %d of %d changes", len(got), len(want))
		}
	}
	assert.Equal(t, want, got)
	assert.Greater(t, n, 1, "one batch, several messages")
	assert.EqualValues(t, 1, seqs[0], "numbered from 1")
	skipped := 0
	for i := 1; i < len(seqs); i++ {
		require.Greater(t, seqs[i], seqs[i-1], "numbers in sending order")
		skipped += int(seqs[i] - seqs[i-1] - 1)
	}
	assert.Equal(t, 2, skipped, "a number skipped for each change too large: %v", seqs)
	t.Logf("%d changes in %d messages of at most %d bytes", len(got), n, maxPayload)
}

// A batch that ends with a change too large for a message is followed by
// an empty message with the next number, so that the gap shows at once.
func TestSendRevealsLastGap(t *testing.T) {
	const maxPayload = 1024
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true, MaxPayload: maxPayload})
	require.NoError(t, err)
	go ns.Start()
	require.True(t, ns.ReadyForConnections(5*time.Second))
	t.Cleanup(ns.Shutdown)

	b, err := Connect(ns.ClientURL(), &Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer b.Close()
	nc, err := nats.Connect(ns.ClientURL())
	require.NoError(t, err)
	defer nc.Close()
	msgs := make(chan *nats.Msg, 10)
	_, err = nc.ChanSubscribe(DefaultSubject, msgs)
	require.NoError(t, err)
	require.NoError(t, nc.Flush())

	small := subscribe.Change{Kind: subscribe.Updated, Value: "x://small"}
	huge := subscribe.Change{Kind: subscribe.Updated, Value: "x://" + strings.Repeat("h", maxPayload)}
	// Called directly: nothing was published, so the outbox's goroutine
	// does not call send meanwhile.
	require.NoError(t, b.send([]subscribe.Change{small, huge}))
	var got []subscribe.Message
	for len(got) < 2 {
		select {
		case msg := <-msgs:
			m, err := subscribe.ParseMessage(msg.Data)
			require.NoError(t, err)
			m.Sent = time.Time{}
			for i := range m.Changes {
				m.Changes[i].Sent = time.Time{}
			}
			got = append(got, m)
		case <-time.After(mcptest.WaitTimeout): // real NATS: a bound on the wait for the message, not a time it takes
			t.Fatalf("got %d of 2 messages", len(got))
		}
	}
	assert.Equal(t, []subscribe.Message{
		{From: b.id, Seq: 1, Changes: []subscribe.Change{small}},
		{From: b.id, Seq: 3, Changes: []subscribe.Change{}},
	}, got)
}
