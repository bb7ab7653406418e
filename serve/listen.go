package serve

// This file serves the resource subscriptions of 2026-07-28
// subscriptions/listen streams at the edge, in front of a go-sdk server
// that a registry (Options.Registry) made: the registry subscribes the
// stream (resource.Registry.OpenListen), and the edge writes its
// acknowledgment and its notifications on the HTTP response itself. A
// stream then holds its HTTP request and nothing more: net/http's two
// goroutines of the connection, and no go-sdk session (whose four
// goroutines and buffers a stream would otherwise hold, and every
// garbage collection scan).
//
// The edge serves a listen only as go-sdk would, byte for byte (the
// contract test TestListenAtEdgeAsGoSDK compares them): one that asks
// for resource subscriptions alone, that go-sdk would accept, with an ID
// go-sdk echoes as it came. Anything else (list_changed flags, a request
// go-sdk would refuse) goes on to go-sdk, which answers it.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mcpres/mcpres/internal/origin"
	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/resource"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveListen serves req, a POST of a 2026-07-28 client, itself if it is
// a listen the edge serves, and reports whether it did. The body is left
// for go-sdk to read if it did not.
func (h *goSDKHandler) serveListen(w http.ResponseWriter, req *http.Request) bool {
	body, err := io.ReadAll(req.Body) // the edge read it already
	if err != nil {
		return false
	}
	q, id, ok := edgeListen(req, body)
	if !ok {
		req.Body = replayBody{bytes.NewReader(body), req.Body}
		return false
	}
	ctx, cancel := context.WithCancel(req.Context())
	defer cancel()
	s, err := newEdgeStream(w, id, cancel, ctx.Done())
	if err != nil {
		return false
	}
	end, err := h.reg.OpenListen(ctx, q, s)
	if err != nil {
		s.refuse(id, err)
		return true
	}
	defer end()
	n := q.Params.Notifications
	if n.ResourcesListChanged {
		s.listChanged = make(chan struct{}, 1)
		h.lists.add(s)
		defer h.lists.remove(s)
	}
	// A write blocked on a client that stopped reading is given up when
	// the listen ends, whichever goroutine is writing.
	defer context.AfterFunc(ctx, s.interrupt)()
	if s.acknowledge(n) {
		s.wait(ctx)
	}
	s.stop()
	return true
}

// A listChanged is the set of an edge's listen streams that take
// notifications/resources/list_changed, and the registry's call that
// tells them (Registry.Attach), while there are any.
type listChanged struct {
	reg *resource.Registry

	mu      sync.Mutex
	streams map[*edgeStream]struct{}
	detach  func() // nil while there is no stream
}

func (l *listChanged) add(s *edgeStream) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.streams == nil {
		l.streams = make(map[*edgeStream]struct{})
	}
	l.streams[s] = struct{}{}
	if l.detach == nil {
		l.detach = l.reg.Attach(l.changed)
	}
}

func (l *listChanged) remove(s *edgeStream) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.streams, s)
	if len(l.streams) == 0 && l.detach != nil {
		l.detach()
		l.detach = nil
	}
}

// changed tells each stream that the list changed; each stream's own
// handler writes it, so that a client that stopped reading holds up no
// other. A stream told already, and not yet written to, is told once.
func (l *listChanged) changed() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for s := range l.streams {
		select {
		case s.listChanged <- struct{}{}:
		default:
		}
	}
}

