package subscribe_test

import (
	"testing"

	"github.com/mcpres/mcpres/subscribe"
	"github.com/stretchr/testify/assert"
)

func TestSequences(t *testing.T) {
	var s subscribe.Sequences
	check := func(from string, seq uint64) bool {
		lost, _ := s.Check(subscribe.Message{From: from, Seq: seq})
		return lost
	}
	// A sender first heard mid-sequence before any outage began before
	// the listener.
	assert.False(t, check("a", 40))
	assert.False(t, check("a", 41))
	assert.True(t, check("a", 43), "42 was lost")
	assert.False(t, check("a", 44))
	// Unnumbered messages tell nothing.
	assert.False(t, check("", 7))
	assert.False(t, check("trigger", 0))
	// A sender whose numbers go back restarted: followed from there.
	assert.False(t, check("a", 1))
	assert.False(t, check("a", 2))
	// After an outage, a new sender that is past its first message may
	// have sent what was lost; a known one is checked as before; one at
	// its first message lost nothing.
	s.Outage()
	assert.True(t, check("b", 5))
	assert.False(t, check("b", 6))
	assert.False(t, check("c", 1))
	assert.False(t, check("a", 3))
}

func TestSequencesForgetsOldSenders(t *testing.T) {
	var s subscribe.Sequences
	for i := range 5000 {
		s.Check(subscribe.Message{From: string(rune('a'+i%26)) + string(rune(i)), Seq: 1})
	}
	lost, why := s.Check(subscribe.Message{From: "x", Seq: 1})
	assert.False(t, lost, why)
}
