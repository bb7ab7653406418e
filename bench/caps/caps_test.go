// Package caps measures what the caps of packages resource and serve
// hold a server to under the attacks they are for, over streamable HTTP
// on loopback. The server runs in a process of its own (this test
// binary, started again), so that its memory is its own; a client of
// another network (127.0.2.2) reads throughout, and at the attack's
// height opens a new session and a new listen.
//
//	go test -run '^$' -bench Attack -benchtime 1x -count 5 ./bench/caps/
//
// The attacks are the issue's, each sent from addresses of one network
// (127.0.0.x: one caller, as the edge counts an anonymous caller by its
// IPv4 /24) and from as many networks (127.N.M.1: each a caller of its
// own, which fills a total):
//
//   - sessions: 100 initialize requests (2025-11-25) from each of 101
//     addresses, never closed, each session then pinged once, which
//     renews it;
//   - subscriptions: 10 listens of 1,000 URIs from each of 11 addresses;
//   - streams: 16 empty listens (resourcesListChanged alone, no URI) from
//     each of 250 addresses, or 300 networks, past the stream total;
//   - listens-4000B: URIs of 4,000 bytes, the docs' 200 listens × 1,000
//     URIs from one address, and 10 listens × 250 URIs from each of 40
//     networks (each caller's byte budget);
//   - batches: 4 MiB JSON-RPC batches of tiny escaped messages over four
//     connections for 3 s, under a session no one holds, and with no
//     session, whose body the edge scans.
//
// Each runs against the caps' defaults (caps=on), every cap lifted to
// subscribe.NoLimit (caps=off; caps=counts lifts only the registry's caps
// by bytes, as the server was before them), and go-sdk's own handling
// with no edge and no cap (caps=gosdk). Each run reports:
//
//   - the server's heap in use after a collection at rest (MiB-rest), its
//     gain at the attack's height (MiB-held) and a second after the
//     hang-up (MiB-after), and for the long URIs the resident set
//     (RSS-MiB-held, RSS-MiB-after);
//   - the goroutines and sessions held at the height;
//   - what the attacker was granted, and its refusals by HTTP status
//     (refused-429, refused-503, refused-other) or as a JSON-RPC error
//     (refused-jsonrpc); streams-held is how many of its streams were
//     still open at the height;
//   - the legitimate client's reads that succeeded (legit-ok-%) and their
//     99th percentile (p99-ms) during the attack, and the same from the
//     hang-up until the server has dropped what the attacker held, a
//     second at least (legit-ok-after-%, p99-after-ms);
//   - whether its new session and new listen were granted at the height
//     (legit-new-session, legit-new-listen: 1 if so).
package caps

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpres/mcpres/audit"
	"github.com/mcpres/mcpres/bench/internal/selfproc"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/mcpres/mcpres/subscribe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serverEnv, set, makes the test binary the server: "on" with the caps'
// defaults, "off" with none.
const serverEnv = "MCPRES_CAPS_SERVER"

