// Package hooks makes a component's callbacks (a subscription manager's
// OnWatch and OnUnwatch, say) in the order they were caused, with no lock
// held, so that a callback may call back into the component.
package hooks

import (
	"slices"
	"sync"
)

// A Queue holds the calls a component has yet to make, guarded by the
// component's own mutex. The zero value is an empty queue.
type Queue[T any] struct {
	calls   []T
	running bool // a goroutine is making them
}

// Add queues c. The component's mutex must be held.
func (q *Queue[T]) Add(c T) { q.calls = append(q.calls, c) }

// UnlockAndRun releases mu, which must be held, and then, unless another
// goroutine is already doing so, calls run with each queued call in
// order, with mu released between and during calls. Calls that a call
// causes are queued and made by this loop after it, so calls never wait
// on each other. If run panics, the calls after it are left for the next
// UnlockAndRun.
func (q *Queue[T]) UnlockAndRun(mu *sync.Mutex, run func(T)) {
	if q.running || len(q.calls) == 0 {
		mu.Unlock()
		return
	}
	q.running = true
	i, finished := 0, false
	defer func() {
		if !finished { // a call panicked: the next caller makes the rest
			mu.Lock()
			q.calls = slices.Delete(q.calls, 0, i+1)
			q.running = false
			mu.Unlock()
		}
	}()
	var zero T
	for ; i < len(q.calls); i++ {
		c := q.calls[i]
		q.calls[i] = zero
		mu.Unlock()
		run(c)
		mu.Lock()
	}
	q.calls = q.calls[:0]
	q.running = false
	finished = true
	mu.Unlock()
}
