package delivery

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Step 1, report: Changed reports that the resource at uri changed, and
// whether any session watches it. It returns at once; a watched URI goes
// on to its window (step 2, internal/window). It does nothing after Close.
func (d *Delivery[G]) Changed(uri string) (watched bool) {
	d.mu.Lock()
	coalesced := false
	if _, watched = d.uris.ids[uri]; watched {
		var now time.Time
		coalesced = d.windows.Changed(uri, &now)
	}
	d.mu.Unlock()
	if coalesced && d.opts.Coalesced != nil {
		d.opts.Coalesced(uri)
	}
	return watched
}

// ChangedWhere reports that every watched URI that match accepts changed,
// as one change: the windows it opens all end at once. match is called
// once per watched URI, with d's lock held: it must not call d. A nil
// match accepts nothing.
func (d *Delivery[G]) ChangedWhere(match func(uri string) bool) {
	if match == nil {
		return
	}
	var coalesced []string // told with no lock held
	d.mu.Lock()
	var now time.Time
	for uri := range d.uris.ids {
		if match(uri) && d.windows.Changed(uri, &now) && d.opts.Coalesced != nil {
			coalesced = append(coalesced, uri)
		}
	}
	d.mu.Unlock()
	for _, uri := range coalesced {
		d.opts.Coalesced(uri)
	}
}

// ChangedPrefix is ChangedWhere for the watched URIs that start with
// prefix.
func (d *Delivery[G]) ChangedPrefix(prefix string) {
	d.ChangedWhere(func(uri string) bool { return strings.HasPrefix(uri, prefix) })
}

// Step 3, fan out: deliver is the windows' delivery of a due URI, still
// watched (step 2 is internal/window). go-sdk's Server.ResourceUpdated
// sends it to exactly its sessions subscribed to uri, legacy and
// 2026-07-28 alike (go-sdk behaviour 6 of resource/gosdk.go), each through
// the registry's sending middleware, which queues it (step 4, send.go).
// The sessions of other servers (Session) that watch uri are queued here,
// from their records.
func (d *Delivery[G]) deliver(uri string) {
	d.mu.Lock()
	d.missedWhilePending(uri)
	servers := slices.Clone(d.servers)
	coalesced := 0
	if len(d.watchers) > 0 {
		coalesced = d.queueOthers(uri)
	}
	d.mu.Unlock()
	for range coalesced {
		d.opts.Coalesced(uri)
	}
	if len(servers) == 0 {
		return
	}
	d.gather(func() {
		for _, s := range servers {
			// go-sdk sends with a context of its own (Background, 10 s),
			// not this one; the sending middleware queues each session's
			// send.
			s.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri})
		}
	})
}

// queueOthers queues a resources/updated of uri for each session of
// another server that watches it (step 4), and returns how many took the
// place of one waiting, for Options.Coalesced. d.mu must be held.
func (d *Delivery[G]) queueOthers(uri string) (coalesced int) {
	id, ok := d.uris.id(uri)
	if !ok || d.ctx.Err() != nil {
		return 0
	}
	ready := make([]sendJob[G], 0, len(d.watchers[id]))
	for rec, s := range d.watchers[id] {
		q := queued[G]{method: protocol.NotificationResourceUpdated, uri: uri}
		q.grant, q.granted = d.grant(rec, uri)
		rec.sendMu.Lock()
		replaced, start := d.push(rec, q)
		rec.sendMu.Unlock()
		if replaced && d.opts.Coalesced != nil {
			coalesced++
		}
		if start {
			ready = append(ready, sendJob[G]{Key{Other: s}, rec})
		}
	}
	d.dispatch(ready)
	return coalesced
}

// ListChanged reports that the resource list changed: after
// Options.ListChangedDelay, gathering every change meanwhile, each mounted
// server is told once (Options.Announce), and go-sdk sends list_changed
// to its sessions through the sending middleware (step 4); so is each
// function attached for another server (Attach). It does nothing after
// Close, or before a server is mounted or attached.
func (d *Delivery[G]) ListChanged() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || d.listTimer != nil || len(d.servers) == 0 && len(d.attached) == 0 {
		return
	}
	d.listTimer = time.AfterFunc(d.opts.ListChangedDelay, d.announce)
}

// announce tells every mounted server that the list changed.
func (d *Delivery[G]) announce() {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return
	}
	d.listTimer = nil
	servers := append([]*mcp.Server(nil), d.servers...)
	attached := slices.Clone(d.attached)
	d.listFiring.Add(1)
	d.mu.Unlock()
	defer d.listFiring.Done()
	if d.opts.Announce != nil && len(servers) > 0 {
		d.gather(func() {
			for _, s := range servers {
				d.opts.Announce(s)
			}
		})
	}
	for _, fn := range attached {
		(*fn)()
	}
}
