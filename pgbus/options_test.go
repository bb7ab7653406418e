package pgbus_test

import (
	"strings"
	"testing"

	"github.com/mcpres/mcpres/pgbus"
	"github.com/stretchr/testify/assert"
)

// Bad options and DSNs are refused before anything is opened.
func TestBadOptions(t *testing.T) {
	t.Parallel()
	for _, ch := range []string{"1abc", "has space", "dash-ed", `quo"te`, strings.Repeat("a", 64), "é"} {
		_, err := pgbus.Open(t.Context(), "postgres://127.0.0.1:1/x", &pgbus.Options{Channel: ch})
		assert.ErrorContains(t, err, "channel", ch)
	}
	_, err := pgbus.Open(t.Context(), "postgres://127.0.0.1:1/x", &pgbus.Options{QueueSize: -1})
	assert.ErrorContains(t, err, "QueueSize")
	_, err = pgbus.Open(t.Context(), "postgres://%zz", nil)
	assert.Error(t, err, "a malformed DSN")
	_, err = pgbus.Open(t.Context(), "postgres://127.0.0.1:1/x?connect_timeout=1", nil)
	assert.Error(t, err, "nothing listens on port 1")
}
