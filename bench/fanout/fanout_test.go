// Package fanout measures the fan-out of notifications/resources/updated
// over real streamable HTTP on loopback: mcpres (a resource.Registry
// behind serve.Handler, reporting changes with Registry.Changed) against
// plain go-sdk v1.8 (mcp.Server with a SubscribeHandler that allows
// everything, behind serve.NewGoSDKHandler, go-sdk's own handler of each
// era with no edge), reporting them with Server.ResourceUpdated in two
// ways: in the driver's loop, which blocks it until every subscriber was
// written to (gosdk-loop), and from a goroutine of its own per change
// (gosdk-goroutine). A fourth server, floor (floor_test.go), is no MCP
// server: it writes each notification in the driver's loop, the least
// any server spends that writes each notification as it is made.
//
// Three processes, each the test binary: the benchmark, the server
// (server_test.go) and the listeners (client_test.go), so that neither
// side's CPU, memory or scheduling counts in the other's figures.
//
//  1. The server serves M = 1,000 resources, fan://r/0 to fan://r/999.
//     mcpres's edge keeps each caller's caps at their defaults; its
//     totals (serve's MaxStreams and MaxSessions, the registry's
//     subscription Max and MaxBytes) are lifted, so that S streams are
//     admitted. The listeners come ten streams from each of S/10
//     addresses, each in a /24 of its own (127.20.0.1, 127.20.1.1, …): a
//     caller each, under MaxListensPerCaller (16).
//  2. The listeners open S streams, each watching W = 10 of the M URIs,
//     spread so that each URI has S·W/M watchers: for 2026-07-28
//     (listen rows) a subscriptions/listen POST each, for 2025-11-25
//     (sessions rows) a session each (initialize, resources/subscribe ×W,
//     a GET stream). A goroutine per stream reads its lines, parses the
//     URI and subscription ID of each notification, and records when it
//     arrived (wall clock: one machine).
//  3. At rest, the benchmark reads the server's goroutines, heap in use
//     (after two collections) and resident set, before the listeners
//     started and once they are open.
//  4. The server's driver makes R changes a second for D = 5 s, open
//     loop: change i is due at i/R, names fan://r/{i mod M} (round
//     robin), and is recorded at the time it was due, even if a blocking
//     ResourceUpdated made the loop late. In the hot rows every stream
//     watches fan://r/0 too, and the driver changes only it.
//  5. Once the driver is done and no notification has arrived for a
//     second, the listeners match what arrived with the changes.
//
// Each run reports:
//
//   - p50-ms, p99-ms, max-ms: from a change to its arrival, over every
//     (change, watcher) pair that a notification covered (see match). A
//     stream's k-th notification of a URI covers the URI's k-th change
//     when as many arrived as were made: exact for a server that sends
//     each change, in order. Otherwise each notification covers the
//     changes not yet covered that were made before it arrived, and a
//     change merged into a later notification counts from its own time.
//     That is a lower bound when a notification takes longer than the
//     time between two changes of its URI (1 s in the listen rows, 50 ms
//     in the hot ones): it may have left before a change it is taken to
//     cover.
//   - expected: (change, watcher) pairs, the notifications if each change
//     went out alone; received: the notifications that arrived; lost:
//     pairs for which nothing arrived at or after the change, the one
//     loss that counts for a server that merges changes; merged: pairs
//     covered by a notification that covered an earlier change too.
//     mcpres sends a URI's first change after a quiet window at once and
//     merges those within its 100 ms window, and, for a stream behind,
//     those still waiting. With R ≤ M a URI changes at most once a
//     second, so that outside the hot rows received equals expected
//     unless streams fall behind; in the hot rows (20 changes a second)
//     mcpres merges half, and more for streams behind.
//   - extra: notifications with no change left to cover: in the hot
//     rows, two of them arriving within the 50 ms between two changes
//     (the first was late); elsewhere it should be 0, as should wrong-id
//     (2026-07-28 notifications with another listen's subscription ID)
//     and ended (streams that ended before the client hung up).
//   - cpu-s/1k: the server process's CPU seconds (user and system, from
//     getrusage) from the driver's start until the last arrival plus the
//     second of quiet, per 1,000 notifications received.
//   - goroutines/stream, heap-KB/stream, rss-KB/stream: the server's at
//     rest with S streams open, minus its own before them, over S.
//
// The default set runs in about four minutes on two cores. -count
// repeats each sub-benchmark in turn, so rounds interleave the servers
// better:
//
//	for i in 1 2 3 4 5; do go test -run '^$' -bench Fanout -benchtime 1x ./bench/fanout/; done | tee fanout.txt
//	benchstat -col /server fanout.txt
//
// MCPRES_FANOUT_FULL=1 adds the big rows (S=5,000 at 50,000
// notifications a second, S=10,000 at R=100, 2025-11-25 sessions at
// S=5,000, a hot URI with 5,000 watchers), about seven minutes more per
// round. -bench matches each level of a sub-benchmark's name apart:
// -bench 'Fanout/listen/S=5000/R=1000' runs one row.
// MCPRES_FANOUT_CPUPROFILE=file writes the server's CPU profile over the
// measured interval; each run overwrites it, so give it one
// sub-benchmark.
package fanout

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpres/mcpres/bench/internal/selfproc"
)

