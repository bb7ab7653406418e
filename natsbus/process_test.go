package natsbus_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpres/mcpres/natsbus"
	"github.com/mcpres/mcpres/natsbus/natstest"
	"github.com/mcpres/mcpres/subscribe"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A published change, and when Publish was called.
type published struct {
	change subscribe.Change
	at     time.Time
}

// snapshot returns the changes recorded so far, Resyncs included, and
// when each was delivered.
func (r *recorder) snapshot() ([]subscribe.Change, []time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.changes), slices.Clone(r.at)
}

// The NATS server, a process of its own, is killed and started again on
// its port while three replicas publish, during the outage and after.
// No listener is left stale: every change another replica published
// reaches it, or a Resync is delivered to it after the change was
// published; each listener is delivered a Resync within 5 s of the
// server's return; once all are back, changes reach every replica.
func TestServerProcessRestart(t *testing.T) {
	port := natstest.FreePort(t)
	url := "nats://127.0.0.1:" + strconv.Itoa(port)
	server := natstest.Start(t, port)

	const replicas, perOutage = 3, 5
	buses := make([]*natsbus.Bus, replicas)
	recs := make([]*recorder, replicas)
	logs := make([]*logBuffer, replicas)
	for i := range replicas {
		logs[i] = new(logBuffer)
		buses[i] = connect(t, url, &natsbus.Options{Logger: logs[i].logger()})
		recs[i] = listen(t, buses[i])
	}
	var mu sync.Mutex
	sent := make([][]published, replicas) // by publisher
	publish := func(i int, c subscribe.Change) {
		mu.Lock()
		sent[i] = append(sent[i], published{c, time.Now()})
		mu.Unlock()
		buses[i].Publish(c)
	}
	// waitEverywhere waits until every replica has a change named what
	// (before, after, final) of every other.
	waitEverywhere := func(what string) {
		t.Helper()
		for j, r := range recs {
			r.wait(t, what+" changes of the others", func(cs []subscribe.Change) bool {
				for i := range replicas {
					prefix := fmt.Sprintf("x://%d/%s", i, what)
					if i != j && !slices.ContainsFunc(cs, func(c subscribe.Change) bool { return strings.HasPrefix(c.Value, prefix) }) {
						return false
					}
				}
				return true
			}, 0, nil)
		}
	}
	for i := range replicas {
		publish(i, updated(fmt.Sprintf("x://%d/before", i)))
	}
	waitEverywhere("before")

	server.Kill()
	for i := range replicas {
		require.Eventually(t, func() bool { return logs[i].lines(downLine) > 0 }, waitTimeout, time.Millisecond, logs[i].String())
	}
	for k := range perOutage {
		for i := range replicas {
			publish(i, updated(fmt.Sprintf("x://%d/outage/%d", i, k)))
		}
	}
	server = natstest.Start(t, port)
	back := time.Now()

	// Changes every 10 ms from each replica, until each has reached every
	// other: the time that takes is measured, not asserted.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range replicas {
		wg.Go(func() {
			for k := 0; ; k++ {
				publish(i, updated(fmt.Sprintf("x://%d/after/%d", i, k)))
				select {
				case <-stop:
					return
				case <-time.After(10 * time.Millisecond): // real clock (a NATS server process): a pace, not an assertion
				}
			}
		})
	}
	waitEverywhere("after")
	everywhere := time.Since(back)
	for _, r := range recs {
		r.wait(t, "a Resync", func(cs []subscribe.Change) bool { return slices.ContainsFunc(cs, isResync) }, 0, nil)
	}
	close(stop)
	wg.Wait()
	// Every replica is back, subscribed and resynced: a change reaches
	// every other at once.
	for i := range replicas {
		publish(i, updated(fmt.Sprintf("x://%d/final", i)))
	}
	waitEverywhere("final")

	mu.Lock()
	defer mu.Unlock()
	var report []string
	for j, r := range recs {
		changes, at := r.snapshot()
		firstResync := at[slices.IndexFunc(changes, isResync)]
		assert.Less(t, firstResync.Sub(back), 5*time.Second, "replica %d: a Resync within 5 s of the server's return", j)
		lastResync := firstResync
		for k, c := range changes {
			if isResync(c) {
				lastResync = at[k]
			}
		}
		outage := 0
		for i := range replicas {
			if i == j {
				continue
			}
			for _, p := range sent[i] {
				got := slices.Contains(changes, p.change)
				if got && strings.HasPrefix(p.change.Value, fmt.Sprintf("x://%d/outage/", i)) {
					outage++
				}
				if !got && !lastResync.After(p.at) {
					t.Errorf("replica %d is stale: it never got %s, published %v after the server's return, and no Resync followed it (last at %v)",
						j, p.change.Value, p.at.Sub(back), lastResync.Sub(back))
				}
			}
		}
		report = append(report, fmt.Sprintf("replica %d: %d/%d outage changes, %d Resyncs, the first %v after the server's return",
			j, outage, (replicas-1)*perOutage, buses[j].Stats().Resyncs, firstResync.Sub(back).Round(time.Millisecond)))
	}
	t.Logf("changes from every replica reached every other %v after the server's return", everywhere.Round(time.Millisecond))
	for _, line := range report {
		t.Log(line)
	}
}
