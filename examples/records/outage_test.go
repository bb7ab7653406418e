package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/natsbus/natstest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The outage tests run three replica processes on one Postgres schema,
// with clients of every protocol era on each, and take the bus away
// under them: a NATS server, a process of its own, killed and started
// again on its port (TestPostgresReplicasNATSRestart), or Postgres
// itself, stopped and started with pg_ctl
// (TestPostgresReplicasPostgresRestart). Every subscriber must then
// either be notified of each change made after the bus came back, or be
// told to read again what it watches (a resync: an update of every URI
// it watches), within 5 s; at the end none is stale. They also measure,
// and log, how long after the broker's return the first change made then
// reaches every subscriber, and how many notifications an outage costs a
// session watching 1,000 URIs.
//
// Every row these tests change is changed once per run, and a
// notification of it received after the change began is that change's,
// or a resync's: either tells the client to read it again.

// Rows the subscribers watch, by id in users.
const (
	sentinelRow = 5   // never changed: a notification of it is a resync
	beforeRow   = 6   // changed before the outage
	outageRows  = 100 // changed during the outage, from here
	streamRows  = 200 // changed after the bus came back, from here
	finalRows   = 300 // changed last, one per source; and sqlWhenUp's, after them
	markerRow   = 9001
	quietRows   = 10001 // the 1,000-URI sessions' rows, never changed, from here
)

const (
	// sources of changes: update_row through replica 0, 1 or 2 (their
	// own write path, which the replica reports on the bus), or psql
	// (which the database's trigger reports).
	sources    = 4
	psqlSource = 3
	// outageChanges is the most changes made during an outage.
	outageChanges = 8
	// maxStream is the most changes made after the bus came back, one
	// every streamPace, before the last ones.
	maxStream  = 60
	streamPace = 25 * time.Millisecond
	// bigWatch is how many URIs the sessions of the resync count watch:
	// subscribe.DefaultMaxPerSession, the most one session may.
	bigWatch = 1000
	// staleBound is how long after the bus came back (or after a change
	// made later) a subscriber may go without being told of a change.
	staleBound = 5 * time.Second
)

// TestPostgresReplicasNATSRestart kills the NATS server under three
// replicas (SIGKILL: no goodbye), makes changes while it is down, through
// each replica and with psql, then starts it again on its port and makes
// more: no subscriber of any era, on any replica, is left stale.
func TestPostgresReplicasNATSRestart(t *testing.T) {
	dsn, schema := postgresSchema(t)
	port := natstest.FreePort(t)
	ns := natstest.Start(t, port)
	o := startOutageRun(t, dsn, schema, "nats://127.0.0.1:"+strconv.Itoa(port))

	o.began = time.Now()
	ns.Kill()
	for _, r := range o.replicas {
		r.WaitLog("natsbus: broker unreachable")
	}
	// The replicas' own changes wait in nats.go's reconnect buffer; psql's
	// reach every replica through Postgres, still up.
	for k := range 2 {
		for src := range len(o.replicas) {
			o.change(src, outageRows+k*len(o.replicas)+src, "outage")
		}
	}
	o.change(psqlSource, outageRows+outageChanges-1, "outage")

	natstest.Start(t, port)
	o.afterReturn(time.Now(), 0) // a replica's change first: NATS carries those
}

