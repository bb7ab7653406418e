package serve

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// The keep-alive tests run on synctest's fake clock, with this period.
const testKeepAlive = 10 * time.Second

// A recorder is the http.ResponseWriter of net/http, as far as the
// keep-alive writer sees it: it records the header as sent, each write,
// the flushes, and a write deadline set through
// http.ResponseController. It is safe for concurrent use, so that a
// write from two goroutines at once shows up in the race detector only
// if the writer lets it through.
type recorder struct {
	header http.Header // the handler's, until sent

	mu       sync.Mutex
	sent     http.Header // the header as it was written
	code     int
	writes   []string
	flushes  int
	deadline time.Time
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writeHeader(code)
}

func (r *recorder) writeHeader(code int) {
	if r.sent == nil {
		r.code, r.sent = code, r.header.Clone()
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writeHeader(http.StatusOK)
	r.writes = append(r.writes, string(p))
	return len(p), nil
}

func (r *recorder) Flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writeHeader(http.StatusOK)
	r.flushes++
}

func (r *recorder) SetWriteDeadline(t time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deadline = t
	return nil
}

// body returns what was written.
func (r *recorder) body() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.writes, "")
}

// comments returns the number of keep-alive comments written, each in a
// Write of its own.
func (r *recorder) comments() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, w := range r.writes {
		if w == keepAliveComment {
			n++
		}
	}
	return n
}

// A fakeStream is a handler serving one response of contentType, that
// writes (and flushes) each string sent on writes, and returns when
// writes is closed.
type fakeStream struct {
	contentType string
	writes      chan string
	returned    chan struct{}
}

// withKeepAlive serves next as the edge does (guard.ServeHTTP): through a
// keepAliveWriter of period, stopped once next returns.
func withKeepAlive(next http.Handler, period time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		kw := &keepAliveWriter{w: w, period: period}
		defer kw.stop()
		next.ServeHTTP(kw, req)
	})
}

// serveFake serves one GET with a fakeStream of contentType through a
// keepAliveWriter of period, or, if period is zero, behind Guard with the
// default options, in a goroutine; it returns the stream and the recorder
// of its response once the header has been written.
func serveFake(t *testing.T, contentType string, period time.Duration) (*fakeStream, *recorder) {
	t.Helper()
	s := &fakeStream{contentType: contentType, writes: make(chan string), returned: make(chan struct{})}
	h := withKeepAlive(s, period)
	if period == 0 {
		g, err := Guard(s, &Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		h = g
	}
	rec := newRecorder()
	go func() {
		defer close(s.returned)
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/mcp", nil))
	}()
	synctest.Wait()
	return s, rec
}

func (s *fakeStream) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", s.contentType)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	for p := range s.writes {
		io.WriteString(w, p)
		rc.Flush()
	}
}

// write has the stream write p, and waits until it has.
func (s *fakeStream) write(p string) {
	s.writes <- p
	synctest.Wait()
}

// A quiet event stream gets one comment per quiet period, each flushed,
// and carries X-Accel-Buffering: no from its first byte.
func TestKeepAliveQuietStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, rec := serveFake(t, "text/event-stream", testKeepAlive)
		defer close(s.writes)
		if got := rec.sent.Get("X-Accel-Buffering"); got != "no" {
			t.Fatalf("X-Accel-Buffering: %q, want no", got)
		}
		s.write("event: message\ndata: {}\n\n")
		time.Sleep(testKeepAlive / 2)
		for n := 1; n <= 5; n++ {
			time.Sleep(testKeepAlive)
			synctest.Wait()
			if got := rec.comments(); got != n {
				t.Fatalf("after %d quiet periods: %d comments, want %d", n, got, n)
			}
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if rec.flushes != 1+5 {
			t.Errorf("%d flushes, want one for the event and one per comment: 6", rec.flushes)
		}
	})
}

// The quiet period starts again with each write: a stream written on more
// often than the period gets no comment, and the first comment comes one
// period after the last write.
func TestKeepAliveEventResets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, rec := serveFake(t, "text/event-stream", testKeepAlive)
		defer close(s.writes)
		for range 10 {
			time.Sleep(testKeepAlive * 3 / 4)
			s.write("data: a\n\n")
		}
		time.Sleep(testKeepAlive * 3 / 4)
		synctest.Wait()
		if got := rec.comments(); got != 0 {
			t.Fatalf("a stream written on every 3/4 period: %d comments, want none", got)
		}
		time.Sleep(testKeepAlive / 2) // 5/4 of a period since the last event
		synctest.Wait()
		if got, want := rec.body(), strings.Repeat("data: a\n\n", 10)+keepAliveComment; got != want {
			t.Fatalf("body %q, want %q", got, want)
		}
	})
}

// Once the handler returns, its timer is stopped, and nothing more is
// written: were the timer still set, synctest would fire it at once.
func TestKeepAliveNothingAfterReturn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, rec := serveFake(t, "text/event-stream", testKeepAlive)
		s.write("data: a\n\n")
		time.Sleep(testKeepAlive + testKeepAlive/2)
		synctest.Wait()
		close(s.writes)
		<-s.returned
		before := rec.body()
		time.Sleep(100 * testKeepAlive)
		synctest.Wait()
		if got, want := rec.body(), "data: a\n\n"+keepAliveComment; got != want || before != want {
			t.Fatalf("body %q when the handler returned and %q later, want %q", before, got, want)
		}
	})
}

