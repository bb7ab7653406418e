package serve_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcpres/mcpres/serve"
	"github.com/mcpres/mcpres/subscribe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// attackBatch is the body of bench/caps's batch attack: a 4 MiB JSON-RPC
// batch of tiny notifications, each with a backslash, so that no
// shortcut of the scan applies.
func attackBatch() []byte {
	var body bytes.Buffer
	body.WriteByte('[')
	msg := `{"jsonrpc":"2.0","method":"a\\b","params":{"_meta":{}}}`
	for body.Len() < 4<<20-len(msg)-2 {
		if body.Len() > 1 {
			body.WriteByte(',')
		}
		body.WriteString(msg)
	}
	body.WriteByte(']')
	return body.Bytes()
}

// BenchmarkBatchNoSession is what a POST of attackBatch costs without a
// session or a version header (a client of 2025-03-26), answered in
// memory (go-sdk refuses it with 400 once it has decoded it all: no
// message names a method it has): go-sdk's handler alone (NewGoSDKHandler); behind the edge, its
// caps lifted, as Handler serves it (the batch unscanned); and behind the
// edge as any other handler is, whose batches the edge scans first (the
// edge in front of go-sdk before it left batches to go-sdk).
//
//	go test ./serve -run XXX -bench BatchNoSession -benchmem -benchtime 3x -count 3
func BenchmarkBatchNoSession(b *testing.B) {
	body := attackBatch()
	server := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "v0"}, &mcp.ServerOptions{Logger: quietLogger()})
	sdkOpts := &mcp.StreamableHTTPOptions{SessionTimeout: time.Hour}
	lifted := &serve.Options{Logger: quietLogger(),
		MaxSessionsPerCaller: subscribe.NoLimit, MaxSessions: subscribe.NoLimit,
		MaxSessionBytesPerCaller: subscribe.NoLimit, MaxSessionBytes: subscribe.NoLimit}
	sdk := serve.NewGoSDKHandler(server, sdkOpts)
	edge, err := serve.Guard(sdk, lifted)
	if err != nil {
		b.Fatal(err)
	}
	scanning, err := serve.Guard(http.HandlerFunc(sdk.ServeHTTP), lifted)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		h    http.Handler
	}{{"go-sdk", sdk}, {"edge", edge}, {"edge-scanning", scanning}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				rec := httptest.NewRecorder()
				c.h.ServeHTTP(rec, req)
				if rec.Code != http.StatusBadRequest { // go-sdk's, once decoded: "a\b" is no method
					b.Fatalf("%d: %s", rec.Code, rec.Body)
				}
			}
		})
	}
}