// edgeListen returns the listen req asks for, as go-sdk would decode it,
// and its ID, if it is one the edge serves: ok is false for anything go-sdk
// is to answer.
func edgeListen(req *http.Request, body []byte) (q *mcp.SubscriptionsListenRequest, id jsonrpc.ID, ok bool) {
	if !goSDKWouldServe(req) {
		return nil, id, false
	}
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		return nil, id, false
	}
	call, isCall := msg.(*jsonrpc.Request)
	if !isCall || call.Method != protocol.MethodListen || !call.IsCall() {
		return nil, id, false
	}
	switch call.ID.Raw().(type) {
	case string, int64:
	default:
		return nil, id, false
	}
	var params mcp.SubscriptionsListenParams
	if err := json.Unmarshal(call.Params, &params); err != nil {
		return nil, id, false
	}
	n := params.Notifications
	if n == nil || n.ToolsListChanged || n.PromptsListChanged || !n.ResourcesListChanged && len(n.ResourceSubscriptions) == 0 {
		return nil, id, false
	}
	if !metaAsGoSDKTakesIt(params.Meta) {
		return nil, id, false
	}
	extra := &mcp.RequestExtra{TokenInfo: auth.TokenInfoFromContext(req.Context()), Header: req.Header}
	return &mcp.SubscriptionsListenRequest{Params: &params, Extra: extra}, call.ID, true
}

// goSDKWouldServe reports whether go-sdk's stateless handler would serve
// req, a POST, rather than refuse it before reading its body: its Host
// (go-sdk's DNS rebinding protection, which the edge's Origin check
// leaves on), Content-Type, Accept and protocol version.
func goSDKWouldServe(req *http.Request) bool {
	if origin.Rebinding(req) {
		return false
	}
	if req.Header.Get(protocol.HeaderProtocolVersion) != protocol.SessionlessSince {
		return false // a later version go-sdk may not speak
	}
	mediaType, _, _ := strings.Cut(req.Header.Get("Content-Type"), ";")
	if !strings.EqualFold(strings.TrimSpace(mediaType), "application/json") {
		return false
	}
	var jsonOK, streamOK bool
	for _, v := range req.Header.Values("Accept") {
		for raw := range strings.SplitSeq(v, ",") {
			base, _, _ := strings.Cut(raw, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json":
				jsonOK = true
			case "text/event-stream":
				streamOK = true
			}
		}
	}
	return jsonOK && streamOK
}

// metaAsGoSDKTakesIt reports whether go-sdk takes meta, a 2026-07-28
// request's _meta, without an error: its protocol version is the
// header's (the edge checked it), its clientCapabilities an object, and
// its clientInfo, if any, an implementation.
func metaAsGoSDKTakesIt(meta mcp.Meta) bool {
	if v, _ := meta[mcp.MetaKeyProtocolVersion].(string); v != protocol.SessionlessSince {
		return false
	}
	if _, ok := meta[mcp.MetaKeyClientCapabilities].(map[string]any); !ok {
		return false
	}
	if info, present := meta[mcp.MetaKeyClientInfo]; present {
		b, err := json.Marshal(info)
		var impl *mcp.Implementation
		if err != nil || json.Unmarshal(b, &impl) != nil {
			return false
		}
	}
	return true
}

// An edgeStream is a listen stream the edge serves: the registry's
// resource.ListenStream, writing on the HTTP response. Updated writes a
// notification into the response's buffer, Flush sends it; nothing is
// written before the acknowledgment, nor after the handler returns.
type edgeStream struct {
	w      http.ResponseWriter
	rc     *http.ResponseController // of w
	cancel context.CancelFunc
	done   <-chan struct{}
	acked  chan struct{} // closed once the acknowledgment is written, or the stream ended
	prefix []byte        // of each notification, up to its URI
	id     jsonrpc.ID
	// listChanged is told when the resource list changed, for a listen
	// that asked for it; nil for one that did not.
	listChanged chan struct{}

	mu    sync.Mutex
	ended bool   // the handler returns, or a write failed: write nothing more
	buf   []byte // the notification being written
}

var errStreamEnded = errors.New("serve: listen stream ended")

// updatedSuffix ends each notification, after its URI.
const updatedSuffix = "}}\n\n"

