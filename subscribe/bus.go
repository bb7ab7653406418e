package subscribe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// A Bus carries changes between the replicas of a server: several
// processes, each with its own sessions and subscriptions, that serve the
// same resources. Each replica reports a change on its own bus as it
// notifies its own watchers; the bus brings it to the other replicas,
// which notify theirs.
//
// Delivery is at most once: a change may be lost (while the broker is
// unreachable, or when a replica cannot keep up), and is never delivered
// twice by the bus. That is what MCP's notifications need: an update
// notification tells a client to read the resource again, so a late one
// costs a read. A lost one must not go unnoticed: a Bus delivers a
// Resync to its listener whenever it may have lost a change meant for
// it (its connection dropped, a sender's Message.Seq skipped a number,
// a queue overflowed), and the registry then tells its watchers to read
// again everything they watch. A Bus must not deliver to a replica the
// changes that replica published itself: it has notified its own
// watchers already.
//
// Implementations: [Hub] for replicas in one process (and tests), and
// the nested modules github.com/mcpres/mcpres/natsbus (NATS) and
// github.com/mcpres/mcpres/pgbus (Postgres LISTEN/NOTIFY). Between
// processes, changes travel as a [Message] in its JSON form, which any
// other publisher (a database trigger, a program in another language) may
// send as well.
type Bus interface {
	// Publish sends c to the other replicas. It must return at once,
	// whatever the state of the broker: it is called by the code that
	// reports a change (resource.Registry.Changed), often while serving
	// a request. A change that cannot be sent is dropped, and the Bus
	// says so in its own log, once per outage rather than once per
	// change.
	Publish(c Change)
	// Listen arranges for deliver to be called with each change published
	// by the other replicas (or by another publisher), one call at a
	// time, until stop is called; stop waits for a call under way to
	// return. deliver must not block for long: the bus's other changes
	// wait for it. A Bus serves one listener: Listen returns an error if
	// it is called again before stop, or if the Bus is closed.
	Listen(deliver func(Change)) (stop func(), err error)
}

// A ChangeKind says what a Change reports.
type ChangeKind uint8

// The kinds of change. The zero ChangeKind is none of them.
const (
	// Updated reports that the resource at Change.Value, a URI, changed.
	Updated ChangeKind = iota + 1
	// UpdatedPrefix reports that every resource whose URI starts with
	// Change.Value changed; the empty prefix means every resource.
	UpdatedPrefix
	// UpdatedTemplate reports that every resource matched by the URI
	// template Change.Value changed.
	UpdatedTemplate
	// ListChanged reports that the list of resources changed; Value is
	// empty.
	ListChanged
	// Resync reports that this replica may have missed changes the
	// others published: a gap in a sender's sequence (see Sequences), or
	// its own connection to the broker dropped. Its watchers should read
	// again everything they watch. Value says why, for the log. A Bus
	// delivers it to its listener; it is never published, and has no
	// JSON form.
	Resync
)

// jsonKeys are the JSON names of the kinds, in ChangeKind order; Resync
// has a name for String, but no JSON form.
var jsonKeys = [...]string{Updated: "uri", UpdatedPrefix: "prefix", UpdatedTemplate: "template", ListChanged: "list", Resync: "resync"}

// String returns the kind's JSON name ("uri", "prefix", "template",
// "list"), "resync", or "ChangeKind(N)" for a value that is not a kind.
func (k ChangeKind) String() string {
	if k >= Updated && int(k) < len(jsonKeys) {
		return jsonKeys[k]
	}
	return fmt.Sprintf("ChangeKind(%d)", uint8(k))
}

// A Change is one change as replicas share it.
type Change struct {
	Kind  ChangeKind
	Value string // the URI, prefix or template; empty for ListChanged
	// Sent is when the publishing replica sent the change, as the bus
	// that delivers it says (from Message.Sent); the zero time if it
	// does not know. A receiver measures the bus's lag by it. Publish
	// ignores it, and the JSON form leaves it out.
	Sent time.Time
}

// ErrBadChange is wrapped by the errors of the methods that decode or
// encode a Change or a Message that is not well formed.
var ErrBadChange = errors.New("subscribe: malformed change")

// MarshalJSON returns c as a JSON object with one member named after its
// kind: {"uri":"db://users/42"}, {"prefix":"log://prod/"},
// {"template":"db://users/{id}"}, {"list":true}. It returns an error
// wrapping ErrBadChange for a Kind that is not one of the kinds, or a
// ListChanged with a Value.
func (c Change) MarshalJSON() ([]byte, error) {
	switch c.Kind {
	case Updated, UpdatedPrefix, UpdatedTemplate:
		v, err := json.Marshal(c.Value)
		if err != nil {
			return nil, err
		}
		return append(append([]byte(`{"`+jsonKeys[c.Kind]+`":`), v...), '}'), nil
	case ListChanged:
		if c.Value != "" {
			return nil, fmt.Errorf("%w: a list change has no value (%q)", ErrBadChange, c.Value)
		}
		return []byte(`{"list":true}`), nil
	}
	return nil, fmt.Errorf("%w: %v", ErrBadChange, c.Kind)
}

