package caps

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpres/mcpres/audit"
	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// network returns the source address of attacking network i,
// 127.(10+i/256).(i%256).1: each its own /24 (serve.Options.IPv4Prefix),
// so its own caller, and none the legitimate client's (127.0.2.0/24) nor
// the other attacks' (127.0.0.0/24, 127.0.1.0/24). Linux routes all of
// 127.0.0.0/8 to the loopback interface, so a socket binds to any of
// them with no set-up.
func network(i int) string { return fmt.Sprintf("127.%d.%d.1", 10+i/256, i%256) }

// address returns the source address of attacking address i, from one
// network: 127.0.0.(1+i), all one caller, as the attacks came
// (101 addresses of 127.0.0.0/24). i is under 254.
func address(i int) string { return fmt.Sprintf("127.0.0.%d", 1+i) }

// parallel calls f(0) to f(n-1), workers at a time, and returns when
// all have returned.
func parallel(workers, n int, f func(i int)) {
	work := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				f(i)
			}
		}()
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
}

// tally counts an attacker's refusals by HTTP status.
type tally struct {
	mu sync.Mutex
	m  map[int]int
}

// counts returns the counts, an empty map if none.
func (t *tally) counts() map[int]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		return map[int]int{}
	}
	return t.m
}

func (t *tally) add(status int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[int]int{}
	}
	t.m[status]++
}

// post sends body to the endpoint over a 2025-11-25 session (none if
// session is ""), reads the answer to its end, and returns its status
// and the session it names.
func post(client *http.Client, base string, body []byte, session string) (int, string, error) {
	req, err := http.NewRequest(http.MethodPost, base+"/mcp", bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set(protocol.HeaderSessionID, session)
		req.Header.Set(protocol.HeaderProtocolVersion, "2025-11-25")
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get(protocol.HeaderSessionID), nil
}

// sessionAttack is the session attack: each of addrs
// addresses (from(0) to from(addrs-1): see network and address) sends
// each initialize requests (2025-11-25), sixteen at a time in all, and
// never closes the sessions granted; then it pings each session once,
// which renews it. Hanging up deletes the sessions.
func sessionAttack(from func(int) string, addrs, each int) func(t *target) outcome {
	return func(t *target) outcome {
		clients := make([]*http.Client, addrs)
		for i := range clients {
			clients[i] = clientFrom(from(i), 2)
		}
		initialize, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
			"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]string{"name": "attacker", "version": "v0"},
		}})
		ping, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "ping"})
		type session struct {
			network int
			id      string
		}
		var mu sync.Mutex
		var sessions []session
		var refused tally
		var errs atomic.Int64
		start := time.Now()
		parallel(16, addrs*each, func(i int) {
			n := i / each
			status, id, err := post(clients[n], t.base, initialize, "")
			switch {
			case err != nil:
				errs.Add(1)
			case status == http.StatusOK && id != "":
				mu.Lock()
				sessions = append(sessions, session{n, id})
				mu.Unlock()
			default:
				refused.add(status)
			}
		})
		fill := time.Since(start)
		var pinged, gone atomic.Int64
		parallel(16, len(sessions), func(i int) {
			s := sessions[i]
			status, _, err := post(clients[s.network], t.base, ping, s.id)
			switch {
			case err != nil:
				errs.Add(1)
			case status == http.StatusOK:
				pinged.Add(1)
			default:
				gone.Add(1)
			}
		})
		metrics := map[string]float64{
			"fill-s":        fill.Seconds(),
			"pinged":        float64(pinged.Load()),
			"ping-refused":  float64(gone.Load()),
			"attack-errors": float64(errs.Load()),
		}
		return outcome{granted: len(sessions), refused: refused.counts(), metrics: metrics, hangUp: func() {
			parallel(8, len(sessions), func(i int) {
				s := sessions[i]
				req, _ := http.NewRequest(http.MethodDelete, t.base+"/mcp", nil)
				req.Header.Set(protocol.HeaderSessionID, s.id)
				req.Header.Set(protocol.HeaderProtocolVersion, "2025-11-25")
				if resp, err := clients[s.network].Do(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			})
			for _, c := range clients {
				c.CloseIdleConnections()
			}
		}}
	}
}

