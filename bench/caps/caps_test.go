// Package caps measures what the caps of packages resource and serve hold a server
// to under the attacks they are for, over streamable HTTP on loopback:
// from one anonymous client, 200 subscriptions/listen streams of 1,000
// URIs each, and 20,000 initialize requests whose sessions are never
// closed; and the like from many networks (below). The server runs in a process of its own (this
// test binary, started again), so that its memory is its own; a client of
// another address reads throughout, and its latency is measured.
//
//	go test -run '^$' -bench Attack -benchtime 1x -count 5 ./bench/caps/
//
// Each run reports the server's heap in use after a collection, at rest
// (the legitimate client connected), as the attack's gain at its height
// (MiB-held) and once the attacker has hung up (MiB-after), the
// goroutines it holds at the height, what the attacker was granted, and
// the legitimate client's 99th-percentile read latency during the attack
// (p99-ms). caps=gosdk serves go-sdk's own handling, with no edge and no
// cap, as the baseline; the batches case posts 4 MiB batches under a
// session no one holds. caps=off lifts every cap, the registry's and the edge's, to
// subscribe.NoLimit (math.MaxInt), for comparison; caps=counts lifts only
// the registry's caps by bytes (SubscriptionOptions.MaxBytesPerCaller and
// MaxBytes), as the server was before them. The listen attacks with URIs
// of 4,000 bytes (under the default MaxURILength, 4,096) also report the
// server's resident set (RSS-MiB-held, RSS-MiB-after):
//
//	go test -run '^$' -bench 'Attack/listens-4000B' -benchtime 1x -count 5 ./bench/caps/
//
// The edge counts an anonymous caller by network (an IPv4 /24), so the
// issue's attacks come from many networks too, each address
// (127.N.M.1) a /24 of its own: sessions-networks, 100 initialize
// requests from each of 101 networks, never closed, each session then
// pinged once, which fills the session total (10,000); and
// streams-networks, 16 empty listens (resourcesListChanged alone, no
// URI) from each of 300 networks, held open, past the stream total
// (4,096). With the attacker at its height, the legitimate caller opens
// a new session and reads once over it (legit-new-session: 1 if
// granted) and opens a listen (legit-new-listen). They also report the
// attacker's refusals by status (refused-429, refused-503,
// refused-other), what the attacker still held (sessions-held,
// streams-held). Every attack reports the share of the legitimate
// client's reads that succeeded during the attack (legit-ok-%), and its
// reads from the attacker's hang-up until the server has dropped what it
// held, a second at least (legit-ok-after-%, p99-after-ms):
//
//	go test -run '^$' -bench 'Attack/(sessions-networks|streams-networks)' -benchtime 1x -count 3 ./bench/caps/
package caps

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpres/mcpres/audit"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/mcpres/mcpres/subscribe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serverEnv, set, makes the test binary the server: "on" with the caps'
// defaults, "off" with none.
const serverEnv = "MCPRES_CAPS_SERVER"