// TestPostgresReplicasPostgresRestart stops Postgres under three replicas
// (pg_ctl stop -m fast) and starts it again, with -bus postgres, where
// Postgres is the bus, and with -bus nats, where it carries psql's
// changes to every replica (the trigger) and the rows: no subscriber is
// left stale. Nothing can change while Postgres is down; changes are made
// as soon as it accepts connections again, while the replicas' listeners
// are still reconnecting.
func TestPostgresReplicasPostgresRestart(t *testing.T) {
	dsn, schema := postgresSchema(t)
	ctl := os.Getenv("MCPRES_TEST_POSTGRES_CTL")
	if ctl == "" {
		t.Skip("MCPRES_TEST_POSTGRES_CTL not set: run through scripts/postgres.sh")
	}
	port := natstest.FreePort(t)
	natstest.Start(t, port)
	for _, bus := range []string{"postgres", "nats://127.0.0.1:" + strconv.Itoa(port)} {
		name, _, _ := strings.Cut(bus, ":")
		t.Run(name, func(t *testing.T) {
			o := startOutageRun(t, dsn, schema, bus)

			o.began = time.Now()
			pgctl(t, ctl, "stop")
			down := true
			t.Cleanup(func() { // should the test end during the outage
				if down {
					pgctl(t, ctl, "start")
				}
			})
			for _, r := range o.replicas {
				r.WaitLog("pgbus: cannot listen")
			}
			o.refused(0)
			// A change made with SQL the moment Postgres accepts one,
			// before the replicas' listeners, which retry no faster than
			// every 100 ms, are back.
			early := o.sqlWhenUp(finalRows + sources)
			pgctl(t, ctl, "start")
			down = false
			early()
			// psql's change first: the trigger reports it through
			// Postgres whatever the bus.
			o.afterReturn(time.Now(), psqlSource)
		})
	}
}

// pgctl stops or starts the test's Postgres server.
func pgctl(t *testing.T, ctl, cmd string) {
	t.Helper()
	out, err := exec.Command(ctl, cmd).CombinedOutput()
	require.NoError(t, err, "%s %s: %s", ctl, cmd, out)
}

// A rowChange is a change the test made to a row.
type rowChange struct {
	uri   string
	via   string    // "replica 1", "psql" or "SQL"
	at    time.Time // when it was begun
	phase string    // before, outage, return, after, final or marker
}

// An outageRun is one run of an outage test: three replicas on one
// schema, the clients watching rows on each, the sessions that change
// rows through each, and the changes made.
type outageRun struct {
	t        *testing.T
	dsn      string
	schema   string
	replicas []*mcptest.Server
	writers  []*mcp.ClientSession // a session on each replica, for update_row
	subs     []*watcher           // clients of each era on each replica
	big      []*watcher           // sessions watching bigWatch URIs
	changes  []rowChange
	began    time.Time // the outage
	back     time.Time // the bus's return
}

// startOutageRun starts three replicas on schema with -bus bus, connects
// to each a writer and a subscriber of each era watching the rows the
// test changes, and a session of another era on each watching bigWatch
// rows, and checks that a change reaches every subscriber.
func startOutageRun(t *testing.T, dsn, schema, bus string) *outageRun {
	keys, write := keysFile(t)
	write(newKey())
	o := &outageRun{t: t, dsn: dsn, schema: schema}
	for range 3 {
		// One at a time: the first creates and fills the tables.
		o.replicas = append(o.replicas, mcptest.StartServer(t, binPath, "-dsn", dsn, "-bus", bus, "-cursor-keys", keys))
	}
	watched := rowURIs(sentinelRow, beforeRow)
	watched = append(watched, rowRange(outageRows, outageChanges)...)
	watched = append(watched, rowRange(streamRows, maxStream)...)
	watched = append(watched, rowRange(finalRows, sources+1)...) // and sqlWhenUp's
	for i, r := range o.replicas {
		url := r.URL(mcpPath)
		o.writers = append(o.writers, mcptest.ConnectHTTP(t, url, "", "2025-11-25", nil))
		for _, version := range mcptest.Versions[:2] {
			w := newWatcher(fmt.Sprintf("replica %d, %s session", i, version), watched)
			subscribeAll(t, connectWatcher(t, url, version, w), watched)
			o.subs = append(o.subs, w)
		}
		w := newWatcher(fmt.Sprintf("replica %d, 2026-07-28 listen", i), watched)
		listenRaw(t, url, w)
		o.subs = append(o.subs, w)
	}
	// A session watching 1,000 rows on each replica, of a different era
	// on each.
	big := append(rowRange(quietRows, bigWatch-1), rowURIs(markerRow)...)
	for i, version := range mcptest.Versions {
		w := newWatcher(fmt.Sprintf("replica %d, %s watching 1,000 URIs", i, version), big)
		if version < "2026-07-28" {
			subscribeAll(t, connectWatcher(t, o.replicas[i].URL(mcpPath), version, w), big)
		} else {
			listenRaw(t, o.replicas[i].URL(mcpPath), w)
		}
		o.big = append(o.big, w)
	}

	c := o.change(0, beforeRow, "before")
	for _, w := range o.subs {
		w.await(t, "the change before the outage", func() bool { return w.told(c) })
	}
	return o
}

