package subscribe

import (
	"fmt"
	"sync"
)

// Sequences follows, for one listener, the sequence numbers
// (Message.Seq) of the messages each sender publishes, and tells when
// messages were lost on the way: a number skipped. A Bus uses it to
// deliver a Resync to its listener. The zero value is ready to use; a
// Sequences must not be copied after first use.
//
// Besides gaps, a listener may have missed changes when its own
// connection to the broker dropped: the Bus calls Outage then, and
// delivers a Resync once it listens again. After an outage, a sender
// not heard from before whose first message is not its first (Seq above
// 1) may have sent what was lost, and Check says so; before any outage
// such a sender is one that began before the listener, and is not.
type Sequences struct {
	mu      sync.Mutex
	next    map[string]uint64 // by sender: the Seq expected next
	outages int               // Outage calls
}

// maxSenders bounds the senders a Sequences remembers: replicas that
// restart come back as new senders, and the old ones are never heard
// from again. Past it, the senders are forgotten, and the next message
// of each counts as a first.
const maxSenders = 4096

// Check records m, a message the listener received, and reports whether
// messages of its sender were lost before it, saying how in why. A
// message without From or Seq (a database trigger's, a publisher's that
// does not number its messages) tells nothing, and is never reported.
// A sender whose numbers go back (a replica that restarted with the same
// From) is followed from its new number on.
func (s *Sequences) Check(m Message) (lost bool, why string) {
	if m.From == "" || m.Seq == 0 {
		return false, ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	next, known := s.next[m.From]
	if !known && len(s.next) >= maxSenders {
		clear(s.next)
	}
	if s.next == nil {
		s.next = make(map[string]uint64)
	}
	s.next[m.From] = m.Seq + 1
	switch {
	case known && m.Seq > next:
		return true, fmt.Sprintf("lost %d messages of replica %s (got number %d, expected %d)", m.Seq-next, m.From, m.Seq, next)
	case !known && m.Seq > 1 && s.outages > 0:
		return true, fmt.Sprintf("first heard from replica %s after an outage at message number %d: cannot tell what was lost", m.From, m.Seq)
	}
	return false, ""
}

// Outage records that the listener's connection to the broker dropped,
// so that what the senders sent meanwhile may be lost.
func (s *Sequences) Outage() {
	s.mu.Lock()
	s.outages++
	s.mu.Unlock()
}
