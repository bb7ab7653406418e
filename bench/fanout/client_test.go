package fanout

// This file is the listeners' process: S raw SSE streams over HTTP, each
// watching W URIs, that record when each notification arrives.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// clientEnv, set to a clientConfig as JSON, makes the test binary the
// listeners' process.
const clientEnv = "MCPRES_FANOUT_CLIENT"

// The protocol eras a run's streams speak.
const (
	listens  = "2026-07-28" // a subscriptions/listen stream each
	sessions = "2025-11-25" // a session each: initialize, resources/subscribe ×W, a GET stream
)

// perNetwork is how many streams the client opens from each source
// address: under serve's MaxListensPerCaller (16), so that each caller's
// caps stay at their defaults.
const perNetwork = 10

// clientNetwork returns the source address of the client's network i,
// 127.(20+i/256).(i%256).1: each a /24 of its own, so a caller of its
// own (serve.Options.IPv4Prefix). Linux routes all of 127.0.0.0/8 to
// the loopback interface.
func clientNetwork(i int) string { return fmt.Sprintf("127.%d.%d.1", 20+i/256, i%256) }

// A clientConfig is what the listeners' process opens.
type clientConfig struct {
	Base    string // http://host:port of the server
	Era     string // listens or sessions
	Streams int    // S
	Watch   int    // W
	URIs    int    // M
	Hot     bool   // every stream watches fan://r/0 too
}

// watched returns the resources stream s watches: W of them, spread so
// that each of the M has S·W/M watchers; if hot, fan://r/0 and W-1 of the
// others.
func (c clientConfig) watched(s int) []int {
	w := make([]int, 0, c.Watch)
	if c.Hot {
		w = append(w, 0)
		for j := range c.Watch - 1 {
			w = append(w, (s*(c.Watch-1)+j)%(c.URIs-1)+1)
		}
		return w
	}
	for j := range c.Watch {
		w = append(w, (s*c.Watch+j)%c.URIs)
	}
	return w
}

// An arrival is a notification as a stream read it: resource n, at t
// (Unix nanoseconds).
type arrival struct {
	n int32
	t int64
}

// A stream is one listener: its arrivals, and how it ended.
type stream struct {
	mu       sync.Mutex
	arrivals []arrival
	hangUp   func()
}

// opened is what the client prints once it has opened its streams.
type opened struct {
	Opened, Failed int
	FirstError     string
}

// progress answers "count": notifications received so far, and streams
// that ended.
type progress struct {
	Received, Ended int64
}

// runClient opens cfg's streams, prints opened as JSON, and then answers
// on its standard output each line of its standard input: "count" with
// progress, and "match" followed by a line of the driver's changes with
// a result. It hangs up when its standard input closes.
func runClient(cfg clientConfig) error {
	raiseFileLimit()
	var received, ended, wrongID atomic.Int64
	streams := make([]*stream, cfg.Streams)
	clients := make([]*http.Client, (cfg.Streams+perNetwork-1)/perNetwork)
	for i := range clients {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(clientNetwork(i))}}
		clients[i] = &http.Client{Transport: &http.Transport{DialContext: d.DialContext,
			MaxIdleConnsPerHost: perNetwork, MaxConnsPerHost: 0}}
	}
	var mu sync.Mutex
	var out opened
	parallel(64, cfg.Streams, func(s int) {
		st := &stream{}
		read := func(r *bufio.Reader) {
			for {
				line, err := r.ReadSlice('\n')
				if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
					ended.Add(1)
					return
				}
				n, id, ok := parseUpdated(line)
				if !ok {
					continue
				}
				t := time.Now().UnixNano()
				if cfg.Era == listens && id != int64(s+1) {
					wrongID.Add(1)
				}
				st.mu.Lock()
				st.arrivals = append(st.arrivals, arrival{int32(n), t})
				st.mu.Unlock()
				received.Add(1)
			}
		}
		var err error
		if cfg.Era == sessions {
			st.hangUp, err = openSession(clients[s/perNetwork], cfg, s, read)
		} else {
			st.hangUp, err = openListen(clients[s/perNetwork], cfg, s, read)
		}
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			if out.Failed == 0 {
				out.FirstError = err.Error()
			}
			out.Failed++
			return
		}
		out.Opened++
		streams[s] = st
	})
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(out); err != nil {
		return err
	}
	in := bufio.NewReader(os.Stdin)
	for {
		cmd, err := in.ReadString('\n')
		if err != nil {
			break
		}
		switch cmd {
		case "count\n":
			enc.Encode(progress{Received: received.Load(), Ended: ended.Load()})
		case "match\n":
			var changes []change
			line, _ := in.ReadBytes('\n')
			if err := json.Unmarshal(line, &changes); err != nil {
				return err
			}
			res := matchAll(cfg, streams, changes)
			res.WrongID = wrongID.Load()
			res.Ended = ended.Load()
			enc.Encode(res)
		}
	}
	for _, st := range streams {
		if st != nil {
			st.hangUp()
		}
	}
	return nil
}