// change changes row id through source src (a replica's update_row, or
// psql), in phase, and returns the change. A replica's update_row that
// fails, as the first may once Postgres is back, is made again.
func (o *outageRun) change(src, id int, phase string) rowChange {
	t := o.t
	t.Helper()
	value := fmt.Sprintf("%s %d", phase, time.Now().UnixNano())
	c := rowChange{uri: rowURIs(id)[0], phase: phase}
	if src == psqlSource {
		c.via, c.at = "psql", time.Now()
		psql(t, o.dsn, fmt.Sprintf("UPDATE %s.users SET name = '%s' WHERE id = %d", o.schema, value, id))
	} else {
		c.via = "replica " + strconv.Itoa(src)
		for attempt := 1; ; attempt++ {
			c.at = time.Now()
			res, err := o.writers[src].CallTool(t.Context(), updateParams(id, value))
			if err == nil && !res.IsError {
				break
			}
			require.Less(t, attempt, 20, "update_row through %s: %s", c.via, toolError(err, res))
			t.Logf("update_row through %s failed, again in 100 ms: %s", c.via, toolError(err, res))
			time.Sleep(100 * time.Millisecond) // real clock (replica processes, real Postgres): a pace between attempts, not an assertion
		}
	}
	o.changes = append(o.changes, c)
	return c
}

// sqlWhenUp starts trying to change row id with SQL every 10 ms, from
// now until Postgres accepts it, and returns a function that waits for
// the change and records it, in phase "return".
func (o *outageRun) sqlWhenUp(id int) (wait func()) {
	t := o.t
	db, err := sql.Open("pgx", o.dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	done := make(chan rowChange, 1)
	go func() {
		deadline := time.Now().Add(mcptest.WaitTimeout)
		for {
			c := rowChange{uri: rowURIs(id)[0], via: "SQL", at: time.Now(), phase: "return"}
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			_, err := db.ExecContext(ctx, "UPDATE users SET name = $1 WHERE id = $2", fmt.Sprintf("return %d", time.Now().UnixNano()), id)
			cancel()
			if err == nil {
				done <- c
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("no change made with SQL within %v: %v", mcptest.WaitTimeout, err)
				close(done)
				return
			}
			time.Sleep(10 * time.Millisecond) // real clock (Postgres coming back): a pace between attempts
		}
	}()
	return func() {
		c, ok := <-done
		require.True(t, ok, "the change made with SQL as Postgres came back")
		o.changes = append(o.changes, c)
	}
}

// refused checks that update_row through replica src fails: the rows are
// in Postgres, which is down.
func (o *outageRun) refused(src int) {
	res, err := o.writers[src].CallTool(o.t.Context(), updateParams(outageRows, "refused"))
	assert.True(o.t, err != nil || res.IsError, "update_row while Postgres is down: %v", res)
}

// toolError returns what a failed tool call says.
func toolError(err error, res *mcp.CallToolResult) string {
	if err != nil {
		return err.Error()
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	return strings.Join(text, "; ")
}

func updateParams(id int, value string) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: "update_row", Arguments: map[string]any{
		"table": "users", "id": id, "column": "name", "value": value,
	}}
}

