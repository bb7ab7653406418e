package subscribe_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/mcpres/mcpres/subscribe"
)

// The benchmarks measure what a change costs the caller of Changed in the
// steady state of a burst (the window's timer is pending, so Changed only
// records the URI), and what the bookkeeping of many subscriptions costs
// in heap.
//
//	go test -run '^$' -bench . -benchmem -count 5 ./subscribe/

// benchManager returns a Manager whose window outlasts the benchmark and
// whose Deliver does nothing.
func benchManager(b *testing.B) *subscribe.Manager[int] {
	m, err := subscribe.New[int](&subscribe.Options{
		MaxPerSession: subscribe.NoLimit,
		Window:        time.Hour,
		Deliver:       func(string) {},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(m.Close)
	return m
}

func benchURIs(n int) []string {
	uris := make([]string, n)
	for i := range uris {
		uris[i] = fmt.Sprintf("bench://items/%06d", i)
	}
	return uris
}

// BenchmarkChanged reports one change to a watched URI: with 10,000
// sessions watching one URI, with 10,000 distinct watched URIs (one
// session each) changed in turn, and for a URI no one watches.
func BenchmarkChanged(b *testing.B) {
	const n = 10_000
	b.Run("subscribers=10000/oneURI", func(b *testing.B) {
		m := benchManager(b)
		const uri = "bench://hot"
		for s := range n {
			if err := m.Subscribe(s, uri); err != nil {
				b.Fatal(err)
			}
		}
		m.Changed(uri) // the window opens: the timer is pending
		b.ReportAllocs()
		for b.Loop() {
			m.Changed(uri)
		}
	})
	b.Run("subscribers=10000/oneURI/parallel", func(b *testing.B) {
		m := benchManager(b)
		const uri = "bench://hot"
		for s := range n {
			if err := m.Subscribe(s, uri); err != nil {
				b.Fatal(err)
			}
		}
		m.Changed(uri)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				m.Changed(uri)
			}
		})
	})
	b.Run("uris=10000", func(b *testing.B) {
		m := benchManager(b)
		uris := benchURIs(n)
		for s, uri := range uris {
			if err := m.Subscribe(s, uri); err != nil {
				b.Fatal(err)
			}
			m.Changed(uri) // every URI is pending
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			m.Changed(uris[i])
			if i++; i == n {
				i = 0
			}
		}
	})
	b.Run("unwatched", func(b *testing.B) {
		m := benchManager(b)
		for s, uri := range benchURIs(n) {
			if err := m.Subscribe(s, uri); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		for b.Loop() {
			m.Changed("bench://nobody")
		}
	})
}

// BenchmarkChangedPrefix reports a change to a subtree holding 100 of
// 10,000 watched URIs: ChangedPrefix looks at every watched URI.
func BenchmarkChangedPrefix(b *testing.B) {
	m := benchManager(b)
	for s, uri := range benchURIs(10_000) {
		if err := m.Subscribe(s, uri); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		m.ChangedPrefix("bench://items/0001") // 000100 to 000199
	}
}

// BenchmarkBookkeeping subscribes 100,000 (session, URI) pairs into a new
// Manager and reports the heap they hold as B/subscription (live heap
// after a GC, before and after; the URI strings are the caller's and not
// counted), and the time as ns/subscription, for several shapes: many
// sessions watching a few URIs each, one URI each (of 1,000, or each its
// own), and few sessions watching many.
func BenchmarkBookkeeping(b *testing.B) {
	const total = 100_000
	for _, shape := range []struct{ sessions, perSession, uris int }{
		{10_000, 10, 1_000},
		{100_000, 1, 1_000},
		{100_000, 1, 100_000},
		{100, 1_000, 1_000},
		{100, 1_000, 100_000},
	} {
		name := fmt.Sprintf("sessions=%d/each=%d/uris=%d", shape.sessions, shape.perSession, shape.uris)
		b.Run(name, func(b *testing.B) {
			// Session s watches the perSession URIs from s*perSession on
			// (mod the URI count), so that every URI has as many watchers
			// as every other.
			uris := benchURIs(shape.uris)
			var before, after runtime.MemStats
			var perSub float64
			for b.Loop() {
				b.StopTimer()
				runtime.GC()
				runtime.ReadMemStats(&before)
				b.StartTimer()
				m, err := subscribe.New[int](&subscribe.Options{MaxPerSession: subscribe.NoLimit})
				if err != nil {
					b.Fatal(err)
				}
				for s := range shape.sessions {
					for j := range shape.perSession {
						if err := m.Subscribe(s, uris[(s*shape.perSession+j)%len(uris)]); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.StopTimer()
				runtime.GC()
				runtime.ReadMemStats(&after)
				if subs, sessions, watched := m.Stats(); subs != total || sessions != shape.sessions || watched != shape.uris {
					b.Fatalf("Stats = %d, %d, %d; want %d, %d, %d", subs, sessions, watched, total, shape.sessions, shape.uris)
				}
				perSub = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / total
				runtime.KeepAlive(m)
				m.Close()
				b.StartTimer()
			}
			b.ReportMetric(perSub, "B/subscription")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/total, "ns/subscription")
		})
	}
}