// newEdgeStream returns the stream of the listen id on w, which cancel
// ends and done tells the end of.
func newEdgeStream(w http.ResponseWriter, id jsonrpc.ID, cancel context.CancelFunc, done <-chan struct{}) (*edgeStream, error) {
	prefix, err := updatedPrefix(mcp.Meta{mcp.MetaKeySubscriptionID: id.Raw()})
	if err != nil {
		return nil, err
	}
	return &edgeStream{w: w, rc: http.NewResponseController(w), cancel: cancel, done: done, acked: make(chan struct{}), prefix: prefix, id: id}, nil
}

// ID is "": a 2026-07-28 stream has no session.
func (s *edgeStream) ID() string { return "" }

// Done is closed when the listen ends.
func (s *edgeStream) Done() <-chan struct{} { return s.done }

// Close ends the listen, to make room at a total of the registry's.
func (s *edgeStream) Close() { s.cancel() }

// Updated writes notifications/resources/updated of uri, with the
// listen's subscription ID, into the response's buffer, once the
// acknowledgment is written; Flush sends it. The registry calls it only
// for a resource the listen named: 2026-07-28 (basic/patterns/
// subscriptions) says "The server **MUST NOT** send notification types
// the client has not explicitly requested."
func (s *edgeStream) Updated(ctx context.Context, uri string) error {
	select {
	case <-s.acked: // acknowledged long since, most times: no lock taken
	default:
		select {
		case <-s.acked:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return errStreamEnded
	}
	s.buf = appendUpdated(s.buf[:0], s.prefix, uri)
	if _, err := s.w.Write(s.buf); err != nil {
		s.fail()
		return err
	}
	return nil
}

// Flush sends the notifications Updated wrote.
func (s *edgeStream) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return errStreamEnded
	}
	if err := s.rc.Flush(); err != nil {
		s.fail()
		return err
	}
	return nil
}

// fail ends the stream after a failed write. s.mu must be held.
func (s *edgeStream) fail() {
	s.ended = true
	s.cancel()
}

// acknowledge writes the header and the acknowledgment of the listen,
// agreeing to n, as go-sdk writes them, and lets the notifications go. It
// reports whether the stream is still open.
func (s *edgeStream) acknowledge(n *mcp.NotificationSubscriptions) bool {
	params, err := marshal(&mcp.SubscriptionsAcknowledgedParams{
		Meta: mcp.Meta{mcp.MetaKeySubscriptionID: s.id.Raw()},
		Notifications: mcp.NotificationSubscriptions{
			ResourcesListChanged:  n.ResourcesListChanged,
			ResourceSubscriptions: n.ResourceSubscriptions,
		},
	})
	var msg []byte
	if err == nil {
		msg, err = jsonrpc.EncodeMessage(&jsonrpc.Request{Method: protocol.NotificationSubscriptionsAcknowledged, Params: params})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	defer close(s.acked)
	if err != nil {
		s.fail()
		return false
	}
	h := s.w.Header()
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("Content-Type", "text/event-stream")
	h.Set("Connection", "keep-alive")
	if err := writeEvent(s.w, msg); err != nil {
		s.fail()
		return false
	}
	return true
}

// wait holds the stream open until ctx ends, writing
// notifications/resources/list_changed, as go-sdk writes it, each time
// the list changed.
func (s *edgeStream) wait(ctx context.Context) {
	var listChanged []byte
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.listChanged:
		}
		if listChanged == nil {
			params, err := marshal(&mcp.ResourceListChangedParams{Meta: mcp.Meta{mcp.MetaKeySubscriptionID: s.id.Raw()}})
			if err == nil {
				listChanged, err = jsonrpc.EncodeMessage(&jsonrpc.Request{Method: protocol.NotificationListChanged, Params: params})
			}
			if err != nil {
				return
			}
		}
		s.mu.Lock()
		if !s.ended && writeEvent(s.w, listChanged) != nil {
			s.fail()
		}
		s.mu.Unlock()
	}
}

