package subscribe_test

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpres/mcpres/subscribe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// changeLog collects what a listener is given.
type changeLog struct {
	mu  sync.Mutex
	got []subscribe.Change
}

func (r *changeLog) deliver(c subscribe.Change) {
	r.mu.Lock()
	r.got = append(r.got, c)
	r.mu.Unlock()
}

func (r *changeLog) take() []subscribe.Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.got
	r.got = nil
	return out
}

// A change reaches every other listening Bus of the Hub, in order, once,
// and never its publisher.
func TestHubDelivers(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var hub subscribe.Hub
		buses := []subscribe.Bus{hub.Bus(), hub.Bus(), hub.Bus()}
		recs := make([]*changeLog, len(buses))
		for i, b := range buses {
			recs[i] = &changeLog{}
			stop, err := b.Listen(recs[i].deliver)
			require.NoError(t, err)
			t.Cleanup(stop)
		}
		// The Hub stamps each change with when it was published; the
		// fake clock stands still here.
		a := subscribe.Change{Kind: subscribe.Updated, Value: "x://a", Sent: time.Now()}
		b := subscribe.Change{Kind: subscribe.ListChanged, Sent: time.Now()}
		buses[0].Publish(a)
		buses[0].Publish(b)
		synctest.Wait()
		assert.Empty(t, recs[0].take(), "never to the publisher")
		assert.Equal(t, []subscribe.Change{a, b}, recs[1].take())
		assert.Equal(t, []subscribe.Change{a, b}, recs[2].take())

		// A Bus not listening gets nothing, and loses what was published
		// meanwhile.
		quiet := hub.Bus()
		buses[1].Publish(a)
		synctest.Wait()
		r := &changeLog{}
		stop, err := quiet.Listen(r.deliver)
		require.NoError(t, err)
		defer stop()
		synctest.Wait()
		assert.Empty(t, r.take())
		assert.Equal(t, []subscribe.Change{a}, recs[0].take())
	})
}

// A Bus has one listener at a time; after stop, no call is made, and a
// new listener may start.
func TestHubListen(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var hub subscribe.Hub
		pub, sub := hub.Bus(), hub.Bus()
		r := &changeLog{}
		stop, err := sub.Listen(r.deliver)
		require.NoError(t, err)
		_, err = sub.Listen(r.deliver)
		assert.Error(t, err, "a second listener")
		stop()
		stop() // idempotent
		pub.Publish(subscribe.Change{Kind: subscribe.ListChanged})
		synctest.Wait()
		assert.Empty(t, r.take())
		stop, err = sub.Listen(r.deliver)
		require.NoError(t, err)
		defer stop()
		pub.Publish(subscribe.Change{Kind: subscribe.ListChanged})
		synctest.Wait()
		assert.Len(t, r.take(), 1)
	})
}

// A listener that does not keep up loses changes beyond QueueSize, and
// the Hub counts them, and tells it with a Resync once it has caught up;
// the publisher never waits.
func TestHubQueueSize(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		hub := subscribe.Hub{QueueSize: 3}
		pub, sub := hub.Bus(), hub.Bus()
		release := make(chan struct{})
		r := &changeLog{}
		first := true
		stop, err := sub.Listen(func(c subscribe.Change) {
			if first {
				first = false
				<-release // the listener is stuck on its first change
			}
			r.deliver(c)
		})
		require.NoError(t, err)
		defer stop()
		pub.Publish(subscribe.Change{Kind: subscribe.Updated, Value: "x://0"})
		synctest.Wait() // taken, and stuck
		for i := 1; i <= 5; i++ {
			pub.Publish(subscribe.Change{Kind: subscribe.Updated, Value: "x://" + string(rune('0'+i))})
		}
		assert.EqualValues(t, 2, hub.Dropped())
		close(release)
		synctest.Wait()
		var got []string
		for _, c := range r.take() {
			got = append(got, c.Kind.String()+" "+c.Value)
		}
		assert.Equal(t, []string{"uri x://0", "uri x://1", "uri x://2", "uri x://3",
			"resync the Hub's queue for this listener was full: changes were dropped"}, got)
		// Told once: what comes next is whole again.
		pub.Publish(subscribe.Change{Kind: subscribe.Updated, Value: "x://6"})
		synctest.Wait()
		assert.Len(t, r.take(), 1)
	})
}
