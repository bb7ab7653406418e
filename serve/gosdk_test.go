package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// One URL serves clients of every protocol era, and each receives the
// updates it subscribed to and list_changed: NewGoSDKHandler behind
// Guard, in a mux of one's own.
func TestGoSDKHandlerServesEveryEra(t *testing.T) {
	t.Parallel()
	reg, server := eraRegistry(t)
	mux := http.NewServeMux()
	mux.Handle("/mcp", guarded(t, server, nil, &mcp.StreamableHTTPOptions{SessionTimeout: time.Hour}))
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)

	watchers := map[string]*httpWatcher{}
	for _, version := range allVersions {
		w := connectHTTPWatcher(t, hs.URL+"/mcp", version)
		caps := w.session.InitializeResult().Capabilities.Resources
		require.NotNil(t, caps, version)
		assert.True(t, caps.Subscribe, "%s: subscribe advertised", version)
		assert.True(t, caps.ListChanged, "%s: listChanged advertised", version)
		require.NoError(t, w.session.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "db://users/7"}), version)
		require.NoError(t, w.session.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "docs://readme"}), version)
		watchers[version] = w
	}
	// A 2026-07-28 listen is opened in the background: wait until the
	// registry holds all six subscriptions.
	require.Eventually(t, func() bool { n, _, _ := reg.SubscriptionStats(); return n == 6 }, time.Minute, time.Millisecond)

	require.NoError(t, reg.Changed("db://users/7"))
	for version, w := range watchers {
		assert.Equal(t, "db://users/7", mcptest.Receive(t, w.updates, version+" update"), version)
	}
	require.NoError(t, reg.Changed("docs://readme"))
	for version, w := range watchers {
		assert.Equal(t, "docs://readme", mcptest.Receive(t, w.updates, version+" update"), version)
	}
	require.NoError(t, reg.Add(&mcp.Resource{URI: "docs://new", Name: "new"}, resource.Text("new")))
	for version, w := range watchers {
		mcptest.Receive(t, w.listed, version+" list_changed")
	}
	for version, w := range watchers {
		res, err := w.session.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "docs://new"})
		require.NoError(t, err, version)
		assert.Equal(t, "new", res.Contents[0].Text, version)
	}
}

// NewGoSDKHandler panics on a nil server, and Guard refuses a nil handler.
func TestGoSDKHandlerNil(t *testing.T) {
	t.Parallel()
	assert.PanicsWithValue(t, "serve.NewGoSDKHandler: nil server", func() { serve.NewGoSDKHandler(nil, nil) })
	_, err := serve.Guard(nil, nil)
	assert.EqualError(t, err, "serve: nil handler")
}

// changed names the go-sdk behaviour of serve/gosdk.go a failing
// assertion is about.
func changed(n int, name string) string {
	return fmt.Sprintf("go-sdk behaviour %d (%s) of serve/gosdk.go changed", n, name)
}