// A comment goes only between events: an event written in several
// writes, quiet in between, gets none inside it; the comment follows the
// blank line that ends it, "\n\n" or "\r\n\r\n".
func TestKeepAliveBetweenEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, rec := serveFake(t, "text/event-stream", testKeepAlive)
		defer close(s.writes)
		want := ""
		for _, parts := range [][]string{
			{"event: message\n", "data: a", "\n\n"},
			{"data: b\r\n", "\r\n"},
			{"data: c\n\n"},
			{"data: d\r\n\r", "\n"},
		} {
			for _, p := range parts {
				s.write(p)
				want += p
				time.Sleep(3 * testKeepAlive)
				synctest.Wait()
			}
			want += strings.Repeat(keepAliveComment, 3)
		}
		if got := rec.body(); got != want {
			t.Fatalf("body\n%q, want\n%q", got, want)
		}
	})
}

// A stream that has written nothing yet (but its header) is at the start
// of an event, and gets a comment too.
func TestKeepAliveBeforeFirstEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, rec := serveFake(t, "text/event-stream; charset=utf-8", testKeepAlive)
		defer close(s.writes)
		time.Sleep(2*testKeepAlive + testKeepAlive/2)
		synctest.Wait()
		if got, want := rec.body(), keepAliveComment+keepAliveComment; got != want {
			t.Fatalf("body %q, want %q", got, want)
		}
	})
}

// A response that is not an event stream gets neither the header nor a
// comment, however long it takes; a negative period turns the comments
// off, not the header; zero in Options means DefaultKeepAlive.
func TestKeepAliveOnlyEventStreams(t *testing.T) {
	for _, c := range []struct {
		name        string
		contentType string
		period      time.Duration
		header      string
		comments    int
	}{
		{"json", "application/json", testKeepAlive, "", 0},
		{"off", "text/event-stream", -1, "no", 0},
		{"default", "text/event-stream", 0, "no", 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s, rec := serveFake(t, c.contentType, c.period)
				defer close(s.writes)
				time.Sleep(3*DefaultKeepAlive + DefaultKeepAlive/2)
				synctest.Wait()
				if got := rec.sent.Get("X-Accel-Buffering"); got != c.header {
					t.Errorf("X-Accel-Buffering %q, want %q", got, c.header)
				}
				if got := rec.comments(); got != c.comments {
					t.Errorf("%d comments, want %d", got, c.comments)
				}
			})
		})
	}
}

// A handler that writes the header by its first Write, or by a Flush,
// instead of WriteHeader, gets X-Accel-Buffering and comments too; and
// http.ResponseController reaches the ResponseWriter beneath for what
// the keep-alive writer does not do itself.
func TestKeepAliveImplicitHeader(t *testing.T) {
	for name, start := range map[string]func(w http.ResponseWriter){
		"write": func(w http.ResponseWriter) { io.WriteString(w, "data: a\n\n") },
		"flush": func(w http.ResponseWriter) { http.NewResponseController(w).Flush() },
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				deadline := time.Now().Add(time.Hour)
				stop := make(chan struct{})
				h := withKeepAlive(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
					w.Header().Set("Content-Type", "text/event-stream")
					start(w)
					if err := http.NewResponseController(w).SetWriteDeadline(deadline); err != nil {
						t.Errorf("SetWriteDeadline: %v", err)
					}
					<-stop
				}), DefaultKeepAlive)
				rec := newRecorder()
				go h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/mcp", nil))
				defer close(stop)
				time.Sleep(DefaultKeepAlive + DefaultKeepAlive/2)
				synctest.Wait()
				rec.mu.Lock()
				defer rec.mu.Unlock()
				if got := rec.sent.Get("X-Accel-Buffering"); got != "no" || rec.code != http.StatusOK {
					t.Errorf("status %d, X-Accel-Buffering %q, want 200 and no", rec.code, got)
				}
				if got := strings.Count(strings.Join(rec.writes, ""), keepAliveComment); got != 1 {
					t.Errorf("%d comments, want 1", got)
				}
				if !rec.deadline.Equal(deadline) {
					t.Errorf("write deadline %v, want %v", rec.deadline, deadline)
				}
			})
		})
	}
}

// Writes from several goroutines at once, as go-sdk's are, and the
// comments between them, never interleave: every event arrives whole.
// Four goroutines each write an event every 1.5 periods, in two writes,
// all at once: a comment follows each round one period later, but the
// last.
func TestKeepAliveConcurrentWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := withKeepAlive(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			var mu sync.Mutex // go-sdk's stream lock: one event at a time
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					for range 20 {
						time.Sleep(testKeepAlive * 3 / 2)
						mu.Lock()
						w.Write([]byte("data: "))
						w.Write([]byte("x\n\n"))
						mu.Unlock()
					}
				})
			}
			wg.Wait()
		}), testKeepAlive)
		rec := newRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mcp", nil))
		body := rec.body()
		if got := strings.Count(body, "data: x\n\n"); got != 80 {
			t.Errorf("%d whole events, want 80", got)
		}
		if got := rec.comments(); got != 19 {
			t.Errorf("%d comments, want 19", got)
		}
		if rest := strings.ReplaceAll(strings.ReplaceAll(body, "data: x\n\n", ""), keepAliveComment, ""); rest != "" {
			t.Errorf("left over after the events and comments: %q", rest)
		}
	})
}
