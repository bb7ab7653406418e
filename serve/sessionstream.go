package serve

// This file attaches the GET stream of each session (before 2026-07-28)
// of a go-sdk server that a registry made (Options.Registry) to the
// registry, whose sending of a run of notifications to a session that
// fell behind then holds the stream's flushes until the last is written:
// one write for the run, not one each (resource.AttachSessionStream).
// go-sdk writes every byte of the stream, as without the edge; only
// when its flushes reach the socket changes.

import (
	"context"
	"net/http"
	"sync"

	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/resource"
)

// serveSessionStream has go-sdk serve req, a GET of a session's stream,
// with w as a sessionStream attached to the registry once go-sdk has
// accepted the stream.
func (h *goSDKHandler) serveSessionStream(w http.ResponseWriter, req *http.Request) {
	s := &sessionStream{ResponseWriter: w, rc: http.NewResponseController(w), reg: h.reg, id: req.Header.Get(protocol.HeaderSessionID)}
	// A flush blocked on a client that stopped reading is given up when
	// the request ends.
	defer context.AfterFunc(req.Context(), s.interrupt)()
	h.stateful.ServeHTTP(s, req)
	s.end()
}

// A sessionStream is the response of a session's GET stream, as go-sdk
// writes it, whose flushes the registry can hold (resource.SessionStream).
type sessionStream struct {
	http.ResponseWriter
	rc  *http.ResponseController
	reg *resource.Registry
	id  string

	detach func() // set by WriteHeader, in go-sdk's handler; nil until then

	mu      sync.Mutex
	held    bool // flushes wait for Release
	flushes bool // a flush waits
	ended   bool // the handler returned: nothing more is written
}

// WriteHeader writes the header, and once go-sdk has accepted the stream
// (200, an event stream), attaches it to the registry. go-sdk calls it
// from the handler's goroutine, before any event (behaviour 5 of
// gosdk.go), so detach needs no lock.
func (s *sessionStream) WriteHeader(code int) {
	s.ResponseWriter.WriteHeader(code)
	if code == http.StatusOK && s.detach == nil && isEventStream(s.Header().Get("Content-Type")) {
		s.detach = s.reg.AttachSessionStream(s.id, s)
	}
}

// Flush flushes the response, for http.ResponseController's Flush, as
// go-sdk calls it, unless the registry holds the flushes.
func (s *sessionStream) Flush() { _ = s.FlushError() }

// FlushError is Flush, for http.ResponseController, which prefers it.
func (s *sessionStream) FlushError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.ended:
		return errStreamEnded
	case s.held:
		s.flushes = true
		return nil
	}
	return s.rc.Flush()
}

// Unwrap returns the ResponseWriter beneath, for http.ResponseController.
func (s *sessionStream) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Hold makes the flushes wait until Release.
func (s *sessionStream) Hold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = true
}

// Release ends Hold, and makes the flush that waited; on a stream that
// has ended, nothing.
func (s *sessionStream) Release() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held = false
	if !s.flushes || s.ended {
		return nil
	}
	s.flushes = false
	return s.rc.Flush()
}

// end detaches the stream once go-sdk's handler has returned: nothing is
// flushed after (net/http sends what is left in the buffer as the
// response ends).
func (s *sessionStream) end() {
	if s.detach != nil {
		s.detach()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
}

// interrupt ends the stream once the request has: nothing is flushed
// after, and a flush under way, blocked on a client that stopped reading,
// is given up at once.
func (s *sessionStream) interrupt() { endOrInterrupt(&s.mu, &s.ended, s.rc) }
