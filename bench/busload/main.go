// Busload measures how changes travel between the replicas of a server:
// several replicas in one process, each a registry with its own bus and
// its own streamable HTTP endpoint on loopback, subscribers (go-sdk
// clients over HTTP, half of protocol 2025-11-25 with resources/subscribe,
// half of 2026-07-28 with subscriptions/listen) spread over them, and
// changes reported at a steady rate, each on the next replica in turn.
//
// For each bus it prints the latency from Changed to the notification at
// the client (p50, p99, max; and p99 apart for the subscribers on the
// replica that reported the change, its own delivery, and on the others,
// through the bus), the changes lost (a subscriber never told),
// and the cost of Changed on its caller, with the bus up and, where the
// bus has a broker to stop, with it down. The baseline is one replica
// with no bus, every subscriber on it: its own delivery.
//
//	go run ./bench/busload                      # none, hub, nats
//	MCPRES_TEST_POSTGRES_DSN=postgres://… go run ./bench/busload   # and postgres
//	bash scripts/postgres.sh go run ./bench/busload
//
// The run is bounded: -duration of changes per bus, then a second to
// drain. Latency includes the subscription window (-window), which
// gathers changes before they go out.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpres/mcpres/natsbus"
	"github.com/mcpres/mcpres/pgbus"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/mcpres/mcpres/subscribe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	natsserver "github.com/nats-io/nats-server/v2/server"
)

// config is what the flags set.
type config struct {
	replicas    int
	subscribers int
	uris        int
	rate        int
	duration    time.Duration
	window      time.Duration
	buses       []string
	dsn         string
}

func main() {
	var cfg config
	var buses string
	flag.IntVar(&cfg.replicas, "replicas", 3, "replicas, each a registry with its own bus and HTTP endpoint")
	flag.IntVar(&cfg.subscribers, "subscribers", 1000, "subscribers, spread over the replicas")
	flag.IntVar(&cfg.uris, "uris", 1000, "URIs the subscribers watch, each by subscribers/uris of them, on different replicas")
	flag.IntVar(&cfg.rate, "rate", 1000, "changes per second")
	flag.DurationVar(&cfg.duration, "duration", 10*time.Second, "how long changes are made, per bus")
	flag.DurationVar(&cfg.window, "window", 5*time.Millisecond, "the registries' subscription window")
	flag.StringVar(&buses, "bus", "", "buses to measure, in order, comma-separated: none (one replica, no bus), hub, nats, postgres (needs -dsn) (default none,hub,nats, and postgres with -dsn)")
	flag.StringVar(&cfg.dsn, "dsn", os.Getenv("MCPRES_TEST_POSTGRES_DSN"), "Postgres for the postgres bus (default $MCPRES_TEST_POSTGRES_DSN)")
	flag.Parse()
	switch {
	case buses != "":
		cfg.buses = strings.Split(buses, ",")
	case cfg.dsn != "":
		cfg.buses = []string{"none", "hub", "nats", "postgres"}
	default:
		cfg.buses = []string{"none", "hub", "nats"}
	}
	if cfg.replicas < 1 || cfg.subscribers < 1 || cfg.uris < 1 || cfg.rate < 1 || cfg.duration <= 0 || cfg.window <= 0 {
		fmt.Fprintln(os.Stderr, "busload: every number must be positive")
		os.Exit(2)
	}
	// The buses log outages at Warn: a broker stopped on purpose says so.
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))

	fmt.Printf("%d replicas, %d subscribers (half 2025-11-25, half 2026-07-28) on %d URIs, %d changes/s for %v, window %v\n\n",
		cfg.replicas, cfg.subscribers, cfg.uris, cfg.rate, cfg.duration, cfg.window)
	fmt.Printf("%-9s %9s %9s %9s %9s %9s %8s %9s %14s %14s %10s\n", "bus", "p50", "p99", "p99", "p99", "max", "lost", "notified", "Changed up", "Changed down", "lost down")
	fmt.Printf("%-9s %9s %9s %9s %9s %9s %8s %9s %14s %14s %10s\n", "", "", "", "local", "remote", "", "", "", "p50/p99", "p50/p99", "(local)")
	for _, name := range cfg.buses {
		res, err := run(cfg, name)
		if err != nil {
			fmt.Fprintf(os.Stderr, "busload: %s: %v\n", name, err)
			os.Exit(1)
		}
		res.print(name)
	}
}

// result is what one run measured.
type result struct {
	latencies  []time.Duration // Changed to notification, per change per subscriber
	local      []time.Duration // those where the subscriber is on the replica that reported the change
	remote     []time.Duration // those where it is on another one: through the bus
	lost       int             // changes a subscriber was never told of
	notified   int             // notifications received
	changedUp  []time.Duration // cost of each Changed, bus up
	changedOff []time.Duration // cost of each Changed, broker down (none: not measured)
	lostLocal  int             // broker down: local subscribers not told
}

