package subscribe_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpres/mcpres/subscribe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every kind of change survives its JSON form, alone and in a Message.
func TestChangeJSONRoundTrip(t *testing.T) {
	t.Parallel()
	changes := []subscribe.Change{
		{Kind: subscribe.Updated, Value: "db://users/42"},
		{Kind: subscribe.Updated, Value: "x://\"quoted\"/\u00e9\n"},
		{Kind: subscribe.UpdatedPrefix, Value: ""},
		{Kind: subscribe.UpdatedPrefix, Value: "log://prod/"},
		{Kind: subscribe.UpdatedTemplate, Value: "db://users/{id}"},
		{Kind: subscribe.ListChanged},
	}
	for _, c := range changes {
		b, err := json.Marshal(c)
		require.NoError(t, err)
		var got subscribe.Change
		require.NoError(t, json.Unmarshal(b, &got), string(b))
		assert.Equal(t, c, got, string(b))
	}
	for _, from := range []string{"", "9f86d081884c7d65"} {
		b, err := subscribe.Message{From: from, Changes: changes}.AppendJSON([]byte("prefix:"))
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(string(b), "prefix:"))
		m, err := subscribe.ParseMessage(b[len("prefix:"):])
		require.NoError(t, err, string(b))
		assert.Equal(t, subscribe.Message{From: from, Changes: changes}, m)
	}
	b, err := subscribe.Message{From: "r1", Changes: changes[:1]}.AppendJSON(nil)
	require.NoError(t, err)
	assert.JSONEq(t, `{"from":"r1","changes":[{"uri":"db://users/42"}]}`, string(b))
}

// A Message's Sent survives its JSON form, to the nanosecond, and is
// given to each of its changes; a trigger's own timestamp, as Postgres
// writes it, is read too; a "sent" that is not a time is refused.
func TestMessageSent(t *testing.T) {
	t.Parallel()
	sent := time.Date(2026, 11, 25, 10, 0, 0, 123456789, time.UTC)
	changes := []subscribe.Change{{Kind: subscribe.Updated, Value: "db://users/42"}, {Kind: subscribe.ListChanged}}
	b, err := subscribe.Message{From: "r1", Sent: sent, Changes: changes}.AppendJSON(nil)
	require.NoError(t, err)
	assert.JSONEq(t, `{"from":"r1","sent":"2026-11-25T10:00:00.123456789Z","changes":[{"uri":"db://users/42"},{"list":true}]}`, string(b))
	m, err := subscribe.ParseMessage(b)
	require.NoError(t, err)
	assert.True(t, sent.Equal(m.Sent))
	for _, c := range m.Changes {
		assert.True(t, sent.Equal(c.Sent), "each change carries the message's Sent")
	}

	m, err = subscribe.ParseMessage([]byte(`{"sent":"2026-11-25T11:00:00.5+01:00","changes":[{"uri":"x://a"}]}`))
	require.NoError(t, err)
	assert.True(t, time.Date(2026, 11, 25, 10, 0, 0, 5e8, time.UTC).Equal(m.Changes[0].Sent))

	for _, in := range []string{`{"sent":1,"changes":[]}`, `{"sent":"yesterday","changes":[]}`} {
		_, err := subscribe.ParseMessage([]byte(in))
		assert.ErrorIs(t, err, subscribe.ErrBadChange, in)
	}
}

// What a database trigger sends is a Message.
func TestParseMessageFromOtherPublishers(t *testing.T) {
	t.Parallel()
	m, err := subscribe.ParseMessage([]byte(` {"changes": [{"uri": "db://users/42"}, {"list": true}]} `))
	require.NoError(t, err)
	assert.Equal(t, subscribe.Message{Changes: []subscribe.Change{
		{Kind: subscribe.Updated, Value: "db://users/42"}, {Kind: subscribe.ListChanged},
	}}, m)
}

// Anything else is refused with ErrBadChange, and leaves nothing set.
func TestMalformedChanges(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		``, `null`, `[]`, `"x"`, `{}`, `{"from":"a"}`, `{"changes":null}`, `{"changes":{}}`,
		`{"changes":[{}]}`, `{"changes":[null]}`, `{"changes":[{"uri":1}]}`,
		`{"changes":[{"uri":"a","prefix":"b"}]}`, `{"changes":[{"url":"a"}]}`,
		`{"changes":[{"uri":"a","uri":"b"}]}`,
		`{"changes":[{"list":false}]}`, `{"changes":[{"list":"yes"}]}`,
		`{"changes":[],"extra":1}`, `{"changes":[]} {}`, `{"from":1,"changes":[]}`,
	} {
		m, err := subscribe.ParseMessage([]byte(in))
		assert.ErrorIs(t, err, subscribe.ErrBadChange, "%s", in)
		assert.Zero(t, m, "%s", in)
	}
	for _, c := range []subscribe.Change{{}, {Kind: 9, Value: "x"}, {Kind: subscribe.ListChanged, Value: "x"}} {
		_, err := json.Marshal(c)
		assert.ErrorIs(t, err, subscribe.ErrBadChange, "%+v", c)
		b, err := subscribe.Message{Changes: []subscribe.Change{{Kind: subscribe.Updated, Value: "a"}, c}}.AppendJSON([]byte("keep"))
		assert.ErrorIs(t, err, subscribe.ErrBadChange)
		assert.Equal(t, "keep", string(b), "AppendJSON returns its input on error")
	}
	c := subscribe.Change{Kind: subscribe.Updated, Value: "kept"}
	assert.ErrorIs(t, json.Unmarshal([]byte(`{"list":1}`), &c), subscribe.ErrBadChange)
	assert.Equal(t, subscribe.Change{Kind: subscribe.Updated, Value: "kept"}, c)
	assert.Equal(t, "uri", subscribe.Updated.String())
	assert.Equal(t, "ChangeKind(0)", subscribe.ChangeKind(0).String())
}

// ParseMessage never panics, and what it accepts re-encodes to a message
// it parses the same.
func FuzzParseMessage(f *testing.F) {
	for _, s := range []string{
		`{"from":"a","changes":[{"uri":"db://users/42"},{"prefix":""},{"template":"x://{a}"},{"list":true}]}`,
		`{"changes":[]}`, `{"changes":[{"uri":"a","prefix":"b"}]}`, `{"changes":[{"list":false}]}`, `[`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := subscribe.ParseMessage(b)
		if err != nil {
			return
		}
		out, err := m.AppendJSON(nil)
		if err != nil {
			t.Fatalf("parsed %q, cannot encode it: %v", b, err)
		}
		again, err := subscribe.ParseMessage(out)
		if err != nil {
			t.Fatalf("re-encoded %q as %q, which does not parse: %v", b, out, err)
		}
		if len(again.Changes) != len(m.Changes) || again.From != m.From {
			t.Fatalf("%q → %q changed the message", b, out)
		}
		for i := range m.Changes {
			if again.Changes[i] != m.Changes[i] {
				t.Fatalf("%q → %q changed change %d", b, out, i)
			}
		}
	})
}