func TestMain(m *testing.M) {
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
	endpoint, err := serve.Handler(server, &edge)
	if err != nil {
		return err
	}
	if caps == "gosdk" {
		endpoint = serve.NewGoSDKHandler(server, nil)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", endpoint)
	mux.HandleFunc("/stats", func(w http.ResponseWriter, _ *http.Request) {
		// Two collections: sync.Pool keeps what it held as a victim cache
		// through one, and frees it only at the next, so the heap read
		// after a single collection still counts the pools' contents.
		runtime.GC()
		runtime.GC()
		debug.FreeOSMemory()
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
	go hs.Serve(ln)
	io.Copy(io.Discard, os.Stdin)
	return hs.Close()
}

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
	base  string // http://host:port
	stdin io.WriteCloser
	cmd   *exec.Cmd
}

func startServer(b *testing.B, caps string) *target {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serverEnv+"="+caps)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	t := &target{base: "http://" + strings.TrimSpace(addr), stdin: stdin, cmd: cmd}
	b.Cleanup(func() { stdin.Close(); cmd.Wait() })
	return t
}

func (t *target) stats(b *testing.B) stats {
	b.Helper()
	resp, err := http.Get(t.base + "/stats")
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

// legit reads caps://r/1 over a 2025-11-25 session from 127.0.2.2 (a /24
// of its own, so another caller than every attacker) until
// stop is closed, and returns, by phase (what *phase held when each read
// began: 0 during the attack, 1 after it), each successful read's latency
// and the number of reads that failed, once done is closed, when it
// closes the session. A failed read is counted, not fatal: the targets
// allow 1 %.
func legit(b *testing.B, t *target, phase *atomic.Int32, ready chan<- struct{}, stop, done <-chan struct{}) (lat [2][]time.Duration, failed [2]int) {
	client := mcp.NewClient(&mcp.Implementation{Name: "legit", Version: "v0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: t.base + "/mcp", HTTPClient: clientFrom(legitAddr, 2)},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Error(err)
		close(ready)
		return lat, failed
	}
	defer func() { <-done; cs.Close() }()
	close(ready)
	for {
		select {
		case <-stop:
			return lat, failed
		default:
		}
		p := phase.Load()
		start := time.Now()
		if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "caps://r/1"}); err != nil {
			if failed[p] == 0 {
				b.Logf("legitimate read (phase %d): %v", p, err)
			}
			failed[p]++
		} else {
			lat[p] = append(lat[p], time.Since(start))
		}
		time.Sleep(5 * time.Millisecond) // real clock: the legitimate client's pace against a server process, measured, not asserted
	}
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

// counted adapts an attack that reports only what it was granted.
func counted(attack func(t *target) (granted int, hangUp func())) func(t *target) outcome {
	return func(t *target) outcome {
		granted, hangUp := attack(t)
		return outcome{granted: granted, hangUp: hangUp}
	}
}

// measure runs attack against a server with caps ("on" or "off") while a legitimate client reads, and reports the
// figures. It returns once the attacker has hung up.
func measure(b *testing.B, caps string, attack func(t *target) outcome) {
	measureRSS(b, caps, false, attack)
}

// measureRSS is measure, reporting the resident set too if withRSS.
func measureRSS(b *testing.B, caps string, withRSS bool, attack func(t *target) outcome) {
	t := startServer(b, caps)
	ready, stop, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var phase atomic.Int32
	var lat [2][]time.Duration
	var failed [2]int
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); lat, failed = legit(b, t, &phase, ready, stop, done) }()
	<-ready
	rest := t.stats(b)
	out := attack(t)
	peak := t.stats(b)
	phase.Store(1)
	hungUp := time.Now()
	out.hangUp()
	var after stats
	for range 100 { // the server drops what a hung-up client held as it notices
		if after = t.stats(b); after.Subscriptions == rest.Subscriptions && after.Sessions <= rest.Sessions {
			break
		}
		time.Sleep(50 * time.Millisecond) // real clock: polling another process's /stats until it has dropped what the attacker held
	}
	time.Sleep(time.Second - time.Since(hungUp)) // real clock: the legitimate client reads for a second at least after the attacker hung up
	// What stays once that second has passed: the server has ended the
	// hung-up streams' goroutines and connections, which hold heap for a
	// while after the subscriptions are dropped.
	after = t.stats(b)
	close(stop)
	close(done)
	wg.Wait()
	mib := func(s stats) float64 { return (float64(s.HeapInUse) - float64(rest.HeapInUse)) / (1 << 20) }
	b.ReportMetric(float64(rest.HeapInUse)/(1<<20), "MiB-rest")
	b.ReportMetric(mib(peak), "MiB-held")
	b.ReportMetric(mib(after), "MiB-after")
	b.ReportMetric(float64(peak.Goroutines-rest.Goroutines), "goroutines-held")
	b.ReportMetric(float64(peak.Sessions-rest.Sessions), "sessions-held")
	b.ReportMetric(float64(out.granted), "granted")
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
			if status != http.StatusTooManyRequests && status != http.StatusServiceUnavailable {
				other += n
			}
		}
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
// defaults and one without caps.
func BenchmarkAttack(b *testing.B) {
	for _, caps := range []string{"on", "off"} {
		b.Run("listens/caps="+caps, func(b *testing.B) {
			for range b.N {
				measure(b, caps, counted(listenAttack(b)))
			}
		})
		b.Run("sessions/caps="+caps, func(b *testing.B) {
			for range b.N {
				measure(b, caps, counted(sessionAttack(b)))
			}
		})
		// The attacks from many networks, each a caller of its
		// own: they fill the session total and the stream total, which
		// the edge then sheds for a newcomer.
		b.Run("sessions-networks/caps="+caps, func(b *testing.B) {
			for range b.N {
				measure(b, caps, sessionNetworksAttack(b, 101, 100))
			}
		})
		b.Run("streams-networks/caps="+caps, func(b *testing.B) {
			for range b.N {
				measure(b, caps, streamNetworksAttack(b, 300, 16))
			}
		})
	}
	// The same, against go-sdk's own handling, and the body the edge
	// scans: 4 MiB batches of tiny escaped messages, under a session no
	// one holds.
	for _, caps := range []string{"on", "gosdk"} {
		if caps == "gosdk" {
			b.Run("sessions-networks/caps="+caps, func(b *testing.B) {
				for range b.N {
					measure(b, caps, sessionNetworksAttack(b, 101, 100))
				}
			})
			b.Run("streams-networks/caps="+caps, func(b *testing.B) {
				for range b.N {
					measure(b, caps, streamNetworksAttack(b, 300, 16))
				}
			})
		}
		b.Run("batches/caps="+caps, func(b *testing.B) {
			for range b.N {
				measure(b, caps, counted(batchAttack(b, 4, 3*time.Second, "bogus")))
			}
		})
		b.Run("batches-nosession/caps="+caps, func(b *testing.B) {
			for range b.N {
				measure(b, caps, counted(batchAttack(b, 4, 3*time.Second, "")))
			}
		})
	}
	// URIs of 4,000 bytes: the docs' attack from one address, and one
	// from 40 addresses shaped to each caller's byte budget (1 MiB: 250
	// URIs a stream), against the defaults and against the caps by count
	// alone. Lifting every cap would let them hold 800 MB.
	for _, caps := range []string{"on", "counts"} {
		b.Run("listens-4000B/addrs=1/caps="+caps, func(b *testing.B) {
			for range b.N {
				measureRSS(b, caps, true, counted(longListenAttack(b, 1, 200, 1000, 4000)))
			}
		})
		b.Run("listens-4000B/addrs=40/caps="+caps, func(b *testing.B) {
			for range b.N {
				measureRSS(b, caps, true, counted(longListenAttack(b, 40, 10, 250, 4000)))
			}
		})
	}
}