// afterReturn makes changes from back, when the bus came back, one every
// streamPace from each source in turn, starting with first, until every subscriber was
// resynced or told of every change made so far, and a round more; then
// a last change from each source, which every subscriber must be told
// of. It then checks that no subscriber is stale, and logs the figures.
func (o *outageRun) afterReturn(back time.Time, first int) {
	t := o.t
	o.back = back
	settledAt := -1
	for k := 0; k < maxStream; k++ {
		o.change((first+k)%sources, streamRows+k, "after")
		if settledAt < 0 && o.settled() {
			settledAt = k
		}
		if settledAt >= 0 && k >= settledAt+sources {
			break
		}
		time.Sleep(streamPace) // real clock (replica processes): a pace, not an assertion
	}
	var finals []rowChange
	for src := range sources {
		finals = append(finals, o.change(src, finalRows+src, "final"))
	}
	for _, w := range o.subs {
		w.await(t, "the last changes", func() bool {
			return !slices.ContainsFunc(finals, func(c rowChange) bool { return !w.told(c) })
		})
	}
	// A change of a row the 1,000-URI sessions watch: every resync was
	// delivered to them before it. A registry makes the resyncs its bus
	// asks for within a second of its first as one more when that second
	// ends (resource/bus.go): wait that out, so that the count below has
	// them all.
	time.Sleep(time.Until(o.back.Add(2 * time.Second))) // real clock: the replicas are processes
	marker := o.change(0, markerRow, "marker")
	for _, w := range o.big {
		w.await(t, "the marker change", func() bool { return w.told(marker) })
	}

	for _, w := range o.subs {
		assert.NoError(t, w.endedEarly(), "%s: its stream ended", w.name)
		for _, c := range o.changes {
			if c.phase == "before" || !w.watches(c.uri) {
				continue
			}
			at, ok := w.firstAfter(c.uri, c.at)
			if !assert.True(t, ok, "%s is stale: never told of %s (%s, through %s, %v after the bus came back)",
				w.name, c.uri, c.phase, c.via, c.at.Sub(o.back).Round(time.Millisecond)) {
				continue
			}
			bound := later(c.at, o.back).Add(staleBound)
			assert.False(t, at.After(bound), "%s was told of %s (%s, through %s) only %v after the bus came back",
				w.name, c.uri, c.phase, c.via, at.Sub(o.back).Round(time.Millisecond))
		}
	}
	o.report(marker)
}

// settled reports whether every subscriber has been resynced since the
// outage began, or told of every change made since.
func (o *outageRun) settled() bool {
	for _, w := range o.subs {
		if _, resynced := w.firstAfter(rowURIs(sentinelRow)[0], o.began); resynced {
			continue
		}
		for _, c := range o.changes {
			if c.at.After(o.began) && !w.told(c) {
				return false
			}
		}
	}
	return true
}