// UnmarshalJSON sets c from the JSON form MarshalJSON returns. It returns
// an error wrapping ErrBadChange, and leaves c as it was, for anything
// else: not an object, no member or more than one (a member given twice
// included), an unknown member, a value of the wrong type, "list" other
// than true.
func (c *Change) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return fmt.Errorf("%w: want an object such as {\"uri\":\"…\"}: %s", ErrBadChange, clip(b))
	}
	if len(m) != 1 || members(b) != 1 {
		return fmt.Errorf("%w: want exactly one of uri, prefix, template, list: %s", ErrBadChange, clip(b))
	}
	for key, raw := range m {
		for k := Updated; k <= ListChanged; k++ {
			if jsonKeys[k] != key {
				continue
			}
			if k == ListChanged {
				var yes bool
				if err := json.Unmarshal(raw, &yes); err != nil || !yes {
					return fmt.Errorf("%w: \"list\" must be true: %s", ErrBadChange, clip(b))
				}
				*c = Change{Kind: ListChanged}
				return nil
			}
			var v string
			if err := json.Unmarshal(raw, &v); err != nil {
				return fmt.Errorf("%w: %q must be a string: %s", ErrBadChange, key, clip(b))
			}
			*c = Change{Kind: k, Value: v}
			return nil
		}
		return fmt.Errorf("%w: unknown member %q (want uri, prefix, template or list)", ErrBadChange, key)
	}
	panic("unreachable")
}

// members counts the members of the JSON object b, duplicates included
// (a map keeps the last of {"uri":"a","uri":"b"}); -1 if b is not one.
func members(b []byte) int {
	d := json.NewDecoder(bytes.NewReader(b))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return -1
	}
	n := 0
	for d.More() {
		if _, err := d.Token(); err != nil { // the name
			return -1
		}
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			return -1
		}
		n++
	}
	return n
}

// A Message is what travels between processes: changes, and the replica
// they come from. Its JSON form is
//
//	{"from":"9f86d081884c7d65","seq":42,"sent":"2026-11-25T10:00:00.123456Z","changes":[{"uri":"db://users/42"},{"list":true}]}
//
// where "from" may be left out (or empty) by a publisher that is no
// replica, such as a database trigger: every replica then delivers the
// changes; and "seq" and "sent" may be left out too.
type Message struct {
	From string `json:"from,omitempty"`
	// Seq numbers the messages of one sender (From), from 1, one more
	// for each message it sends or fails to send: a listener that sees a
	// number skipped knows it lost a message (see Sequences). Zero, left
	// out of the JSON form, for a publisher that does not number its
	// messages, whose losses cannot be told.
	Seq     uint64   `json:"seq,omitempty"`
	Changes []Change `json:"changes"`
	// Sent is when the message was sent, in its JSON form an RFC 3339
	// time, "sent":"2026-11-25T10:00:00.123456Z"; left out when zero. A
	// publisher that sets it lets receivers measure the bus's lag; it is
	// optional, and Postgres's to_json(now()) gives the form.
	Sent time.Time `json:"sent,omitzero"`
}

// AppendJSON appends m's JSON form to b and returns the result. It
// returns b unchanged and an error wrapping ErrBadChange if a change is
// malformed (see Change.MarshalJSON).
func (m Message) AppendJSON(b []byte) ([]byte, error) {
	start := len(b)
	b = append(b, '{')
	if m.From != "" {
		from, _ := json.Marshal(m.From) // a string always marshals
		b = append(append(append(b, `"from":`...), from...), ',')
	}
	if m.Seq != 0 {
		b = strconv.AppendUint(append(b, `"seq":`...), m.Seq, 10)
		b = append(b, ',')
	}
	if !m.Sent.IsZero() {
		b = append(b, `"sent":"`...)
		b = m.Sent.UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(b, `",`...)
	}
	b = append(b, `"changes":[`...)
	for i, c := range m.Changes {
		if i > 0 {
			b = append(b, ',')
		}
		j, err := c.MarshalJSON()
		if err != nil {
			return b[:start], err
		}
		b = append(b, j...)
	}
	return append(b, ']', '}'), nil
}

// ParseMessage parses a Message's JSON form. Each change's Sent is set
// to the message's. It returns an error wrapping ErrBadChange for
// anything else: not JSON, unknown members, no "changes" array, a
// malformed change, a "sent" that is not an RFC 3339 time.
func ParseMessage(b []byte) (Message, error) {
	var m Message
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	var raw struct {
		From    string    `json:"from"`
		Seq     uint64    `json:"seq"`
		Changes []Change  `json:"changes"`
		Sent    time.Time `json:"sent"`
	}
	if err := d.Decode(&raw); err != nil {
		if errors.Is(err, ErrBadChange) {
			return m, err
		}
		return m, fmt.Errorf("%w: %v: %s", ErrBadChange, err, clip(b))
	}
	if d.More() {
		return m, fmt.Errorf("%w: data after the message: %s", ErrBadChange, clip(b))
	}
	if raw.Changes == nil {
		return m, fmt.Errorf("%w: no \"changes\" array: %s", ErrBadChange, clip(b))
	}
	if !raw.Sent.IsZero() {
		for i := range raw.Changes {
			raw.Changes[i].Sent = raw.Sent
		}
	}
	return Message{From: raw.From, Seq: raw.Seq, Changes: raw.Changes, Sent: raw.Sent}, nil
}

// clip returns b for an error message, cut to a readable length.
func clip(b []byte) string {
	const max = 120
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}