func TestMain(m *testing.M) {
	if base := os.Getenv(legitEnv); base != "" {
		if err := runLegit(base); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if caps := os.Getenv(serverEnv); caps != "" {
		if err := runServer(caps); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runServer serves a registry with the template caps://r/{n} on a
// loopback port, which it prints, at /mcp, and its figures at /stats,
// until its standard input closes. caps is "on", "counts", "off", or
// "gosdk": go-sdk's own handling, its handler for every era
// (serve.NewGoSDKHandler) with no edge in front and no cap.
func runServer(caps string) error {
	opts := resource.Options{}
	edge := serve.Options{Logger: slogDiscard()}
	switch caps {
	case "off", "gosdk":
		opts.Subscriptions = resource.SubscriptionOptions{MaxPerCaller: subscribe.NoLimit, Max: subscribe.NoLimit,
			MaxBytesPerCaller: subscribe.NoLimit, MaxBytes: subscribe.NoLimit}
		edge.MaxSessionsPerCaller, edge.MaxSessions, edge.MaxListensPerCaller = subscribe.NoLimit, subscribe.NoLimit, subscribe.NoLimit
		edge.MaxStreams = subscribe.NoLimit
		edge.MaxSessionBytesPerCaller, edge.MaxSessionBytes = subscribe.NoLimit, subscribe.NoLimit
	case "counts":
		opts.Subscriptions = resource.SubscriptionOptions{MaxBytesPerCaller: subscribe.NoLimit, MaxBytes: subscribe.NoLimit}
	}
	opts.Logger = slogDiscard()
	reg, err := resource.NewRegistry(&opts)
	if err != nil {
		return err
	}
	err = reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "caps://r/{n}", Name: "r", MIMEType: "text/plain"},
		func(_ context.Context, _ *mcp.ReadResourceRequest, v resource.Vars) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "row " + v.Get("n")}}}, nil
		})
	if err != nil {
		return err
	}
	server, err := reg.NewServer(&mcp.Implementation{Name: "caps", Version: "v0"}, &mcp.ServerOptions{Logger: slogDiscard()})
	if err != nil {
		return err
	}
	edge.Registry = reg // the edge serves listens itself, as the docs tell a deployment to
	endpoint, err := serve.Handler(server, &edge)
	if err != nil {
		return err
	}
	if caps == "gosdk" {
		endpoint = serve.NewGoSDKHandler(server, nil)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", endpoint)
	mux.HandleFunc("/stats", func(w http.ResponseWriter, req *http.Request) {
		// Two collections: sync.Pool keeps what it held as a victim cache
		// through one, and frees it only at the next, so the heap read
		// after a single collection still counts the pools' contents.
		// ?gc=0 skips them, for the counts alone: collections stall the
		// legitimate client's reads.
		if req.URL.Query().Get("gc") != "0" {
			runtime.GC()
			runtime.GC()
			debug.FreeOSMemory()
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		subs, _, _ := reg.SubscriptionStats()
		sessions := 0
		for range server.Sessions() {
			sessions++
		}
		json.NewEncoder(w).Encode(stats{HeapInUse: ms.HeapInuse, RSS: rss(), Goroutines: runtime.NumGoroutine(), Subscriptions: subs, Sessions: sessions})
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr())
	hs, err := serve.NewServer(mux, nil)
	if err != nil {
		return err
	}
	if file := os.Getenv(profileEnv); file != "" {
		f, err := os.Create(file)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	go hs.Serve(ln)
	io.Copy(io.Discard, os.Stdin)
	return hs.Close()
}

// profileEnv names a file for the server's CPU profile over its whole
// run, to see where an attack's CPU goes.
const profileEnv = "MCPRES_CAPS_CPUPROFILE"

// rss returns the process's resident set in bytes, from /proc (0
// elsewhere).
func rss() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	var size, resident uint64
	fmt.Sscan(string(b), &size, &resident)
	return resident * uint64(os.Getpagesize())
}

// stats is what /stats answers.
type stats struct {
	HeapInUse     uint64
	RSS           uint64
	Goroutines    int
	Subscriptions int
	Sessions      int
}

// A target is a server process.
type target struct {
	*selfproc.Proc
	base string // http://host:port
}

func startServer(b *testing.B, caps string) *target {
	b.Helper()
	p := selfproc.Start(b, serverEnv+"="+caps)
	addr, err := p.Out.ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	return &target{Proc: p, base: "http://" + strings.TrimSpace(addr)}
}

// stats returns the server's figures, its heap after two collections.
func (t *target) stats(b *testing.B) stats { return t.get(b, "/stats") }

// counts returns the server's figures without a collection first: its
// counts are exact, its heap is not.
func (t *target) counts(b *testing.B) stats { return t.get(b, "/stats?gc=0") }

func (t *target) get(b *testing.B, path string) stats {
	b.Helper()
	resp, err := http.Get(t.base + path)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var s stats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		b.Fatal(err)
	}
	return s
}

// clientFrom returns an HTTP client whose connections come from the
// loopback address ip, so that the server tells it apart by address.
func clientFrom(ip string, conns int) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	tr := &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}
	return &http.Client{Transport: tr}
}

// legitAddr is the legitimate client's address, in a /24 of its own.
const legitAddr = "127.0.2.2"

func p99(lat []time.Duration) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	slices.Sort(lat)
	return lat[(len(lat)*99)/100]
}

// An outcome is what an attack reports at its height.
type outcome struct {
	granted int                // what the attacker was granted
	refused map[int]int        // the attacker's refusals by HTTP status, 0 for a JSON-RPC error; nil if not counted
	metrics map[string]float64 // further figures, by unit
	hangUp  func()             // hangs the attacker up
}