// refuse answers the listen id with err, as go-sdk answers a listen its
// handler refused: the codes the 2026-07-28 transport gives an HTTP
// status as a JSON body with it, any other as the stream's one event.
func (s *edgeStream) refuse(id jsonrpc.ID, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	close(s.acked)
	msg, encErr := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: err})
	if encErr != nil {
		http.Error(s.w, "could not encode the refusal", http.StatusInternalServerError)
		return
	}
	h := s.w.Header()
	h.Set("Cache-Control", "no-cache, no-transform")
	var werr *jsonrpc.Error
	status := 0
	if errors.As(err, &werr) {
		switch werr.Code {
		case jsonrpc.CodeMethodNotFound:
			status = http.StatusNotFound
		case jsonrpc.CodeInvalidParams, mcp.CodeUnsupportedProtocolVersion, mcp.CodeMissingRequiredClientCapabilities:
			status = http.StatusBadRequest
		}
	}
	if status != 0 {
		h.Set("Connection", "keep-alive")
		h.Set("Content-Type", "application/json")
		s.w.WriteHeader(status)
		_, _ = s.w.Write(msg)
		return
	}
	h.Set("Content-Type", "text/event-stream")
	h.Set("Connection", "keep-alive")
	_ = writeEvent(s.w, msg)
}

// writeEvent writes msg as one SSE message event and flushes it.
func writeEvent(w http.ResponseWriter, msg []byte) error {
	ev := make([]byte, 0, len(msg)+len("event: message\ndata: \n\n"))
	ev = append(append(append(ev, "event: message\ndata: "...), msg...), "\n\n"...)
	if _, err := w.Write(ev); err != nil {
		return err
	}
	return http.NewResponseController(w).Flush()
}

// interrupt ends the stream once the listen has: nothing is written
// after, and a write under way, blocked on a client that stopped
// reading, is given up at once.
func (s *edgeStream) interrupt() { endOrInterrupt(&s.mu, &s.ended, s.rc) }

// endOrInterrupt ends a stream written under mu, which sets ended, once
// its request has: if no write is under way, ended is set and none
// starts; else the write, blocked on a client that stopped reading, is
// given up at once (a write deadline of now).
func endOrInterrupt(mu *sync.Mutex, ended *bool, rc *http.ResponseController) {
	if mu.TryLock() {
		*ended = true
		mu.Unlock()
		return
	}
	_ = rc.SetWriteDeadline(time.Now())
}

// stop ends the stream before the handler returns: nothing is written
// after.
func (s *edgeStream) stop() {
	s.interrupt()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
}

// updatedPrefix returns the start of a notifications/resources/updated
// event whose params hold meta (none if nil) and a URI, up to the URI,
// as go-sdk encodes and writes it with no event ID: "event: message",
// then "data: " and the message; appendUpdated adds the rest.
func updatedPrefix(meta mcp.Meta) ([]byte, error) {
	// The notification, as go-sdk encodes it, with a URI that marks
	// where each notification's URI goes.
	const mark = "\x00uri\x00"
	params, err := marshal(&mcp.ResourceUpdatedNotificationParams{URI: mark, Meta: meta})
	if err != nil {
		return nil, err
	}
	msg, err := jsonrpc.EncodeMessage(&jsonrpc.Request{Method: protocol.NotificationResourceUpdated, Params: params})
	if err != nil {
		return nil, err
	}
	quoted, _ := marshal(mark)
	before, after, found := bytes.Cut(msg, quoted)
	if !found || string(after) != "}}" {
		return nil, errors.New("serve: unexpected encoding of resources/updated")
	}
	return append([]byte("event: message\ndata: "), before...), nil
}

// appendUpdated appends to b the notifications/resources/updated event
// of uri that prefix (updatedPrefix's) starts.
func appendUpdated(b, prefix []byte, uri string) []byte {
	return append(appendJSONString(append(b, prefix...), uri), updatedSuffix...)
}

// marshal encodes v as go-sdk encodes a message: as json.Marshal, but
// with <, > and & as they are.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// appendJSONString appends s to b as marshal encodes a string, writing
// printable ASCII without '"' or '\\' as it is, without a call.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			q, _ := marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
