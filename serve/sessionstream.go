package serve

// This file attaches the GET stream of each session (before 2026-07-28)
// of a go-sdk server that a registry made (Options.Registry) to the
// registry, whose sending of a run of notifications to a session that
// fell behind then holds the stream's flushes until the last is written:
// one write for the run, not one each (resource.AttachSessionStream).
// Where go-sdk numbers none of the stream's events (no EventStore), the
// registry also writes each resources/updated whose params are the URI
// alone on it itself (writableStream, a resource.SessionWriter), as
// go-sdk would write it, between go-sdk's events, each of which go-sdk
// writes whole (behaviour 5 of gosdk.go); the contract test
// TestSessionStreamAsGoSDK compares the bytes.

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
	s := &sessionStream{ResponseWriter: w, rc: http.NewResponseController(w), reg: h.reg, id: req.Header.Get(protocol.HeaderSessionID), updated: h.updated}
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

	// updated is the start of a notifications/resources/updated event,
	// up to its URI, as go-sdk writes it, if the registry may write them
	// itself (writableStream); nil if go-sdk numbers the stream's events.
	updated []byte

	detach func() // set by WriteHeader, in go-sdk's handler; nil until then

	mu      sync.Mutex
	held    bool   // flushes wait for Release
	flushes bool   // a flush waits
	ended   bool   // the handler returned: nothing more is written
	buf     []byte // the event writableStream is writing
}

// WriteHeader writes the header, and once go-sdk has accepted the stream
// (200, an event stream), attaches it to the registry. go-sdk calls it
// from the handler's goroutine, before any event (behaviour 5 of
// gosdk.go), so detach needs no lock.
func (s *sessionStream) WriteHeader(code int) {
	s.ResponseWriter.WriteHeader(code)
	if code == http.StatusOK && s.detach == nil && isEventStream(s.Header().Get("Content-Type")) {
		var stream resource.SessionStream = s
		if s.updated != nil {
			stream = writableStream{s}
		}
		s.detach = s.reg.AttachSessionStream(s.id, stream)
	}
}

// Write writes p, one of go-sdk's events (behaviour 5 of gosdk.go),
// whole: none of the registry's is written within it.
func (s *sessionStream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ResponseWriter.Write(p)
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

// A writableStream is a sessionStream on which the registry writes each
// notifications/resources/updated itself, as go-sdk writes it
// (resource.SessionWriter): the stream of a go-sdk handler with no
// EventStore, whose events go-sdk does not number. Each is written here
// in go-sdk's place, never beside it (the registry then does not call
// go-sdk's chain): the 2025-11-25 transport (basic/transports, Multiple
// Connections) says "The server MUST send each of its JSON-RPC messages
// on only one of the connected streams". It carries no event ID, as
// go-sdk's do not here: "Servers MAY attach an id field to their SSE
// events" and "If present, the ID MUST be globally unique across all
// streams within that session" (Resumability and Redelivery); where
// go-sdk numbers its events, an event of ours without one would be
// missing from what a resuming client is replayed, so the edge writes
// none there.
type writableStream struct{ *sessionStream }

// Updated writes notifications/resources/updated of uri into the
// response's buffer, between go-sdk's events; FlushUpdated sends it.
func (s writableStream) Updated(uri string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return errStreamEnded
	}
	s.buf = appendUpdated(s.buf[:0], s.updated, uri)
	if _, err := s.ResponseWriter.Write(s.buf); err != nil {
		s.ended = true
		return err
	}
	return nil
}

// FlushUpdated sends what Updated wrote, and any flush go-sdk's events
// wait for.
func (s writableStream) FlushUpdated() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return errStreamEnded
	}
	s.flushes = false
	return s.rc.Flush()
}