// 2: a stateless streamable HTTP handler compares the request-metadata
// headers of a 2026-07-28 request with its body, refusing a mismatch with
// 400 and -32020; Mcp-Name it compares as it is.
func TestSDKHeaderChecks(t *testing.T) {
	t.Parallel()
	s := mcp.NewServer(&mcp.Implementation{Name: "sdk", Version: "v0"}, &mcp.ServerOptions{Logger: quietLogger()})
	s.AddResource(&mcp.Resource{URI: "x:marker", Name: "m"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "x:marker", Text: "m"}}}, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(hs.Close)
	c := mcptest.HTTPClient(t, "")
	read := modern("resources/read", `"uri":"x:marker"`, "2026-07-28")
	h := mirrored("resources/read", "x:marker")
	requireResult(t, post(t, c, hs.URL, read, h), changed(2, "headerChecks")+": a matching read")
	for name, req := range map[string]struct {
		body string
		h    headers
	}{
		"no Mcp-Method":                 {read, h.without("Mcp-Method")},
		"another Mcp-Method":            {read, mirrored("resources/list", "x:marker")},
		"no Mcp-Name":                   {read, h.without("Mcp-Name")},
		"another Mcp-Name":              {read, mirrored("resources/read", "x:other")},
		"no Mcp-Name, tools/call":       {modern("tools/call", `"name":"t"`, "2026-07-28"), mirrored("tools/call", "")},
		"another Mcp-Name, tools/call":  {modern("tools/call", `"name":"t"`, "2026-07-28"), mirrored("tools/call", "u")},
		"no Mcp-Name, prompts/get":      {modern("prompts/get", `"name":"p"`, "2026-07-28"), mirrored("prompts/get", "")},
		"another Mcp-Name, prompts/get": {modern("prompts/get", `"name":"p"`, "2026-07-28"), mirrored("prompts/get", "q")},
		"another _meta version":         {modern("resources/read", `"uri":"x:marker"`, "2025-11-25"), h},
		// Not decoded: the edge decodes it.
		"Mcp-Name in Base64": {read, mirrored("resources/read", b64("x:marker"))},
	} {
		requireHeaderMismatch(t, post(t, c, hs.URL, req.body, req.h), true, changed(2, "headerChecks")+": "+name)
	}
	// Given an Mcp-Name decoded, it compares it as it is, even if it has
	// the form of Base64: it is not decoded twice.
	sentinel := "=?base64?eDptYXJrZXI=?="
	a := post(t, c, hs.URL, modern("resources/read", `"uri":"`+sentinel+`"`, "2026-07-28"), mirrored("resources/read", sentinel))
	fields := a.response(t, "a sentinel")
	var jerr jsonrpc.Error
	require.NoError(t, json.Unmarshal(fields["error"], &jerr), "%s", a.body)
	assert.NotEqualValues(t, -32020, jerr.Code, changed(2, "headerChecks")+": Mcp-Name decoded by go-sdk: %s", jerr.Message)
}

// 4: a stateful handler decodes each message of a batch, and refuses the
// POST with 400 if one names a protocol version in _meta other than the
// header's: a request or a notification, without a session or in one,
// with no version header or an older one, and whichever of two _meta
// objects or version keys holds it. Without such a message, the batch is
// served.
func TestSDKBatchMeta(t *testing.T) {
	t.Parallel()
	_, server := eraRegistry(t)
	hs := httptest.NewServer(serve.NewGoSDKHandler(server, &mcp.StreamableHTTPOptions{SessionTimeout: time.Hour}))
	t.Cleanup(hs.Close)
	c := mcptest.HTTPClient(t, "")
	cs := mcptest.ConnectHTTP(t, hs.URL, "", "2025-11-25", nil)
	require.NotEmpty(t, cs.ID())
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	version := `"` + mcp.MetaKeyProtocolVersion + `"`
	notification := `{"jsonrpc":"2.0","method":"notifications/roots/list_changed","params":{"_meta":{` + version + `:"2026-07-28"}}}`
	for name, body := range map[string]string{
		"a request":                     `[` + ping + `,` + readBody("2026-07-28") + `]`,
		"a request of an older version": `[` + ping + `,` + readBody("2025-11-25") + `]`,
		"a notification":                `[` + ping + `,` + notification + `]`,
		"server/discover":               `[` + modern("server/discover", "", "2026-07-28") + `]`,
		// Of two _meta objects it reads both, and of two version keys the
		// last: either way, a version.
		"_meta twice, the version first": `[{"jsonrpc":"2.0","id":3,"method":"resources/list","params":{"_meta":{` + version + `:"2026-07-28"},"_meta":{}}}]`,
		"_meta twice, the version last":  `[{"jsonrpc":"2.0","id":3,"method":"resources/list","params":{"_meta":{},"_meta":{` + version + `:"2026-07-28"}}}]`,
		"the version twice":              `[{"jsonrpc":"2.0","id":3,"method":"resources/list","params":{"_meta":{` + version + `:"2026-07-28",` + version + `:"2025-03-26"}}}]`,
	} {
		for _, h := range []headers{nil, {"Mcp-Protocol-Version", "2025-03-26"}, {"Mcp-Session-Id", cs.ID()}} {
			a := post(t, c, hs.URL, body, h)
			assert.Equal(t, http.StatusBadRequest, a.status, "%s: %s, %v: %s", changed(4, "batchMeta"), name, h, a.body)
		}
	}
	a := post(t, c, hs.URL, `[`+ping+`]`, nil)
	assert.Equal(t, http.StatusOK, a.status, "%s: pings: %s", changed(4, "batchMeta"), a.body)
}