// measure runs attack against a server with caps (see runServer) while
// a legitimate client reads, and reports the figures, the resident set
// too if withRSS. It returns once the attacker has hung up.
func measure(b *testing.B, caps string, withRSS bool, attack func(t *target) outcome) {
	t := startServer(b, caps)
	lg := startLegit(b, t)
	rest := t.stats(b)
	out := attack(t)
	peak := t.stats(b)
	// A newcomer of another caller, at the attack's height: a new
	// session read over once, and a new listen.
	newSession, newListen := legitNewSession(b, t), legitNewListen(b, t)
	lg.send("after")
	hungUp := time.Now()
	out.hangUp()
	var after stats
	for range 100 { // the server drops what a hung-up client held as it notices
		if after = t.counts(b); after.Subscriptions == rest.Subscriptions && after.Sessions <= rest.Sessions {
			break
		}
		time.Sleep(50 * time.Millisecond) // real clock: polling another process's /stats until it has dropped what the attacker held
	}
	time.Sleep(time.Second - time.Since(hungUp)) // real clock: the legitimate client reads for a second at least after the attacker hung up
	lat, failed := lg.stop(b)
	// What stays once that second has passed: the server has ended the
	// hung-up streams' goroutines and connections, which hold heap for a
	// while after the subscriptions are dropped. The legitimate client is
	// still connected, as at rest, and no longer reading.
	after = t.stats(b)
	lg.Close()
	mib := func(s stats) float64 { return (float64(s.HeapInUse) - float64(rest.HeapInUse)) / (1 << 20) }
	b.ReportMetric(float64(rest.HeapInUse)/(1<<20), "MiB-rest")
	b.ReportMetric(mib(peak), "MiB-held")
	b.ReportMetric(mib(after), "MiB-after")
	b.ReportMetric(float64(peak.Goroutines-rest.Goroutines), "goroutines-held")
	b.ReportMetric(float64(peak.Sessions-rest.Sessions), "sessions-held")
	b.ReportMetric(float64(out.granted), "granted")
	b.ReportMetric(newSession, "legit-new-session")
	b.ReportMetric(newListen, "legit-new-listen")
	for p, suffix := range []string{"", "-after"} {
		b.ReportMetric(float64(p99(lat[p]).Microseconds())/1000, "p99"+suffix+"-ms")
		if reads := len(lat[p]) + failed[p]; reads > 0 {
			b.ReportMetric(100*float64(len(lat[p]))/float64(reads), "legit-ok"+suffix+"-%")
		}
	}
	b.ReportMetric(float64(after.Subscriptions-rest.Subscriptions), "subs-after")
	b.ReportMetric(float64(after.Sessions-rest.Sessions), "sessions-after")
	if out.refused != nil {
		other := 0
		for status, n := range out.refused {
			if status != 0 && status != http.StatusTooManyRequests && status != http.StatusServiceUnavailable {
				other += n
			}
		}
		b.ReportMetric(float64(out.refused[0]), "refused-jsonrpc")
		b.ReportMetric(float64(out.refused[http.StatusTooManyRequests]), "refused-429")
		b.ReportMetric(float64(out.refused[http.StatusServiceUnavailable]), "refused-503")
		b.ReportMetric(float64(other), "refused-other")
	}
	for unit, v := range out.metrics {
		b.ReportMetric(v, unit)
	}
	if withRSS {
		rssMiB := func(s stats) float64 { return (float64(s.RSS) - float64(rest.RSS)) / (1 << 20) }
		b.ReportMetric(rssMiB(peak), "RSS-MiB-held")
		b.ReportMetric(rssMiB(after), "RSS-MiB-after")
	}
}

