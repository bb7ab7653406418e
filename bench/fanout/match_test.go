package fanout

// This file matches the notifications a stream received with the
// driver's changes: what arrived late, what was merged, what was lost.

import (
	"slices"
	"testing"
)

// A result is what the listeners' process reports for a run. Each
// (change, watcher) pair is one notification expected if every change
// were sent alone.
type result struct {
	Expected int64   // (change, watcher) pairs
	Received int64   // notifications received
	Lost     int64   // pairs no notification arrived for at or after the change
	Merged   int64   // pairs covered by a notification that covered an earlier change too (coalesced)
	Extra    int64   // notifications with no change left before them to cover
	WrongID  int64   // 2026-07-28 notifications with another listen's subscription ID
	Ended    int64   // streams that ended before the client hung up
	P50, P99 float64 // latency of the pairs covered, change to arrival, in ms
	Max      float64
}

// matchAll matches each stream's arrivals with the changes of each URI
// it watches (see match) and sums up.
func matchAll(cfg clientConfig, streams []*stream, changes []change) result {
	byURI := map[int][]int64{}
	for _, c := range changes { // in the order made, so each URI's times ascend
		byURI[c.N] = append(byURI[c.N], c.T)
	}
	var res result
	var lat []int64
	for s, st := range streams {
		if st == nil {
			continue
		}
		st.mu.Lock()
		arrivals := slices.Clone(st.arrivals)
		st.mu.Unlock()
		res.Received += int64(len(arrivals))
		for _, n := range watchedSet(cfg.watched(s), arrivals) {
			var at []int64
			for _, a := range arrivals {
				if int(a.n) == n {
					at = append(at, a.t)
				}
			}
			m := match(byURI[n], at)
			lat = append(lat, m.lat...)
			res.Expected += int64(len(byURI[n]))
			res.Lost += int64(m.lost)
			res.Merged += int64(m.merged)
			res.Extra += int64(m.extra)
		}
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		ms := func(ns int64) float64 { return float64(ns) / 1e6 }
		res.P50, res.P99, res.Max = ms(lat[len(lat)/2]), ms(lat[len(lat)*99/100]), ms(lat[len(lat)-1])
	}
	return res
}

// watchedSet returns the URIs w a stream watches and any other a
// notification to it named (whose arrivals then count as extra).
func watchedSet(w []int, arrivals []arrival) []int {
	for _, a := range arrivals {
		if !slices.Contains(w, int(a.n)) {
			w = append(w, int(a.n))
		}
	}
	return w
}

// A matching is what match found for one URI at one stream.
type matching struct {
	lat                 []int64 // arrival minus change, for each change covered
	lost, merged, extra int
}

// match matches the arrivals at one stream of one URI's notifications
// (times ascending) with the times of the URI's changes (ascending).
// Each arrival covers the changes not yet covered that were made at or
// before it, leaving one for each arrival after it: if as many arrived
// as were made, the k-th arrival covers the k-th change, which is exact
// for a server that sends every change in order. A change covered is
// late by its arrival's time minus its own; an arrival that covers more
// than one change merged the later ones (mcpres's window coalesces
// them); an arrival with no change left before it is extra; a change no
// arrival covered is lost.
func match(changes, arrivals []int64) matching {
	var m matching
	p := 0 // the first change not yet covered
	for j, t := range arrivals {
		q := p
		for q < len(changes) && changes[q] <= t {
			q++
		}
		q = min(q, len(changes)-(len(arrivals)-j-1))
		if q <= p {
			m.extra++
			continue
		}
		for _, c := range changes[p:q] {
			m.lat = append(m.lat, t-c)
		}
		m.merged += q - p - 1
		p = q
	}
	m.lost = len(changes) - p
	return m
}

func TestMatch(t *testing.T) {
	tests := []struct {
		name                string
		changes, arrivals   []int64
		lat                 []int64
		lost, merged, extra int
	}{
		{"one each, in time", []int64{0, 1000}, []int64{5, 1007}, []int64{5, 7}, 0, 0, 0},
		{"one each, the first late past the second change", []int64{0, 10}, []int64{15, 16}, []int64{15, 6}, 0, 0, 0},
		{"two merged in one", []int64{0, 10, 20}, []int64{5, 40}, []int64{5, 30, 20}, 0, 1, 0},
		{"the last lost", []int64{0, 10}, []int64{5}, []int64{5}, 1, 0, 0},
		{"none arrived", []int64{0, 10}, nil, nil, 2, 0, 0},
		{"an arrival before any change", []int64{10}, []int64{5, 15}, []int64{5}, 0, 0, 1},
		{"a duplicate: the later one covers", []int64{10}, []int64{15, 16}, []int64{6}, 0, 0, 1},
		{"no change, no arrival", nil, nil, nil, 0, 0, 0},
	}
	for _, tt := range tests {
		m := match(tt.changes, tt.arrivals)
		if !slices.Equal(m.lat, tt.lat) || m.lost != tt.lost || m.merged != tt.merged || m.extra != tt.extra {
			t.Errorf("%s: match(%v, %v) = %+v, want lat %v, lost %d, merged %d, extra %d",
				tt.name, tt.changes, tt.arrivals, m, tt.lat, tt.lost, tt.merged, tt.extra)
		}
	}
}

func TestParseUpdated(t *testing.T) {
	tests := []struct {
		name string
		line string
		n    int
		id   int64
		ok   bool
	}{
		{"listen", `data: {"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":42},"uri":"fan://r/17"}}` + "\n", 17, 42, true},
		{"session", `data: {"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"fan://r/0"}}` + "\n", 0, 0, true},
		{"acknowledgment", `data: {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{}}` + "\n", 0, 0, false},
		{"comment", ": keep-alive\n", 0, 0, false},
		{"event line", "event: message\n", 0, 0, false},
	}
	for _, tt := range tests {
		n, id, ok := parseUpdated([]byte(tt.line))
		if n != tt.n || id != tt.id || ok != tt.ok {
			t.Errorf("%s: parseUpdated = %d, %d, %v, want %d, %d, %v", tt.name, n, id, ok, tt.n, tt.id, tt.ok)
		}
	}
}
