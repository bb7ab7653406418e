package fanout

// This file is the floor server: no MCP server at all, only what any
// server that writes each notification to each stream as it is made
// must spend. It answers the listeners just enough to open their
// streams, and the driver's loop writes each change's notification,
// encoded once, to each stream that watches it: one Write and one Flush
// of the http.ResponseWriter, as go-sdk and mcpres each do. Its CPU per
// notification is the bound the other servers' ratios are read against:
// a server within 0.7× of go-sdk's must spend no more than that beyond
// the floor.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A floorServer is the floor's endpoint and its streams, by the URIs
// they watch.
type floorServer struct {
	mu       sync.Mutex
	watchers map[string][]*floorStream
	sessions map[string][]string // a 2025-11-25 session's URIs, until its GET stream opens
	nextID   int
}

// A floorStream is one open stream: a listen's POST response or a
// session's GET.
type floorStream struct {
	mu sync.Mutex
	w  http.ResponseWriter
	f  http.Flusher
	id json.RawMessage // the listen's request ID; nil for a session
}

func newFloor() *floorServer {
	return &floorServer{watchers: make(map[string][]*floorStream), sessions: make(map[string][]string)}
}

// ServeHTTP answers what the listeners send (client_test.go): a
// subscriptions/listen POST, which it holds open after its
// acknowledgment; initialize, notifications/initialized and
// resources/subscribe POSTs of a session, with results the listeners
// take; and a session's GET, which it holds open.
func (f *floorServer) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodGet {
		f.mu.Lock()
		uris := f.sessions[req.Header.Get(protocol.HeaderSessionID)]
		delete(f.sessions, req.Header.Get(protocol.HeaderSessionID))
		f.mu.Unlock()
		f.hold(w, req, uris, nil, nil)
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			URI           string `json:"uri"`
			Notifications struct {
				ResourceSubscriptions []string `json:"resourceSubscriptions"`
			} `json:"notifications"`
		} `json:"params"`
	}
	if err := json.NewDecoder(req.Body).Decode(&msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	result := func(v string) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"result":` + v + `}`))
	}
	switch msg.Method {
	case protocol.MethodListen:
		ack, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": protocol.NotificationSubscriptionsAcknowledged,
			"params": map[string]any{"_meta": map[string]any{mcp.MetaKeySubscriptionID: msg.ID},
				"notifications": msg.Params.Notifications}})
		f.hold(w, req, msg.Params.Notifications.ResourceSubscriptions, msg.ID, ack)
	case "initialize":
		f.mu.Lock()
		f.nextID++
		session := strconv.Itoa(f.nextID)
		f.sessions[session] = nil
		f.mu.Unlock()
		w.Header().Set(protocol.HeaderSessionID, session)
		result(`{"protocolVersion":"` + sessions + `","capabilities":{"resources":{"subscribe":true}},"serverInfo":{"name":"floor","version":"v0"}}`)
	case "notifications/initialized":
		w.WriteHeader(http.StatusAccepted)
	case "resources/subscribe":
		session := req.Header.Get(protocol.HeaderSessionID)
		f.mu.Lock()
		f.sessions[session] = append(f.sessions[session], msg.Params.URI)
		f.mu.Unlock()
		result(`{}`)
	default:
		http.Error(w, "floor: not served", http.StatusNotFound)
	}
}

// hold opens the stream w, writes first on it if not nil, makes it a
// watcher of uris, and holds it until the request ends.
func (f *floorServer) hold(w http.ResponseWriter, req *http.Request, uris []string, id json.RawMessage, first []byte) {
	s := &floorStream{w: w, f: w.(http.Flusher), id: id}
	s.mu.Lock() // a change waits for the header and first
	f.mu.Lock()
	for _, uri := range uris {
		f.watchers[uri] = append(f.watchers[uri], s)
	}
	f.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	if first != nil {
		w.Write(event(first))
	}
	s.f.Flush()
	s.mu.Unlock()
	<-req.Context().Done()
	s.mu.Lock() // nothing is written once the handler returns
	defer s.mu.Unlock()
	s.w = nil
}

// changed writes uri's notification to each stream that watches it, in
// the caller's loop: one Write and one Flush each.
func (f *floorServer) changed(uri string) {
	f.mu.Lock()
	watchers := f.watchers[uri]
	f.mu.Unlock()
	var plain []byte // a session's, the same for each
	for _, s := range watchers {
		var ev []byte
		if s.id == nil {
			if plain == nil {
				plain = event(updated(uri, nil))
			}
			ev = plain
		} else {
			ev = event(updated(uri, s.id))
		}
		s.mu.Lock()
		if s.w != nil {
			s.w.Write(ev)
			s.f.Flush()
		}
		s.mu.Unlock()
	}
}

// updated encodes notifications/resources/updated of uri, with the
// subscription ID id if not nil.
func updated(uri string, id json.RawMessage) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","method":"` + protocol.NotificationResourceUpdated + `","params":{`)
	if id != nil {
		b.WriteString(`"_meta":{"` + mcp.MetaKeySubscriptionID + `":` + string(id) + `},`)
	}
	b.WriteString(`"uri":` + strconv.Quote(uri) + `}}`)
	return b.Bytes()
}

// event makes msg one SSE message event.
func event(msg []byte) []byte {
	return append(append([]byte("event: message\ndata: "), msg...), "\n\n"...)
}

// TestFloor opens a listen and a session on the floor, as the listeners
// do, and checks that a change reaches both, the listen's with its
// subscription ID.
func TestFloor(t *testing.T) {
	f := newFloor()
	srv := httptest.NewServer(f)
	defer srv.Close()
	cfg := clientConfig{Base: srv.URL, Streams: 2, Watch: 10, URIs: 10} // each watches every URI
	type got struct{ n, id int }
	arrived := make(chan got, 2)
	read := func(r *bufio.Reader) {
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				return
			}
			if n, id, ok := parseUpdated(line); ok {
				arrived <- got{n, int(id)}
			}
		}
	}
	cfg.Era = listens
	hangUp, err := openListen(srv.Client(), cfg, 0, read)
	if err != nil {
		t.Fatal(err)
	}
	defer hangUp()
	cfg.Era = sessions
	if hangUp, err = openSession(srv.Client(), cfg, 1, read); err != nil {
		t.Fatal(err)
	}
	defer hangUp()

	f.changed(uriOf(3))
	a, b := <-arrived, <-arrived
	if a.id == 0 {
		a, b = b, a
	}
	if a != (got{3, 1}) || b != (got{3, 0}) {
		t.Errorf("arrived %+v and %+v; want resource 3 on the listen (subscription ID 1) and on the session (none)", a, b)
	}
}
