package outbox

// A Sequence numbers the messages a bus sends (subscribe.Message.Seq),
// so that its listeners can tell when some were lost (see
// subscribe.Sequences): one more for each message, whether its sending
// succeeds or not, and one more again after changes were dropped before
// they could be put in a message (a full queue), so that the loss shows
// as a gap. The zero value numbers from 1. It is used from the Outbox's
// sending goroutine, the one send is called from.
type Sequence struct {
	last    uint64
	dropped uint64 // Stats().Dropped at the last Next
}

// Next returns the number of the next message. dropped is the Outbox's
// count of changes dropped so far (Stats().Dropped): if it grew since
// the last call, a number is skipped.
func (s *Sequence) Next(dropped uint64) uint64 {
	if dropped != s.dropped {
		s.dropped = dropped
		s.last++
	}
	s.last++
	return s.last
}