// report logs how long after the bus came back the first change made
// then reached every subscriber, when each was resynced, and what the
// outage cost the 1,000-URI sessions.
func (o *outageRun) report(marker rowChange) {
	t := o.t
	for _, phase := range []string{"return", "after"} {
		i := slices.IndexFunc(o.changes, func(c rowChange) bool { return c.phase == phase })
		if i < 0 {
			continue
		}
		first := o.changes[i]
		var everywhere time.Time
		for _, w := range o.subs {
			at, _ := w.firstAfter(first.uri, first.at)
			everywhere = later(everywhere, at)
		}
		t.Logf("the first change made %s (through %s, begun %v after the return) reached every one of %d subscribers %v after the bus came back",
			map[string]string{"return": "as the bus came back", "after": "after the bus came back"}[phase],
			first.via, first.at.Sub(o.back).Round(time.Millisecond), len(o.subs), everywhere.Sub(o.back).Round(time.Millisecond))
	}
	sentinel := rowURIs(sentinelRow)[0]
	for _, w := range o.subs {
		resyncs := w.receipts(o.began, time.Now(), func(uri string) bool { return uri == sentinel })
		line := fmt.Sprintf("%s: not resynced", w.name)
		if len(resyncs) > 0 {
			line = fmt.Sprintf("%s: resynced %d time(s), first %v after the bus came back", w.name, len(resyncs), resyncs[0].Sub(o.back).Round(time.Millisecond))
		}
		t.Log(line)
	}
	for _, w := range o.big {
		n := len(w.receipts(o.began, marker.at, func(string) bool { return true }))
		n += len(w.receipts(marker.at, time.Now(), func(uri string) bool { return uri != marker.uri }))
		t.Logf("%s: %d notifications/resources/updated for the outage (%.2f per watched URI), %d list_changed",
			w.name, n, float64(n)/bigWatch, w.listChangedSince(o.began))
	}
	for i, r := range o.replicas {
		for line := range strings.Lines(r.Stderr.String()) {
			if strings.Contains(line, "may have missed changes") {
				t.Logf("replica %d: %s", i, strings.TrimSpace(line))
			}
		}
	}
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// rowURIs returns the URIs of the users of ids.
func rowURIs(ids ...int) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = "db://users/" + strconv.Itoa(id)
	}
	return out
}

// rowRange returns the URIs of n users from id from.
func rowRange(from, n int) []string {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = from + i
	}
	return rowURIs(ids...)
}

// A receipt is a notifications/resources/updated a watcher received.
type receipt struct {
	uri string
	at  time.Time
}

// A watcher records the notifications a client receives, and when.
type watcher struct {
	name    string
	watched map[string]bool
	signal  chan struct{} // a wake-up for await, when something came
	ended   atomic.Pointer[error]

	mu          sync.Mutex
	updates     []receipt
	listChanged []time.Time
}

func newWatcher(name string, uris []string) *watcher {
	w := &watcher{name: name, watched: map[string]bool{}, signal: make(chan struct{}, 1)}
	for _, u := range uris {
		w.watched[u] = true
	}
	return w
}

func (w *watcher) updated(uri string) {
	w.mu.Lock()
	w.updates = append(w.updates, receipt{uri, time.Now()})
	w.mu.Unlock()
	w.wake()
}

func (w *watcher) listChangedNow() {
	w.mu.Lock()
	w.listChanged = append(w.listChanged, time.Now())
	w.mu.Unlock()
	w.wake()
}

func (w *watcher) wake() {
	select {
	case w.signal <- struct{}{}:
	default: // one is pending
	}
}

// watches reports whether w watches uri.
func (w *watcher) watches(uri string) bool { return w.watched[uri] }

// firstAfter returns when w first received an update of uri after t0.
func (w *watcher) firstAfter(uri string, t0 time.Time) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.updates {
		if r.uri == uri && r.at.After(t0) {
			return r.at, true
		}
	}
	return time.Time{}, false
}

// told reports whether w was told of c: received an update of its URI
// after it began.
func (w *watcher) told(c rowChange) bool {
	_, ok := w.firstAfter(c.uri, c.at)
	return ok
}

// receipts returns when w received updates of the URIs keep takes
// between from and to.
func (w *watcher) receipts(from, to time.Time, keep func(uri string) bool) []time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []time.Time
	for _, r := range w.updates {
		if r.at.After(from) && r.at.Before(to) && keep(r.uri) {
			out = append(out, r.at)
		}
	}
	return out
}

// listChangedSince counts the list_changed w received after t0.
func (w *watcher) listChangedSince(t0 time.Time) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, at := range w.listChanged {
		if at.After(t0) {
			n++
		}
	}
	return n
}

// endedEarly returns why w's listen stream ended, if it did.
func (w *watcher) endedEarly() error {
	if err := w.ended.Load(); err != nil {
		return *err
	}
	return nil
}

