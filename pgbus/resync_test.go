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
