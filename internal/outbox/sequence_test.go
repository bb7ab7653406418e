package outbox_test

import (
	"testing"

	"github.com/mcpres/mcpres/internal/outbox"
	"github.com/stretchr/testify/assert"
)

func TestSequence(t *testing.T) {
	var s outbox.Sequence
	assert.EqualValues(t, 1, s.Next(0))
	assert.EqualValues(t, 2, s.Next(0))
	assert.EqualValues(t, 4, s.Next(3), "changes dropped: a number skipped")
	assert.EqualValues(t, 5, s.Next(3))
}
