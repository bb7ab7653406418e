package fanout

// This file is the server process: M resources, fan://r/0 to
// fan://r/{M-1}, served over streamable HTTP by mcpres or by plain
// go-sdk, and the driver that changes them at a rate, open loop.

import (
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
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/mcpres/mcpres/subscribe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The servers a run compares.
const (
	mcpres         = "mcpres"          // a resource.Registry behind serve.Handler, which serves listens at the edge; reg.Changed
	mcpresGoSDK    = "mcpres-gosdk"    // the same, but its listens served by go-sdk (no serve.Options.Registry)
	gosdkLoop      = "gosdk-loop"      // plain go-sdk; ResourceUpdated in the driver's loop
	gosdkGoroutine = "gosdk-goroutine" // plain go-sdk; ResourceUpdated in a goroutine per change
	floor          = "floor"           // no MCP server: each notification written in the driver's loop (floor_test.go)
)

// serverEnv, set to one of the servers above, makes the test binary the
// server; uris is M, from urisEnv.
const (
	serverEnv  = "MCPRES_FANOUT_SERVER"
	urisEnv    = "MCPRES_FANOUT_URIS"
	profileEnv = "MCPRES_FANOUT_CPUPROFILE" // a file: the server's CPU profile over the measured interval
)

// uriOf returns the URI of resource n.
func uriOf(n int) string { return "fan://r/" + strconv.Itoa(n) }

// A change is one made by the driver: resource N, at T (Unix
// nanoseconds, the time it was due: see drive).
type change struct {
	N int   `json:"n"`
	T int64 `json:"t"`
}

// serverStats is what /stats answers.
type serverStats struct {
	Goroutines int
	HeapInUse  uint64
	RSS        uint64
	CPU        float64 // user and system seconds of the process so far
}

// runServer serves kind's server of m resources on a loopback port,
// which it prints, at /mcp, until its standard input closes. Besides:
//
//   - /stats answers serverStats, after two collections unless ?gc=0;
//   - /drive?rate=R&n=N&hot=true|false starts the driver: N changes, R a second
//     (see drive), and returns;
//   - /changes waits for the driver to finish and answers its changes;
//   - /end stops the CPU profile, if profileEnv asked for one.
func runServer(kind string, m int) error {
	raiseFileLimit()
	quiet := slog.New(slog.DiscardHandler)
	read := func(n string) *mcp.ReadResourceResult {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "fan://r/" + n, Text: "row " + n}}}
	}
	var endpoint http.Handler
	var changed func(uri string)
	var hs *http.Server
	switch kind {
	case mcpres, mcpresGoSDK:
		// The totals are lifted; each caller's caps stay at their
		// defaults, as the client opens ten streams from each network
		// (see clientNetwork).
		reg, err := resource.NewRegistry(&resource.Options{Logger: quiet, Subscriptions: resource.SubscriptionOptions{
			Max: subscribe.NoLimit, MaxBytes: subscribe.NoLimit}})
		if err != nil {
			return err
		}
		err = reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "fan://r/{n}", Name: "r", MIMEType: "text/plain"},
			func(_ context.Context, _ *mcp.ReadResourceRequest, v resource.Vars) (*mcp.ReadResourceResult, error) {
				return read(v.Get("n")), nil
			})
		if err != nil {
			return err
		}
		server, err := reg.NewServer(&mcp.Implementation{Name: "fanout", Version: "v0"}, &mcp.ServerOptions{Logger: quiet})
		if err != nil {
			return err
		}
		edge := serve.Options{Logger: quiet, MaxStreams: subscribe.NoLimit, MaxSessions: subscribe.NoLimit,
			MaxSessionBytes: subscribe.NoLimit}
		if kind == mcpres {
			edge.Registry = reg
		}
		if endpoint, err = serve.Handler(server, &edge); err != nil {
			return err
		}
		changed = func(uri string) { reg.Changed(uri) }
		if hs, err = serve.NewServer(http.NotFoundHandler(), &edge); err != nil { // its handler is set below
			return err
		}
	case gosdkLoop, gosdkGoroutine:
		// Plain go-sdk, as its documentation serves it: a subscribe
		// handler that allows everything, go-sdk's streamable HTTP
		// handler of each era (serve.NewGoSDKHandler, no edge), and an
		// http.Server with no timeouts (a ReadTimeout would end its
		// streams: only the edge clears the deadline once the body is
		// read).
		server := mcp.NewServer(&mcp.Implementation{Name: "fanout", Version: "v0"}, &mcp.ServerOptions{Logger: quiet,
			SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
			UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil }})
		server.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "fan://r/{n}", Name: "r", MIMEType: "text/plain"},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return read(req.Params.URI[len("fan://r/"):]), nil
			})
		endpoint = serve.NewGoSDKHandler(server, nil)
		updated := func(uri string) {
			server.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri})
		}
		changed = updated
		if kind == gosdkGoroutine {
			changed = func(uri string) { go updated(uri) }
		}
		hs = &http.Server{}
	case floor:
		f := newFloor()
		endpoint, changed, hs = f, f.changed, &http.Server{}
	default:
		return fmt.Errorf("fanout: no server %q", kind)
	}

	var (
		mu      sync.Mutex
		done    chan []change // the running driver's changes; nil before /drive
		profile *os.File
	)
	mux := http.NewServeMux()
	mux.Handle("/mcp", endpoint)
	mux.HandleFunc("/stats", func(w http.ResponseWriter, req *http.Request) {
		// Two collections: sync.Pool frees what it held only at the
		// second. ?gc=0 skips them, for the CPU time alone.
		if req.URL.Query().Get("gc") != "0" {
			runtime.GC()
			runtime.GC()
			debug.FreeOSMemory()
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		json.NewEncoder(w).Encode(serverStats{Goroutines: runtime.NumGoroutine(), HeapInUse: ms.HeapInuse, RSS: rss(), CPU: cpuSeconds()})
	})
	mux.HandleFunc("/drive", func(w http.ResponseWriter, req *http.Request) {
		q := req.URL.Query()
		rate, _ := strconv.Atoi(q.Get("rate"))
		n, _ := strconv.Atoi(q.Get("n"))
		hot := q.Get("hot") == "true"
		ch := make(chan []change, 1)
		mu.Lock()
		if path := os.Getenv(profileEnv); path != "" {
			f, err := os.Create(path)
			if err == nil && pprof.StartCPUProfile(f) == nil {
				profile = f
			}
		}
		done = ch
		mu.Unlock()
		go func() { ch <- drive(changed, m, rate, n, hot) }()
	})
	mux.HandleFunc("/changes", func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		ch := done
		mu.Unlock()
		json.NewEncoder(w).Encode(<-ch)
	})
	mux.HandleFunc("/end", func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if profile != nil {
			pprof.StopCPUProfile()
			profile.Close()
			profile = nil
		}
	})
	hs.Handler = mux
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr())
	go hs.Serve(ln)
	io.Copy(io.Discard, os.Stdin)
	return hs.Close()
}

// drive makes n changes, rate a second, and returns them: change i is
// due at start + i/rate, and names fan://r/0 if hot, else fan://r/{i%m}
// (round robin: with rate ≤ m, a URI changes at most once a second).
// The loop is open: a change is made when due, or at once if the loop
// is late (a blocking changed held it up), and is recorded at the time
// it was due, so a late loop counts in the latency.
func drive(changed func(uri string), m, rate, n int, hot bool) []change {
	changes := make([]change, 0, n)
	start := time.Now()
	due := func(i int) time.Time { return start.Add(time.Duration(i) * time.Second / time.Duration(rate)) }
	for i := 0; i < n; {
		now := time.Now()
		for ; i < n && !due(i).After(now); i++ {
			u := i % m
			if hot {
				u = 0
			}
			changes = append(changes, change{N: u, T: due(i).UnixNano()})
			changed(uriOf(u))
		}
		if i < n {
			time.Sleep(time.Until(due(i))) // real clock: the driver's pace, R changes a second
		}
	}
	return changes
}

// cpuSeconds returns the user and system CPU time of the process.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
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

// raiseFileLimit raises the process's soft limit on open files to its
// hard limit: each stream holds a socket.
func raiseFileLimit() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil {
		l.Cur = l.Max
		syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}
