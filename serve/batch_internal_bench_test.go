package serve

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mcpres/mcpres/subscribe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkEdgeOnBatch is what the edge alone adds to a POST of bench/caps's
// batch attack (4 MiB of tiny escaped notifications, no session, no
// version header), in front of a handler that only drains the body: the
// handler alone, the edge in front of it as in front of go-sdk's handler
// (the batch left unread), and as in front of any other handler (the
// batch read and scanned). BenchmarkBatchNoSession sets the same beside
// go-sdk's own handling of it.
//
//	go test ./serve -run XXX -bench EdgeOnBatch -benchmem -count 5
func BenchmarkEdgeOnBatch(b *testing.B) {
	var batch bytes.Buffer
	batch.WriteByte('[')
	msg := `{"jsonrpc":"2.0","method":"a\\b","params":{"_meta":{}}}`
	for batch.Len() < 4<<20-len(msg)-2 {
		if batch.Len() > 1 {
			batch.WriteByte(',')
		}
		batch.WriteString(msg)
	}
	batch.WriteByte(']')
	body := batch.Bytes()

	drain := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		io.Copy(io.Discard, req.Body)
		w.WriteHeader(http.StatusAccepted)
	})
	lifted := &Options{Logger: slog.New(slog.DiscardHandler), MaxSessionsPerCaller: subscribe.NoLimit, MaxSessions: subscribe.NoLimit,
		MaxSessionBytesPerCaller: subscribe.NoLimit, MaxSessionBytes: subscribe.NoLimit}
	o, err := lifted.withDefaults()
	if err != nil {
		b.Fatal(err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "v0"}, nil)
	asSDK, err := o.guard(&goSDKHandler{server: server, stateful: drain, stateless: drain})
	if err != nil {
		b.Fatal(err)
	}
	asOther, err := o.guard(drain)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		h    http.Handler
	}{{"handler", drain}, {"edge-go-sdk", asSDK}, {"edge-other", asOther}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				rec := httptest.NewRecorder()
				c.h.ServeHTTP(rec, req)
				if rec.Code != http.StatusAccepted {
					b.Fatalf("%d: %s", rec.Code, rec.Body)
				}
			}
		})
	}
}