// parseUpdated returns the resource and subscription ID (0 if none) of
// an SSE data line holding notifications/resources/updated of
// fan://r/{n}; ok is false for any other line. It parses nothing else.
func parseUpdated(line []byte) (n int, id int64, ok bool) {
	data, found := bytes.CutPrefix(line, []byte("data:"))
	if !found || !bytes.Contains(data, []byte(`"notifications/resources/updated"`)) {
		return 0, 0, false
	}
	_, rest, found := bytes.Cut(data, []byte(`"uri":"fan://r/`))
	if !found {
		return 0, 0, false
	}
	n, ok = leadingInt(rest)
	if _, rest, found := bytes.Cut(data, []byte(`"`+mcp.MetaKeySubscriptionID+`":`)); found {
		v, _ := leadingInt(rest)
		id = int64(v)
	}
	return n, id, ok
}

// leadingInt returns the decimal number b starts with.
func leadingInt(b []byte) (int, bool) {
	i := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	v, err := strconv.Atoi(string(b[:i]))
	return v, err == nil
}

// openListen opens stream s as a 2026-07-28 subscriptions/listen of its
// watched URIs, with request ID s+1, waits for the acknowledgment, and
// hands the rest of the stream to read in a goroutine of its own. It
// returns a function that hangs up.
func openListen(client *http.Client, cfg clientConfig, s int, read func(*bufio.Reader)) (func(), error) {
	uris := []string{}
	for _, n := range cfg.watched(s) {
		uris = append(uris, uriOf(n))
	}
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": s + 1, "method": protocol.MethodListen,
		"params": map[string]any{
			"_meta": map[string]any{
				mcp.MetaKeyProtocolVersion:    listens,
				mcp.MetaKeyClientInfo:         map[string]string{"name": "fanout", "version": "v0"},
				mcp.MetaKeyClientCapabilities: map[string]any{},
			},
			"notifications": map[string]any{"resourceSubscriptions": uris},
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, cfg.Base+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(protocol.HeaderProtocolVersion, listens)
	req.Header.Set(protocol.HeaderMethod, protocol.MethodListen)
	resp, err := client.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	hangUp := func() { cancel(); resp.Body.Close() }
	if resp.StatusCode != http.StatusOK {
		hangUp()
		return nil, fmt.Errorf("listen: status %d", resp.StatusCode)
	}
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			hangUp()
			return nil, fmt.Errorf("listen: no acknowledgment: %w", err)
		}
		if d, ok := bytes.CutPrefix([]byte(line), []byte("data:")); ok {
			if !bytes.Contains(d, []byte(protocol.NotificationSubscriptionsAcknowledged)) {
				hangUp()
				return nil, fmt.Errorf("listen: the first message is not the acknowledgment: %s", d)
			}
			break
		}
	}
	go read(r)
	return hangUp, nil
}

// openSession opens stream s as a 2025-11-25 session: initialize,
// notifications/initialized, resources/subscribe to each watched URI,
// and a GET stream, which it hands to read in a goroutine of its own. It
// returns a function that hangs up (and leaves the session to the
// server's timeout).
func openSession(client *http.Client, cfg clientConfig, s int, read func(*bufio.Reader)) (func(), error) {
	post := func(session string, msg map[string]any) (string, error) {
		msg["jsonrpc"] = "2.0"
		body, _ := json.Marshal(msg)
		req, _ := http.NewRequest(http.MethodPost, cfg.Base+"/mcp", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set(protocol.HeaderSessionID, session)
			req.Header.Set(protocol.HeaderProtocolVersion, sessions)
		}
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 || bytes.Contains(b, []byte(`"error"`)) {
			return "", fmt.Errorf("%v: status %d: %s", msg["method"], resp.StatusCode, b)
		}
		return resp.Header.Get(protocol.HeaderSessionID), nil
	}
	session, err := post("", map[string]any{"id": 0, "method": "initialize", "params": map[string]any{
		"protocolVersion": sessions, "capabilities": map[string]any{}, "clientInfo": map[string]string{"name": "fanout", "version": "v0"}}})
	if err != nil {
		return nil, err
	}
	if session == "" {
		return nil, errors.New("initialize: no session")
	}
	if _, err := post(session, map[string]any{"method": "notifications/initialized"}); err != nil {
		return nil, err
	}
	for i, n := range cfg.watched(s) {
		if _, err := post(session, map[string]any{"id": i + 1, "method": "resources/subscribe", "params": map[string]any{"uri": uriOf(n)}}); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Base+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(protocol.HeaderSessionID, session)
	req.Header.Set(protocol.HeaderProtocolVersion, sessions)
	resp, err := client.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	hangUp := func() { cancel(); resp.Body.Close() }
	if resp.StatusCode != http.StatusOK {
		hangUp()
		return nil, fmt.Errorf("GET stream: status %d", resp.StatusCode)
	}
	go read(bufio.NewReader(resp.Body))
	return hangUp, nil
}

// parallel calls f(0) to f(n-1), workers at a time, and returns when
// all have returned.
func parallel(workers, n int, f func(i int)) {
	work := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range work {
				f(i)
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
}