// longListenAttack opens, from each of addrs addresses (127.20.0.1,
// 127.20.1.1 and on: each a network, so a caller, of its own),
// listens subscriptions/listen streams of each URIs of size bytes
// (caps://r/{n}, n padded with zeros), keeps those granted open, and
// hangs up. The addresses open theirs at once.
func longListenAttack(b *testing.B, addrs, listens, each, size int) func(t *target) (int, func()) {
	return func(t *target) (int, func()) {
		var mu sync.Mutex
		var open []io.Closer
		var clients []*http.Client
		var wg sync.WaitGroup
		for a := range addrs {
			client := clientFrom(fmt.Sprintf("127.20.%d.1", a), listens)
			clients = append(clients, client)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range listens {
					uris := make([]string, each)
					for j := range uris {
						n := fmt.Sprint(((a*listens)+i)*each + j)
						uris[j] = "caps://r/" + strings.Repeat("0", size-len("caps://r/")-len(n)) + n
					}
					stream, err := audit.ListenHTTP(context.Background(), client, t.base+"/mcp", "2026-07-28", uris)
					if err == nil {
						mu.Lock()
						open = append(open, stream)
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		return len(open), func() {
			for _, s := range open {
				s.Close()
			}
			for _, c := range clients {
				c.CloseIdleConnections()
			}
		}
	}
}

// listenAttack opens 200 subscriptions/listen streams of 1,000 URIs each
// from 127.0.0.1, keeps those granted open, and hangs up.
func listenAttack(b *testing.B) func(t *target) (int, func()) {
	return func(t *target) (int, func()) {
		client := clientFrom("127.0.0.1", 256)
		var open []io.Closer
		for i := range 200 {
			uris := make([]string, 1000)
			for j := range uris {
				uris[j] = fmt.Sprintf("caps://r/%d", i*1000+j)
			}
			if stream, err := audit.ListenHTTP(context.Background(), client, t.base+"/mcp", "2026-07-28", uris); err == nil {
				open = append(open, stream)
			}
		}
		return len(open), func() {
			for _, s := range open {
				s.Close()
			}
			client.CloseIdleConnections()
		}
	}
}

// sessionAttack sends 20,000 initialize requests from 127.0.0.1, eight at
// a time, and never closes the sessions granted; hanging up deletes them,
// as a client that closes its sessions does.
func sessionAttack(b *testing.B) func(t *target) (int, func()) {
	return func(t *target) (int, func()) {
		client := clientFrom("127.0.0.1", 8)
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
			"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]string{"name": "attacker", "version": "v0"},
		}})
		var mu sync.Mutex
		var ids []string
		work := make(chan struct{})
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range work {
					req, _ := http.NewRequest(http.MethodPost, t.base+"/mcp", bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						continue
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if id := resp.Header.Get("Mcp-Session-Id"); id != "" && resp.StatusCode == http.StatusOK {
						mu.Lock()
						ids = append(ids, id)
						mu.Unlock()
					}
				}
			}()
		}
		for range 20_000 {
			work <- struct{}{}
		}
		close(work)
		wg.Wait()
		return len(ids), func() {
			for _, id := range ids {
				req, _ := http.NewRequest(http.MethodDelete, t.base+"/mcp", nil)
				req.Header.Set("Mcp-Session-Id", id)
				req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
				if resp, err := client.Do(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
			client.CloseIdleConnections()
		}
	}
}

func slogDiscard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// batchAttack posts, over conns connections from 127.0.3.1 (a network of
// its own) for d, 4 MiB JSON-RPC batches of tiny messages, each holding a
// backslash, under Mcp-Session-Id: session ("" for none, and no version
// header either: a 2025-03-26 client, whose batches the edge scans and
// go-sdk decodes). It reports the batches sent.
func batchAttack(b *testing.B, conns int, d time.Duration, session string) func(t *target) (int, func()) {
	return func(t *target) (int, func()) {
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
		return int(sent.Load()), func() { close(stop); wg.Wait() }
	}
}