func (r result) print(name string) {
	q := func(ds []time.Duration, p float64) string {
		if len(ds) == 0 {
			return "-"
		}
		slices.Sort(ds)
		return ms(ds[int(p*float64(len(ds)-1))])
	}
	down, lostLocal := "-", "-"
	if len(r.changedOff) > 0 {
		down, lostLocal = costs(r.changedOff), strconv.Itoa(r.lostLocal)
	}
	fmt.Printf("%-9s %9s %9s %9s %9s %9s %8d %9d %14s %14s %10s\n", name, q(r.latencies, 0.5), q(r.latencies, 0.99), q(r.local, 0.99), q(r.remote, 0.99), q(r.latencies, 1),
		r.lost, r.notified, costs(r.changedUp), down, lostLocal)
}

// costs returns the median and 99th percentile of ds, in nanoseconds.
func costs(ds []time.Duration) string {
	slices.Sort(ds)
	at := func(p float64) int64 { return ds[int(p*float64(len(ds)-1))].Nanoseconds() }
	return fmt.Sprintf("%d/%dns", at(0.5), at(0.99))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond)) }

// A replica is one registry, its bus and its HTTP endpoint.
type replica struct {
	reg   *resource.Registry
	url   string
	close func()
}

// buses makes a bus per replica for the named kind, and returns a
// function that stops the broker (nil if it has none to stop) and one that
// releases everything.
type busMaker struct {
	name  string
	hub   subscribe.Hub
	nats  *natsserver.Server
	dsn   string
	close []func()
}

func (m *busMaker) bus() (subscribe.Bus, error) {
	switch m.name {
	case "none":
		return nil, nil
	case "hub":
		return m.hub.Bus(), nil
	case "nats":
		if m.nats == nil {
			ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
			if err != nil {
				return nil, err
			}
			go ns.Start()
			if !ns.ReadyForConnections(10 * time.Second) {
				return nil, errors.New("NATS server did not start")
			}
			m.nats = ns
			m.close = append(m.close, ns.Shutdown)
		}
		b, err := natsbus.Connect(m.nats.ClientURL(), &natsbus.Options{Subject: "busload"})
		if err != nil {
			return nil, err
		}
		m.close = append(m.close, func() { b.Close() })
		return b, nil
	case "postgres":
		if m.dsn == "" {
			return nil, errors.New("needs -dsn or $MCPRES_TEST_POSTGRES_DSN")
		}
		b, err := pgbus.Open(context.Background(), m.dsn, &pgbus.Options{Channel: "busload"})
		if err != nil {
			return nil, err
		}
		m.close = append(m.close, func() { b.Close() })
		return b, nil
	}
	return nil, fmt.Errorf("unknown bus %q", m.name)
}

// stopBroker stops the broker, if the bus has one this program runs.
func (m *busMaker) stopBroker() bool {
	if m.nats == nil {
		return false
	}
	m.nats.Shutdown()
	m.nats.WaitForShutdown()
	return true
}

func (m *busMaker) release() {
	for i := len(m.close) - 1; i >= 0; i-- {
		m.close[i]()
	}
}

// uri is the i-th watched URI.
func uri(i int) string { return "load://item/" + strconv.Itoa(i) }

func newReplica(bus subscribe.Bus, window time.Duration) (*replica, error) {
	reg, err := resource.NewRegistry(&resource.Options{
		Logger:        slog.Default(),
		Subscriptions: resource.SubscriptionOptions{Window: window, Bus: bus},
	})
	if err != nil {
		return nil, err
	}
	err = reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "load://item/{n}", Name: "item", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest, _ resource.Vars) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "x"}}}, nil
		})
	if err != nil {
		return nil, err
	}
	server, err := reg.NewServer(&mcp.Implementation{Name: "busload", Version: "v0"}, &mcp.ServerOptions{Logger: slog.Default()})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	hs := &http.Server{Handler: serve.NewGoSDKHandler(server, nil)}
	go hs.Serve(ln)
	return &replica{reg: reg, url: "http://" + ln.Addr().String(), close: func() { hs.Close(); reg.Close() }}, nil
}

// tracker matches notifications to the changes they report.
type tracker struct {
	replicas  int
	mu        sync.Mutex
	changes   [][]change // per URI, in the order reported
	seen      []int      // per subscriber, how many changes of its URI it was told of
	latencies []time.Duration
	local     []time.Duration
	remote    []time.Duration
	notified  int
}

// A change is when a change was reported, and on which replica.
type change struct {
	at      time.Time
	replica int
}

