package pgbus_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/mcpres/mcpres/subscribe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