// BenchmarkAttack runs each attack against a server with the caps'
// defaults (caps=on), with every cap lifted (caps=off) and go-sdk's own
// handling (caps=gosdk), one after the other in each round.
func BenchmarkAttack(b *testing.B) {
	attacks := []struct {
		name    string
		configs []string
		rss     bool
		attack  func() func(t *target) outcome
	}{
		// The three attacks as it sent them, from addresses of one
		// network (one caller), and from as many networks (each a caller
		// of its own), which fill the totals that the edge and the
		// registry then shed for a newcomer.
		{"sessions-addresses", all, false, func() func(*target) outcome { return sessionAttack(address, 101, 100) }},
		{"sessions-networks", all, false, func() func(*target) outcome { return sessionAttack(network, 101, 100) }},
		{"subscriptions-addresses", all, false, func() func(*target) outcome { return listenAttack(address, 11, 10, 1000, 0) }},
		{"subscriptions-networks", all, false, func() func(*target) outcome { return listenAttack(network, 11, 10, 1000, 0) }},
		{"streams-addresses", all, false, func() func(*target) outcome { return streamAttack(address, 250, 16) }},
		{"streams-networks", all, false, func() func(*target) outcome { return streamAttack(network, 300, 16) }},
		// URIs of 4,000 bytes (under the default MaxURILength, 4,096): the
		// docs' "200 listens × 1,000 URIs" from one address, and the
		// subscription attack from 40 networks shaped to each caller's
		// byte budget (1 MiB: 250 URIs a stream); caps=counts keeps the
		// caps by count alone. Lifting every cap would let them hold
		// 800 MB.
		{"listens-4000B/addrs=1", long, true, func() func(*target) outcome { return listenAttack(address, 1, 200, 1000, 4000) }},
		{"listens-4000B/networks=40", long, true, func() func(*target) outcome { return listenAttack(network, 40, 10, 250, 4000) }},
		// The body the edge scans: 4 MiB batches of tiny escaped messages,
		// under a session no one holds, and with no session at all.
		{"batches", all, false, func() func(*target) outcome { return batchAttack(4, 3*time.Second, "bogus") }},
		{"batches-nosession", all, false, func() func(*target) outcome { return batchAttack(4, 3*time.Second, "") }},
	}
	for _, a := range attacks {
		for _, caps := range a.configs {
			b.Run(a.name+"/caps="+caps, func(b *testing.B) {
				for range b.N {
					measure(b, caps, a.rss, a.attack())
				}
			})
		}
	}
}

// The configurations an attack runs against: all three, and for the long
// URIs the defaults and the caps by count alone.
var (
	all  = []string{"on", "off", "gosdk"}
	long = []string{"on", "counts", "gosdk"}
)

// listenAttack opens, from each of addrs addresses (from(0) to
// from(addrs-1): see network and address), listens subscriptions/listen
// streams of each URIs of size bytes (caps://r/{n}, n padded with zeros
// to size, if size is not 0), keeps those granted open, and hangs up.
// The addresses open theirs at once; a refused listen counts as a
// JSON-RPC refusal.
func listenAttack(from func(int) string, addrs, listens, each, size int) func(t *target) outcome {
	return func(t *target) outcome {
		var mu sync.Mutex
		var open []io.Closer
		var clients []*http.Client
		var refused tally
		var wg sync.WaitGroup
		for a := range addrs {
			client := clientFrom(from(a), listens)
			clients = append(clients, client)
			wg.Go(func() {
				for i := range listens {
					uris := make([]string, each)
					for j := range uris {
						n := fmt.Sprint(((a*listens)+i)*each + j)
						uris[j] = "caps://r/" + strings.Repeat("0", max(0, size-len("caps://r/")-len(n))) + n
					}
					stream, err := audit.ListenHTTP(context.Background(), client, t.base+"/mcp", "2026-07-28", uris)
					if err != nil {
						refused.add(0)
						continue
					}
					mu.Lock()
					open = append(open, stream)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return outcome{granted: len(open), refused: refused.counts(), hangUp: func() {
			for _, s := range open {
				s.Close()
			}
			for _, c := range clients {
				c.CloseIdleConnections()
			}
		}}
	}
}

func slogDiscard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// batchAttack posts, over conns connections from 127.0.3.1 (a network of
// its own) for d, 4 MiB JSON-RPC batches of tiny messages, each holding a
// backslash, under Mcp-Session-Id: session ("" for none, and no version
// header either: a 2025-03-26 client, whose batches the edge scans and
// go-sdk decodes). It reports the batches sent.
func batchAttack(conns int, d time.Duration, session string) func(t *target) outcome {
	return func(t *target) outcome {
		var body bytes.Buffer
		body.WriteByte('[')
		msg := `{"jsonrpc":"2.0","method":"a\\b","params":{"_meta":{}}}`
		for body.Len() < 4<<20-len(msg)-2 {
			if body.Len() > 1 {
				body.WriteByte(',')
			}
			body.WriteString(msg)
		}
		body.WriteByte(']')
		client := clientFrom("127.0.3.1", conns)
		var sent atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range conns {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					req, err := http.NewRequest(http.MethodPost, t.base+"/mcp", bytes.NewReader(body.Bytes()))
					if err != nil {
						return
					}
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					if session != "" {
						req.Header.Set("Mcp-Session-Id", session)
					}
					if resp, err := client.Do(req); err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						sent.Add(1)
					}
				}
			})
		}
		time.Sleep(d) // real clock: the legitimate client reads while the batches come
		return outcome{granted: int(sent.Load()), hangUp: func() { close(stop); wg.Wait() }}
	}
}
