package serve

// This file holds what keeps the event streams of the edge open through
// proxies and load balancers: the X-Accel-Buffering header, and an SSE
// comment on a stream that has been quiet for a while.

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// DefaultKeepAlive is how long an event stream may stay quiet before it
// gets an SSE comment, unless Options.KeepAlive says otherwise. Load
// balancers and proxies commonly close a connection idle for 60 s
// (nginx's proxy_read_timeout, AWS's Application Load Balancer); 25 s
// is well below that.
const DefaultKeepAlive = 25 * time.Second

// keepAliveComment is the SSE comment a quiet event stream gets: a line
// beginning with a colon, which clients ignore, then a blank line, so that
// the stream is at the start of an event again.
const keepAliveComment = ": keepalive\n\n"

// X-Accel-Buffering and the comments follow the specification, 2026-07-28,
// transports, Streamable HTTP, Receiving Messages: "When initiating an SSE
// stream, servers SHOULD include the X-Accel-Buffering: no header in the
// HTTP response." And: "For long-lived streams — in particular the
// subscriptions/listen response stream — servers are encouraged to
// periodically emit an SSE comment line". Older versions' GET streams, as
// quiet and as long-lived, get the same.

// A keepAliveWriter is the http.ResponseWriter of one response, which
// writes a comment on it if it is an event stream that has been quiet
// for period.
//
// go-sdk (v1.8) writes each event with one Write, then flushes, from
// whichever goroutine sends it; a comment must never land inside an event.
// So Write, WriteHeader, Flush and the comment are serialized by mu, and a
// comment is written only where the stream is at the start of an event:
// at its beginning, or after a blank line ("\n\n" or "\r\n\r\n"), which
// ends every event. An event written in several Writes, quiet in between,
// gets no comment inside it.
//
// One time.AfterFunc timer per event stream, started when its header is
// written and stopped when the handler returns, writes the comments; a
// response that is not an event stream has none. Nothing is written after
// the handler returns.
type keepAliveWriter struct {
	w      http.ResponseWriter
	period time.Duration // negative: no comments

	mu        sync.Mutex
	committed bool        // the header is written (WriteHeader, or a first Write or Flush)
	stream    bool        // the response is an event stream that gets comments
	done      bool        // the handler returned, or a comment failed: write nothing more
	timer     *time.Timer // of a stream
	last      time.Time   // when the stream last had bytes written
	written   bool        // whether the stream has had bytes written
	tail      uint32      // the last four bytes written, the latest lowest
}

func (k *keepAliveWriter) Header() http.Header { return k.w.Header() }

func (k *keepAliveWriter) WriteHeader(code int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.commit(code)
	k.w.WriteHeader(code)
}

func (k *keepAliveWriter) Write(p []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.commit(http.StatusOK) // as net/http does, if WriteHeader was not called
	n, err := k.w.Write(p)
	if k.stream {
		k.track(p[:n])
	}
	return n, err
}

// Flush flushes the response, for go-sdk's http.NewResponseController(w).Flush().
func (k *keepAliveWriter) Flush() { _ = k.FlushError() }

// FlushError is Flush, for http.ResponseController, which prefers it.
func (k *keepAliveWriter) FlushError() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.commit(http.StatusOK) // a flush writes the header
	if f, ok := k.w.(interface{ FlushError() error }); ok {
		return f.FlushError() // net/http's, without a controller made for each flush
	}
	return http.NewResponseController(k.w).Flush()
}

// Unwrap returns the ResponseWriter beneath, for http.ResponseController.
func (k *keepAliveWriter) Unwrap() http.ResponseWriter { return k.w }

// commit notes the header of status code about to be written: an event
// stream's gets X-Accel-Buffering, and a successful one its timer. It is
// called with k.mu held, before the header is written; once the header is
// written it does nothing.
func (k *keepAliveWriter) commit(code int) {
	if k.committed || code < 200 { // an informational header comes before the real one
		return
	}
	k.committed = true
	if !isEventStream(k.w.Header().Get("Content-Type")) {
		return
	}
	k.w.Header().Set("X-Accel-Buffering", "no")
	if k.period > 0 && code/100 == 2 {
		k.stream = true
		k.last = time.Now()
		k.timer = time.AfterFunc(k.period, k.quiet)
	}
}

// track notes p, just written on the stream. It is called with k.mu held.
func (k *keepAliveWriter) track(p []byte) {
	if len(p) == 0 {
		return
	}
	k.written = true
	k.last = time.Now()
	for _, c := range p[max(0, len(p)-4):] {
		k.tail = k.tail<<8 | uint32(c)
	}
}

// atEventStart reports whether the stream is at the start of an event,
// where a comment may go. It is called with k.mu held.
func (k *keepAliveWriter) atEventStart() bool {
	return !k.written || k.tail&0xffff == '\n'<<8|'\n' || k.tail == '\r'<<24|'\n'<<16|'\r'<<8|'\n'
}

// quiet runs when the timer fires: it writes a comment if the stream has
// been quiet for the period, and sets the timer for the end of the next
// one.
func (k *keepAliveWriter) quiet() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.done {
		return
	}
	if since := time.Since(k.last); since < k.period {
		k.timer.Reset(k.period - since) // written on since the timer was set
		return
	}
	if k.atEventStart() {
		if _, err := io.WriteString(k.w, keepAliveComment); err != nil {
			k.done = true // the client is gone; the handler will learn it too
			return
		}
		_ = http.NewResponseController(k.w).Flush()
		k.track([]byte(keepAliveComment))
	}
	// In the middle of an event, the comment waits for a period more; the
	// rest of the event resets the wait.
	k.timer.Reset(k.period)
}

// stop ends the comments, once the handler has returned.
func (k *keepAliveWriter) stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.done = true
	if k.timer != nil {
		k.timer.Stop()
	}
}

// isEventStream reports whether contentType is that of an event stream.
func isEventStream(contentType string) bool {
	mediaType, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(mediaType), "text/event-stream")
}
