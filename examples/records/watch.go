package main

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
)

// A poller notices changes to the rows someone is subscribed to, whoever
// makes them (this server's update_row tool, another process, psql): every
// interval it reads the updated_at of the watched rows, a few batched
// queries, and reports the rows whose updated_at moved. It runs only while
// there are watched rows: OnWatch and OnUnwatch drive it.
type poller struct {
	st       *store
	interval time.Duration
	changed  func(t *table, id int64) // reports a changed row
	logger   *slog.Logger

	mu      sync.Mutex
	watched map[*table]map[int64]string // table → id → last updated_at seen ("" for none)
	cancel  context.CancelFunc          // stops the polling goroutine; nil when none runs
	done    chan struct{}               // closed when it has stopped
}

// newPoller returns a poller of st's rows that checks every interval and
// reports each row that changed, or went away, with changed.
func newPoller(st *store, interval time.Duration, changed func(t *table, id int64), logger *slog.Logger) *poller {
	return &poller{st: st, interval: interval, changed: changed, logger: logger, watched: map[*table]map[int64]string{}}
}

// parseRowURI splits db://<table>/<id> naming a row of a served table, as
// rowURI builds it (an id percent-encoded, %34%32 for 42, is not one).
func parseRowURI(uri string) (*table, int64, bool) {
	rest, ok := strings.CutPrefix(uri, "db://")
	if !ok {
		return nil, 0, false
	}
	name, idText, ok := strings.Cut(rest, "/")
	if !ok {
		return nil, 0, false
	}
	t, ok := tableByName(name)
	if !ok {
		return nil, 0, false
	}
	id, ok := parseID(idText)
	return t, id, ok
}

// watch starts watching uri; it is SubscriptionOptions.OnWatch.
func (p *poller) watch(uri string) {
	t, id, ok := parseRowURI(uri)
	if !ok {
		return // a schema: it does not change
	}
	// The baseline is read now, so that a change made just after the
	// subscription is not missed for want of a first poll. Without it, the
	// first poll reports the row as changed.
	at := ""
	if m, err := p.st.updatedAt(context.Background(), t, []int64{id}); err != nil {
		p.logger.Warn("reading a watched row", "table", t.Name, "id", id, "error", err)
	} else {
		at = m[id]
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	ids := p.watched[t]
	if ids == nil {
		ids = map[int64]string{}
		p.watched[t] = ids
	}
	ids[id] = at
	if p.cancel == nil {
		ctx, cancel := context.WithCancel(context.Background())
		p.cancel, p.done = cancel, make(chan struct{})
		go p.run(ctx, p.done)
	}
}

// unwatch stops watching uri; it is SubscriptionOptions.OnUnwatch. The
// polling stops with the last watched row.
func (p *poller) unwatch(uri string) {
	t, id, ok := parseRowURI(uri)
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.watched[t], id)
	if len(p.watched[t]) == 0 {
		delete(p.watched, t)
	}
	if len(p.watched) == 0 && p.cancel != nil {
		p.cancel()
		p.cancel = nil
	}
}

// saw records an updated_at this server wrote, so that the next poll does
// not report the change again.
func (p *poller) saw(t *table, id int64, at string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ids := p.watched[t]; ids != nil {
		if _, ok := ids[id]; ok {
			ids[id] = at
		}
	}
}

// Close stops polling.
func (p *poller) Close() {
	p.mu.Lock()
	cancel, done := p.cancel, p.done
	p.cancel = nil
	p.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if done != nil {
		<-done // the last goroutine started, stopped by unwatch or here
	}
}

func (p *poller) run(ctx context.Context, done chan struct{}) {
	defer close(done)
	tick := time.NewTicker(p.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		p.poll(ctx)
	}
}

// pollBatch bounds the ids of one query.
const pollBatch = 500

// poll reads the updated_at of every watched row and reports those that
// changed, or went away.
func (p *poller) poll(ctx context.Context) {
	p.mu.Lock()
	snapshot := map[*table][]int64{}
	for t, ids := range p.watched {
		for id := range ids {
			snapshot[t] = append(snapshot[t], id)
		}
	}
	p.mu.Unlock()

	for t, ids := range snapshot {
		slices.Sort(ids)
		for chunk := range slices.Chunk(ids, pollBatch) {
			now, err := p.st.updatedAt(ctx, t, chunk)
			if err != nil {
				if ctx.Err() == nil {
					p.logger.Warn("polling watched rows", "table", t.Name, "error", err)
				}
				return
			}
			var changed []int64
			p.mu.Lock()
			for _, id := range chunk {
				last, watched := p.watched[t][id]
				if !watched {
					continue // unwatched meanwhile
				}
				if at := now[id]; at != last {
					p.watched[t][id] = at
					changed = append(changed, id)
				}
			}
			p.mu.Unlock()
			for _, id := range changed {
				p.changed(t, id)
			}
		}
	}
}
