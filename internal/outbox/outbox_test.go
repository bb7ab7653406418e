package outbox_test

import (
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpres/mcpres/internal/outbox"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/subscribe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// logBuffer is a log sink safe for concurrent use.
type logBuffer struct{ mcptest.Buffer }

func (l *logBuffer) count(s string) int { return strings.Count(l.String(), s) }

// broker is a send function that records batches, fails while down, and
// can be held up.
type broker struct {
	mu      sync.Mutex
	down    bool
	batches [][]subscribe.Change
	hold    chan struct{}
}

func (b *broker) send(batch []subscribe.Change) error {
	if b.hold != nil {
		<-b.hold
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.down {
		return errors.New("connection refused")
	}
	b.batches = append(b.batches, append([]subscribe.Change(nil), batch...))
	return nil
}

func (b *broker) setDown(v bool) { b.mu.Lock(); b.down = v; b.mu.Unlock() }

func (b *broker) sent() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, x := range b.batches {
		n += len(x)
	}
	return n
}

// settle lets the sender take what was put: it looks for changes every
// millisecond while they keep coming.
func settle() {
	time.Sleep(2 * time.Millisecond)
	synctest.Wait()
}

func change(i int) subscribe.Change {
	return subscribe.Change{Kind: subscribe.Updated, Value: "x://" + string(rune('a'+i%26))}
}

// Changes are sent in order, in batches of at most MaxBatch, and counted.
func TestSendsInBatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &broker{hold: make(chan struct{})}
		o := outbox.New(b.send, outbox.Options{MaxBatch: 4, Logger: slog.New(slog.DiscardHandler)})
		o.Put(change(0))
		synctest.Wait() // the first send is held up; the rest queue behind it
		for i := 1; i < 10; i++ {
			o.Put(change(i))
		}
		close(b.hold)
		settle()
		require.Len(t, b.batches, 4)
		assert.Equal(t, []int{1, 4, 4, 1}, []int{len(b.batches[0]), len(b.batches[1]), len(b.batches[2]), len(b.batches[3])})
		var got []subscribe.Change
		for _, x := range b.batches {
			got = append(got, x...)
		}
		for i, c := range got {
			assert.Equal(t, change(i), c)
		}
		assert.Equal(t, outbox.Stats{Sent: 10}, o.Stats())
		o.Close()
	})
}

// A failing broker loses changes, and the outage is logged once when it
// begins and once when a send succeeds again, with the count lost.
func TestOutageLoggedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		b := &broker{}
		o := outbox.New(b.send, outbox.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Name: "testbus"})
		defer o.Close()
		b.setDown(true)
		for i := range 100 {
			o.Put(change(i))
			settle()
		}
		assert.Equal(t, 1, logs.count("testbus: broker unreachable"))
		assert.Equal(t, outbox.Stats{Dropped: 100}, o.Stats())
		b.setDown(false)
		o.Put(change(0))
		settle()
		assert.Equal(t, 1, logs.count("broker reachable again"))
		assert.Equal(t, 1, logs.count("lost=100"))
		assert.Equal(t, 1, b.sent())
	})
}

// An outage Down reports ends only with Up, not with a send that succeeds
// (a client library may buffer while it reconnects).
func TestDownUntilUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		b := &broker{}
		o := outbox.New(b.send, outbox.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		defer o.Close()
		o.Down(errors.New("disconnected"))
		o.Down(errors.New("still disconnected"))
		o.Put(change(0))
		settle()
		assert.Equal(t, 1, logs.count("unreachable"))
		assert.Equal(t, 0, logs.count("reachable again"))
		o.Up()
		o.Up()
		assert.Equal(t, 1, logs.count("reachable again"))
	})
}

// Put never waits: past Size, changes are dropped, counted, and logged
// once until the queue drains.
func TestFullQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logBuffer
		b := &broker{hold: make(chan struct{})}
		o := outbox.New(b.send, outbox.Options{Size: 5, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		o.Put(change(0))
		synctest.Wait() // held in send
		for i := 1; i <= 20; i++ {
			o.Put(change(i))
		}
		assert.Equal(t, outbox.Stats{Dropped: 15}, o.Stats())
		assert.Equal(t, 1, logs.count("too many changes"))
		close(b.hold)
		settle()
		assert.Equal(t, 6, b.sent())
		o.Close()
		o.Close()
		o.Put(change(0)) // after Close: dropped silently, no goroutine
		assert.Equal(t, 6, b.sent())
	})
}

// Close sends what is queued, once, and returns when the goroutine has
// ended.
func TestCloseFlushes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &broker{hold: make(chan struct{})}
		o := outbox.New(b.send, outbox.Options{Logger: slog.New(slog.DiscardHandler)})
		o.Put(change(0))
		synctest.Wait()
		o.Put(change(1))
		o.Put(change(2))
		go func() { close(b.hold) }()
		o.Close()
		assert.Equal(t, 3, b.sent())
	})
}

// After a quiet spell the sender is parked, and the next change wakes it
// at once; while changes keep coming it takes them every millisecond,
// so a Put does not wake it each time.
func TestPace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &broker{}
		o := outbox.New(b.send, outbox.Options{Logger: slog.New(slog.DiscardHandler)})
		defer o.Close()
		time.Sleep(time.Second) // quiet
		o.Put(change(0))
		synctest.Wait()
		assert.Equal(t, 1, b.sent(), "the first change after a quiet spell goes at once")
		for i := range 10 {
			o.Put(change(i)) // while active: taken at the next tick
		}
		synctest.Wait()
		assert.Equal(t, 1, b.sent())
		time.Sleep(time.Millisecond)
		synctest.Wait()
		assert.Equal(t, 11, b.sent())
		require.Len(t, b.batches, 2, "the ten came in one batch")
	})
}