// streamAttack is the stream attack: each of addrs addresses
// (from(0) to from(addrs-1)) opens each empty subscriptions/listen
// streams (see listen), 32 at a time in all, and holds those granted
// open. streams-held is how many of the attacker's streams the server
// still held open at the height (it closes some for newcomers at its
// total); granted counts every acknowledged listen.
func streamAttack(from func(int) string, addrs, each int) func(t *target) outcome {
	return func(t *target) outcome {
		clients := make([]*http.Client, addrs)
		for i := range clients {
			clients[i] = clientFrom(from(i), each)
		}
		var mu sync.Mutex
		var hangUps []func()
		var refused tally
		var held, errs atomic.Int64
		start := time.Now()
		parallel(32, addrs*each, func(i int) {
			status, hangUp, err := listen(clients[i/each], t.base, nil, func() { held.Add(-1) })
			switch {
			case err != nil:
				errs.Add(1)
			case hangUp != nil:
				held.Add(1)
				mu.Lock()
				hangUps = append(hangUps, hangUp)
				mu.Unlock()
			default:
				refused.add(status)
			}
		})
		fill := time.Since(start)
		time.Sleep(200 * time.Millisecond) // real clock: the attacker's side sees the streams the server closed end
		metrics := map[string]float64{
			"fill-s":        fill.Seconds(),
			"streams-held":  float64(held.Load()),
			"attack-errors": float64(errs.Load()),
		}
		return outcome{granted: len(hangUps), refused: refused.counts(), metrics: metrics, hangUp: func() {
			for _, h := range hangUps {
				h()
			}
			for _, c := range clients {
				c.CloseIdleConnections()
			}
		}}
	}
}

// listen opens a 2026-07-28 subscriptions/listen to uris, as
// audit.ListenHTTP does, and returns the answer's HTTP status. No uris
// makes it an empty listen: resourcesListChanged alone, which subscribes
// to no URI, so costs no subscription bytes, yet holds the stream open
// (a listen that asks for nothing at all is answered and ended at once
// by go-sdk, and holds nothing). If the
// server acknowledged the listen, it returns a function that hangs up,
// and calls ended once the stream ends, whoever ends it; a refusal as a
// JSON-RPC error returns status 0.
func listen(client *http.Client, base string, uris []string, ended func()) (int, func(), error) {
	notifications := map[string]any{"resourceSubscriptions": uris}
	if len(uris) == 0 {
		notifications = map[string]any{"resourcesListChanged": true}
	}
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": 1, "method": protocol.MethodListen,
		"params": map[string]any{
			"_meta": map[string]any{
				mcp.MetaKeyProtocolVersion:    "2026-07-28",
				mcp.MetaKeyClientInfo:         map[string]string{"name": "attacker", "version": "v0"},
				mcp.MetaKeyClientCapabilities: map[string]any{},
			},
			"notifications": notifications,
		},
	})
	ctx, hangUp := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(protocol.HeaderProtocolVersion, "2026-07-28")
	req.Header.Set(protocol.HeaderMethod, protocol.MethodListen)
	resp, err := client.Do(req)
	if err != nil {
		hangUp()
		return 0, nil, err
	}
	stop := func() { hangUp(); resp.Body.Close() }
	if resp.StatusCode != http.StatusOK {
		stop()
		return resp.StatusCode, nil, nil
	}
	r := bufio.NewReader(resp.Body)
	var data string
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, err := io.ReadAll(r)
		if err != nil {
			stop()
			return 0, nil, err
		}
		data = string(b)
	}
	for data == "" {
		line, err := r.ReadString('\n')
		if err != nil {
			stop()
			return 0, nil, fmt.Errorf("listen: no acknowledgment: %w", err)
		}
		if d, ok := strings.CutPrefix(line, "data:"); ok {
			data = strings.TrimSpace(d)
		}
	}
	msg, err := jsonrpc.DecodeMessage([]byte(data))
	if err != nil {
		stop()
		return 0, nil, err
	}
	if req, ok := msg.(*jsonrpc.Request); !ok || req.Method != protocol.NotificationSubscriptionsAcknowledged {
		stop()
		if resp, ok := msg.(*jsonrpc.Response); ok && resp.Error != nil {
			return 0, nil, nil
		}
		return 0, nil, errors.New("listen: the first message is not the acknowledgment")
	}
	go func() {
		io.Copy(io.Discard, r)
		ended()
	}()
	return http.StatusOK, stop, nil
}

// legitNewSession opens a new 2025-11-25 session for the legitimate
// caller and reads once over it; it returns 1 if both succeed.
func legitNewSession(b *testing.B, t *target) float64 {
	hc := clientFrom(legitAddr, 2)
	defer hc.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "legit-new", Version: "v0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: t.base + "/mcp", HTTPClient: hc},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Logf("legitimate new session: %v", err)
		return 0
	}
	defer cs.Close()
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "caps://r/1"}); err != nil {
		b.Logf("legitimate read over a new session: %v", err)
		return 0
	}
	return 1
}

// legitNewListen opens a 2026-07-28 listen to caps://r/1 for the
// legitimate caller, with audit.ListenHTTP; it returns 1 if granted.
func legitNewListen(b *testing.B, t *target) float64 {
	hc := clientFrom(legitAddr, 2)
	defer hc.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := audit.ListenHTTP(ctx, hc, t.base+"/mcp", "2026-07-28", []string{"caps://r/1"})
	if err != nil {
		b.Logf("legitimate new listen: %v", err)
		return 0
	}
	stream.Close()
	return 1
}