// notify records that subscriber s, watching URI u, was told at of a
// change: of every change to u reported by then that it was not yet told
// of.
func (tr *tracker) notify(s, u int, at time.Time) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.notified++
	cs := tr.changes[u]
	for tr.seen[s] < len(cs) && !cs[tr.seen[s]].at.After(at) {
		c := cs[tr.seen[s]]
		d := at.Sub(c.at)
		tr.latencies = append(tr.latencies, d)
		if c.replica == s%tr.replicas {
			tr.local = append(tr.local, d)
		} else {
			tr.remote = append(tr.remote, d)
		}
		tr.seen[s]++
	}
}

// changed records a change to u, reported now on replica.
func (tr *tracker) changed(u, replica int, now time.Time) {
	tr.mu.Lock()
	tr.changes[u] = append(tr.changes[u], change{now, replica})
	tr.mu.Unlock()
}

func run(cfg config, name string) (res result, err error) {
	m := &busMaker{name: name, dsn: cfg.dsn}
	defer m.release()
	n := cfg.replicas
	if name == "none" {
		n = 1
	}
	var reps []*replica
	defer func() {
		for _, r := range reps {
			r.close()
		}
	}()
	for range n {
		bus, err := m.bus()
		if err != nil {
			return res, err
		}
		r, err := newReplica(bus, cfg.window)
		if err != nil {
			return res, err
		}
		reps = append(reps, r)
	}

	tr := &tracker{replicas: len(reps), changes: make([][]change, cfg.uris), seen: make([]int, cfg.subscribers)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sessions []*mcp.ClientSession
	defer func() {
		for _, cs := range sessions {
			cs.Close()
		}
	}()
	for s := range cfg.subscribers {
		s, u := s, s%cfg.uris
		version := "2025-11-25"
		if s%2 == 1 {
			version = "2026-07-28"
		}
		client := mcp.NewClient(&mcp.Implementation{Name: "busload", Version: "v0"}, &mcp.ClientOptions{
			ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
				tr.notify(s, u, time.Now())
			},
		})
		// Subscribers take the replicas in turn: those of one URI sit on
		// different replicas.
		rep := reps[s%len(reps)]
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: rep.url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			return res, fmt.Errorf("subscriber %d: %w", s, err)
		}
		sessions = append(sessions, cs)
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri(u)}); err != nil {
			return res, fmt.Errorf("subscriber %d: %w", s, err)
		}
	}
	// 2026-07-28 listens are acknowledged in the background.
	for deadline := time.Now().Add(30 * time.Second); ; {
		total := 0
		for _, r := range reps {
			k, _, _ := r.reg.SubscriptionStats()
			total += k
		}
		if total == cfg.subscribers {
			break
		}
		if time.Now().After(deadline) {
			return res, fmt.Errorf("%d of %d subscriptions recorded", total, cfg.subscribers)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // let every replica's bus settle

	total := int(cfg.duration.Seconds() * float64(cfg.rate))
	interval := time.Second / time.Duration(cfg.rate)
	res.changedUp = make([]time.Duration, 0, total)
	start := time.Now()
	for k := range total {
		if d := time.Until(start.Add(time.Duration(k) * interval)); d > 0 {
			time.Sleep(d)
		}
		u := k % cfg.uris
		rep := reps[k%len(reps)]
		tr.changed(u, k%len(reps), time.Now())
		t0 := time.Now()
		if err := rep.reg.Changed(uri(u)); err != nil {
			return res, err
		}
		res.changedUp = append(res.changedUp, time.Since(t0))
	}
	time.Sleep(time.Second) // drain

	tr.mu.Lock()
	res.latencies, res.local, res.remote = tr.latencies, tr.local, tr.remote
	res.notified = tr.notified
	for s := range cfg.subscribers {
		res.lost += len(tr.changes[s%cfg.uris]) - tr.seen[s]
	}
	tr.mu.Unlock()

	// The broker down: Changed still returns at once, and local
	// subscribers are still told.
	if m.stopBroker() {
		before := make([]int, cfg.subscribers)
		tr.mu.Lock()
		copy(before, tr.seen)
		tr.mu.Unlock()
		const calls = 100_000
		rep := reps[0]
		res.changedOff = make([]time.Duration, 0, calls)
		for k := range calls {
			u := k % cfg.uris
			if k < cfg.uris {
				tr.changed(u, 0, time.Now())
			}
			t0 := time.Now()
			rep.reg.Changed(uri(u))
			res.changedOff = append(res.changedOff, time.Since(t0))
		}
		time.Sleep(time.Second)
		tr.mu.Lock()
		for s := range cfg.subscribers {
			if s%len(reps) == 0 && tr.seen[s] == before[s] {
				res.lostLocal++ // a subscriber on replica 0 not told
			}
		}
		tr.mu.Unlock()
	}
	return res, nil
}