func TestMain(m *testing.M) {
	if kind := os.Getenv(serverEnv); kind != "" {
		uris, _ := strconv.Atoi(os.Getenv(urisEnv))
		exit(runServer(kind, uris))
	}
	if c := os.Getenv(clientEnv); c != "" {
		var cfg clientConfig
		if err := json.Unmarshal([]byte(c), &cfg); err != nil {
			exit(err)
		}
		exit(runClient(cfg))
	}
	os.Exit(m.Run())
}

// exit ends a server or listeners' process.
func exit(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// The shape every run shares.
const (
	uris    = 1000            // M
	watch   = 10              // W
	driving = 5 * time.Second // D
	hotRate = 20              // changes of the hot URI a second: two in each of mcpres's windows
)

// A row is one configuration of the table.
type row struct {
	era     string // listens or sessions
	streams int    // S
	rate    int    // R, changes a second
	hot     bool   // the driver changes fan://r/0 alone, which every stream watches
}

func (r row) name() string {
	kind := "listen"
	switch {
	case r.hot:
		kind = "hot"
	case r.era == sessions:
		kind = "sessions"
	}
	return fmt.Sprintf("%s/S=%d/R=%d", kind, r.streams, r.rate)
}

// The rows: the default set, and the big ones, which
// MCPRES_FANOUT_FULL=1 adds.
var (
	rows = []row{
		{listens, 1000, 1000, false},
		{listens, 5000, 100, false},
		{sessions, 1000, 1000, false},
		{listens, 1000, hotRate, true},
	}
	fullRows = []row{
		{listens, 5000, 1000, false},
		{listens, 10000, 100, false},
		{sessions, 5000, 1000, false},
		{listens, 5000, hotRate, true},
	}
)

// BenchmarkFanout runs each row against each server, one after the
// other, in each round.
func BenchmarkFanout(b *testing.B) {
	all := rows
	if os.Getenv("MCPRES_FANOUT_FULL") == "1" {
		all = append(all[:len(all):len(all)], fullRows...)
	}
	for _, r := range all {
		for _, server := range []string{mcpres, mcpresGoSDK, gosdkLoop, gosdkGoroutine, floor} {
			if server == mcpresGoSDK && r.era == sessions {
				continue // the same path as mcpres's
			}
			if server == floor && r.hot {
				continue // it writes every change, which the window merges: no bound there
			}
			b.Run(r.name()+"/server="+server, func(b *testing.B) {
				for range b.N {
					measure(b, server, r)
				}
			})
		}
	}
}

// measure runs r against server and reports its figures.
func measure(b *testing.B, server string, r row) {
	srv := startServer(b, server)
	base := srv.stats(b, true)
	cfg := clientConfig{Base: srv.base, Era: r.era, Streams: r.streams, Watch: watch, URIs: uris, Hot: r.hot}
	cl := startClient(b, cfg)
	rest := srv.stats(b, true)

	n := r.rate * int(driving/time.Second)
	before := srv.stats(b, false)
	srv.get(b, fmt.Sprintf("/drive?rate=%d&n=%d&hot=%t", r.rate, n, r.hot), nil)
	var changes []change
	srv.get(b, "/changes", &changes)
	// Wait until a second passes with no arrival: the notifications
	// still under way when the driver finished have arrived.
	var last progress
	for quiet := time.Now(); time.Since(quiet) < time.Second; {
		time.Sleep(100 * time.Millisecond) // real clock: polling the listeners' process
		if p := cl.progress(b); p.Received != last.Received {
			last, quiet = p, time.Now()
		}
	}
	after := srv.stats(b, false)
	srv.get(b, "/end", nil)
	res := cl.match(b, changes)

	perStream := func(f func(serverStats) float64) float64 { return (f(rest) - f(base)) / float64(r.streams) }
	b.ReportMetric(res.P50, "p50-ms")
	b.ReportMetric(res.P99, "p99-ms")
	b.ReportMetric(res.Max, "max-ms")
	b.ReportMetric(float64(res.Expected), "expected")
	b.ReportMetric(float64(res.Received), "received")
	b.ReportMetric(float64(res.Lost), "lost")
	b.ReportMetric(float64(res.Merged), "merged")
	b.ReportMetric(float64(res.Extra), "extra")
	b.ReportMetric(float64(res.WrongID), "wrong-id")
	b.ReportMetric(float64(res.Ended), "ended")
	if res.Received > 0 {
		b.ReportMetric((after.CPU-before.CPU)/float64(res.Received)*1000, "cpu-s/1k")
	}
	b.ReportMetric(perStream(func(s serverStats) float64 { return float64(s.Goroutines) }), "goroutines/stream")
	b.ReportMetric(perStream(func(s serverStats) float64 { return float64(s.HeapInUse) / 1024 }), "heap-KB/stream")
	b.ReportMetric(perStream(func(s serverStats) float64 { return float64(s.RSS) / 1024 }), "rss-KB/stream")
}

// A target is the server process.
type target struct {
	*selfproc.Proc
	base string // http://host:port
}

func startServer(b *testing.B, kind string) *target {
	b.Helper()
	p := selfproc.Start(b, serverEnv+"="+kind, urisEnv+"="+strconv.Itoa(uris))
	addr, err := p.Out.ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	return &target{Proc: p, base: "http://" + strings.TrimSpace(addr)}
}

// stats returns the server's figures, its heap after two collections if
// gc.
func (t *target) stats(b *testing.B, gc bool) serverStats {
	var s serverStats
	t.get(b, "/stats?gc="+map[bool]string{false: "0", true: "1"}[gc], &s)
	return s
}

// get gets path from the server and decodes its JSON answer into v, if
// not nil.
func (t *target) get(b *testing.B, path string, v any) {
	b.Helper()
	resp, err := http.Get(t.base + path)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if v == nil {
		io.Copy(io.Discard, resp.Body)
		return
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		b.Fatal(err)
	}
}

// A listeners is the listeners' process.
type listeners struct{ *selfproc.Proc }

// startClient starts the listeners' process and returns once its
// streams are open; it fails b if any was refused.
func startClient(b *testing.B, cfg clientConfig) listeners {
	b.Helper()
	c, _ := json.Marshal(cfg)
	l := listeners{selfproc.Start(b, clientEnv+"="+string(c))}
	var o opened
	if err := l.decode(&o); err != nil {
		b.Fatalf("listeners: %v", err)
	}
	if o.Failed > 0 {
		b.Fatalf("listeners: %d of %d streams failed to open; the first: %s", o.Failed, cfg.Streams, o.FirstError)
	}
	return l
}

func (l listeners) progress(b *testing.B) progress {
	io.WriteString(l.Stdin, "count\n")
	var p progress
	if err := l.decode(&p); err != nil {
		b.Fatalf("listeners: %v", err)
	}
	return p
}

// match hands the driver's changes to the listeners and returns their
// result.
func (l listeners) match(b *testing.B, changes []change) result {
	c, _ := json.Marshal(changes)
	io.WriteString(l.Stdin, "match\n"+string(c)+"\n")
	var r result
	if err := l.decode(&r); err != nil {
		b.Fatalf("listeners: %v", err)
	}
	return r
}

// decode reads one line of JSON from the process into v.
func (l listeners) decode(v any) error {
	line, err := l.Out.ReadBytes('\n')
	if err != nil {
		return err
	}
	return json.Unmarshal(line, v)
}