// await waits until cond holds, failing t if it does not within
// mcptest.WaitTimeout.
func (w *watcher) await(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(mcptest.WaitTimeout)
	defer deadline.Stop()
	for !cond() {
		select {
		case <-w.signal:
		case <-deadline.C:
			t.Fatalf("%s: no %s within %v", w.name, what, mcptest.WaitTimeout)
		}
	}
}

// connectWatcher connects a go-sdk client of version to url, recording
// its notifications in w.
func connectWatcher(t *testing.T, url, version string, w *watcher) *mcp.ClientSession {
	t.Helper()
	cs := mcptest.ConnectHTTP(t, url, "", version, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			w.updated(req.Params.URI)
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { w.listChangedNow() },
	})
	require.Equal(t, version, cs.InitializeResult().ProtocolVersion, "negotiated version")
	return cs
}

// subscribeAll subscribes cs to uris, several at a time.
func subscribeAll(t *testing.T, cs *mcp.ClientSession, uris []string) {
	t.Helper()
	const workers = 8
	next := make(chan string)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for uri := range next {
				require.NoError(goroutineTB{t}, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}), uri)
			}
		})
	}
	for _, uri := range uris {
		next <- uri
	}
	close(next)
	wg.Wait()
	require.False(t, t.Failed(), "subscribing")
}

// listenRaw opens a 2026-07-28 subscriptions/listen to w's URIs and to
// list changes at url, as a client without go-sdk would (go-sdk opens a
// listen for each URI), and returns once the server acknowledged it; it
// records what the stream brings in w until t ends.
func listenRaw(t *testing.T, url string, w *watcher) {
	t.Helper()
	uris := make([]string, 0, len(w.watched))
	for u := range w.watched {
		uris = append(uris, u)
	}
	body, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
		"params": map[string]any{
			"_meta": map[string]any{
				mcp.MetaKeyProtocolVersion:    "2026-07-28",
				mcp.MetaKeyClientInfo:         map[string]string{"name": "records-test", "version": "v0"},
				mcp.MetaKeyClientCapabilities: map[string]any{},
			},
			"notifications": map[string]any{"resourceSubscriptions": uris, "resourcesListChanged": true},
		},
	})
	require.NoError(t, err)
	ctx, hangUp := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := mcptest.HTTPClient(t, "").Do(req)
	if err != nil {
		hangUp()
		require.NoError(t, err, "subscriptions/listen")
	}
	done := make(chan struct{})
	started := false
	t.Cleanup(func() { // before the replica stops: cleanups run last first
		hangUp()
		resp.Body.Close()
		if started {
			<-done
		}
	})
	require.Equal(t, http.StatusOK, resp.StatusCode, "subscriptions/listen")
	require.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"), "subscriptions/listen: %s", resp.Header.Get("Content-Type"))
	acked := make(chan error, 1)
	started = true
	go func() {
		defer close(done)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		first := true
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data:")
			if !ok {
				continue
			}
			var msg struct {
				Method string `json:"method"`
				Params struct {
					URI string `json:"uri"`
				} `json:"params"`
			}
			if err := json.Unmarshal([]byte(strings.TrimSpace(data)), &msg); err != nil {
				err = fmt.Errorf("undecodable message %q: %w", data, err)
				w.ended.Store(&err)
				if first {
					acked <- err
				}
				return
			}
			switch {
			case first:
				first = false
				if msg.Method != "notifications/subscriptions/acknowledged" {
					acked <- fmt.Errorf("the first message is %q, not the acknowledgment", msg.Method)
					return
				}
				acked <- nil
			case msg.Method == "notifications/resources/updated":
				w.updated(msg.Params.URI)
			case msg.Method == "notifications/resources/list_changed":
				w.listChangedNow()
			}
		}
		if ctx.Err() == nil {
			err := fmt.Errorf("the stream ended: %v", sc.Err())
			w.ended.Store(&err)
			if first {
				acked <- err
			}
		}
	}()
	require.NoError(t, mcptest.Receive(t, acked, "the acknowledgment of subscriptions/listen"))
}