// 5: a stateful handler accepts a session's GET stream with 200 and an
// event stream's Content-Type, written on the ResponseWriter it was
// given, and sends each message event on it as one Write followed by a
// flush through that writer's FlushError.
func TestSDKSessionStream(t *testing.T) {
	t.Parallel()
	reg, server := eraRegistry(t)
	sdk := serve.NewGoSDKHandler(server, &mcp.StreamableHTTPOptions{SessionTimeout: time.Hour})
	rec := &streamRecorder{header: make(chan struct{}, 1)}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodGet {
			rec.mu.Lock()
			rec.w = w
			rec.mu.Unlock()
			w = rec
		}
		sdk.ServeHTTP(w, req)
	}))
	t.Cleanup(hs.Close)
	w := connectHTTPWatcher(t, hs.URL, "2025-11-25")
	require.NoError(t, w.session.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "db://users/7"}))
	// go-sdk writes the header holding the stream, which it readies for
	// notifications before it lets go: one sent from now on reaches it.
	mcptest.Receive(t, rec.header, "the GET stream's header")
	require.NoError(t, reg.Changed("db://users/7"))
	assert.Equal(t, "db://users/7", mcptest.Receive(t, w.updates, "the notification"))

	calls := rec.calls()
	require.NotEmpty(t, calls)
	assert.Equal(t, "header 200 text/event-stream", calls[0], changed(5, "sessionStream"))
	i := slices.IndexFunc(calls, func(c string) bool { return strings.Contains(c, protocol.NotificationResourceUpdated) })
	require.GreaterOrEqual(t, i, 0, "%s: %q", changed(5, "sessionStream"), calls)
	assert.True(t, strings.HasPrefix(calls[i], "write event: message\ndata: {") && strings.HasSuffix(calls[i], "}\n\n"),
		"%s: the event in one Write: %q", changed(5, "sessionStream"), calls[i])
	params, err := json.Marshal(&mcp.ResourceUpdatedNotificationParams{URI: "db://users/7"})
	require.NoError(t, err)
	msg, err := jsonrpc.EncodeMessage(&jsonrpc.Request{Method: protocol.NotificationResourceUpdated, Params: params})
	require.NoError(t, err)
	assert.Equal(t, "write event: message\ndata: "+string(msg)+"\n\n", calls[i],
		"%s: with no EventStore, no event ID, and the message as jsonrpc.EncodeMessage encodes it", changed(5, "sessionStream"))
	require.Greater(t, len(calls), i+1, "%s: %q", changed(5, "sessionStream"), calls)
	assert.Equal(t, "flush", calls[i+1], changed(5, "sessionStream"))
}

// A streamRecorder passes a response on to w, and records what it is
// asked to do; header hears of each header written.
type streamRecorder struct {
	header chan struct{}

	mu  sync.Mutex
	w   http.ResponseWriter
	log []string
}

func (r *streamRecorder) record(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, s)
}

func (r *streamRecorder) calls() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.log)
}

func (r *streamRecorder) Header() http.Header { return r.w.Header() }

func (r *streamRecorder) WriteHeader(code int) {
	r.record(fmt.Sprintf("header %d %s", code, r.w.Header().Get("Content-Type")))
	r.w.WriteHeader(code)
	select {
	case r.header <- struct{}{}:
	default:
	}
}

func (r *streamRecorder) Write(p []byte) (int, error) {
	r.record("write " + string(p))
	return r.w.Write(p)
}

func (r *streamRecorder) FlushError() error {
	r.record("flush")
	return http.NewResponseController(r.w).Flush()
}

func (r *streamRecorder) Unwrap() http.ResponseWriter { return r.w }
