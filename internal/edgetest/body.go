package edgetest

// This file holds the suite's tests of what the body check reads, and
// what its refusals say: a session the edge does not hold, a batch of a
// version without batches, a key given twice, a long header, and a Host
// of DNS rebinding.

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/serve"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// olderEras are the versions of Eras whose clients hold sessions.
var olderEras = []string{"2025-06-18", "2025-11-25"}

// open opens a session at version, and returns its ID.
func (f *fixture) open(t *testing.T, version string) string {
	t.Helper()
	status, h, body := f.post(t, "", initialize(version))
	require.Equal(t, http.StatusOK, status, "%s", body)
	id := h.Get(protocol.HeaderSessionID)
	require.NotEmpty(t, id)
	return id
}

// withMeta is the body of a request of method whose params hold the
// _meta objects metas, each naming a protocol version, in that order.
func withMeta(id int, method string, versions ...string) string {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"` + method + `","params":{`)
	for i, v := range versions {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"_meta":{"` + mcp.MetaKeyProtocolVersion + `":"` + v + `"}`)
	}
	b.WriteString(`}}`)
	return b.String()
}

// The body of a session the edge does not hold is the handler's to
// refuse, unread by the edge: go-sdk answers 404, mcp-go checks the
// version in _meta first. The same body in a session the edge holds is
// the edge's to refuse.
func testUnknownSession(t *testing.T, f *fixture) {
	f.serve(t, serve.Options{})
	body := withMeta(3, "resources/list", "2026-07-28")
	for _, version := range olderEras {
		status, _, answer := f.post(t, version, body, protocol.HeaderSessionID, "bogus")
		assert.Contains(t, []int{http.StatusNotFound, http.StatusBadRequest}, status, "%s: %s", version, answer)
		assert.NotContains(t, string(answer), "header mismatch: the Mcp-Protocol-Version header", "%s: the edge's refusal", version)

		status, _, answer = f.post(t, version, body, protocol.HeaderSessionID, f.open(t, version))
		assert.Equal(t, http.StatusBadRequest, status, version)
		assert.EqualValues(t, protocol.CodeHeaderMismatch, rpcError(t, answer).Code, version)
	}
}

// A batch under a version of 2025-06-18 or later is refused by the edge
// with 400 and -32600, in a session or not; without a version header
// (2025-03-26, which has batches) it is the handler's.
func testBatch(t *testing.T, f *fixture) {
	f.serve(t, serve.Options{})
	batch := "\n [" + withMeta(3, "resources/list", "2026-07-28") + "]"
	for _, version := range Eras {
		headers := []string{protocol.HeaderMethod, "resources/list"}
		if version < protocol.SessionlessSince {
			headers = []string{protocol.HeaderSessionID, f.open(t, version)}
		}
		status, _, answer := f.post(t, version, batch, headers...)
		assert.Equal(t, http.StatusBadRequest, status, version)
		e := rpcError(t, answer)
		assert.EqualValues(t, jsonrpc.CodeInvalidRequest, e.Code, version)
		assert.Contains(t, e.Message, "batch", version)
	}
	_, _, answer := f.post(t, "", batch, protocol.HeaderSessionID, f.open(t, "2025-11-25"))
	assert.NotContains(t, string(answer), "JSON-RPC batches are not part", "a batch without a version header")
	assert.Contains(t, f.logs.String(), "refused a batch of a version without batches")
}

// A request whose params hold _meta twice is refused with -32020: which
// of the two counts is the reader's guess.
func testDuplicateMeta(t *testing.T, f *fixture) {
	f.serve(t, serve.Options{})
	for _, version := range olderEras {
		session := f.open(t, version)
		for _, versions := range [][]string{{"2026-07-28", version}, {version, "2026-07-28"}} {
			status, _, answer := f.post(t, version, withMeta(3, "resources/list", versions...), protocol.HeaderSessionID, session)
			assert.Equal(t, http.StatusBadRequest, status, "%s %v: %s", version, versions, answer)
			assert.EqualValues(t, protocol.CodeHeaderMismatch, rpcError(t, answer).Code, "%s %v", version, versions)
		}
	}
}

// No answer echoes more than 64 bytes of a header: a header is as long
// as the server's MaxHeaderBytes allows. The edge checks first, so its
// bounded message is the one the client gets.
func testBoundedEcho(t *testing.T, f *fixture) {
	f.serve(t, serve.Options{})
	const modern = "2026-07-28"
	long := strings.Repeat("x", 70<<10)
	read := func(params map[string]any) string { return request(7, "resources/read", modern, params) }
	for name, c := range map[string]struct {
		body    string
		headers []string
	}{
		"Mcp-Name of another uri": {read(map[string]any{"uri": "edge://r/1"}),
			[]string{protocol.HeaderMethod, "resources/read", protocol.HeaderName, long}},
		"Mcp-Name, and a _meta that is not an object": {request(7, "resources/read", "", map[string]any{"uri": "edge://r/1", "_meta": "x"}),
			[]string{protocol.HeaderMethod, "resources/read", protocol.HeaderName, long}},
		"Mcp-Method of another": {read(map[string]any{"uri": "edge://r/1"}),
			[]string{protocol.HeaderMethod, long, protocol.HeaderName, "edge://r/1"}},
		"a long Mcp-Protocol-Version of an older era": {initialize("2025-11-25"),
			[]string{protocol.HeaderProtocolVersion, "2025-11-25" + long}},
		"a long Mcp-Protocol-Version, the same in _meta": {request(7, "resources/list", "2026-07-28"+long, nil),
			[]string{protocol.HeaderProtocolVersion, "2026-07-28" + long, protocol.HeaderMethod, "resources/list"}},
		"a long Mcp-Name of an older era": {read(map[string]any{"uri": "edge://r/1"}),
			[]string{protocol.HeaderProtocolVersion, "2025-11-25", protocol.HeaderMethod, "resources/read", protocol.HeaderName, long}},
		"Mcp-Name in Base64 of another uri": {read(map[string]any{"uri": "edge://r/1"}),
			[]string{protocol.HeaderMethod, "resources/read", protocol.HeaderName, "=?base64?" + strings.Repeat("eHh4", 20<<10) + "?="}},
	} {
		if !slices.Contains(c.headers, protocol.HeaderProtocolVersion) {
			c.headers = append(c.headers, protocol.HeaderProtocolVersion, modern)
		}
		status, _, answer := f.post(t, "", c.body, c.headers...)
		assert.Equal(t, 4, status/100, name)
		assert.Less(t, len(answer), 1<<10, "%s: %.200s", name, answer)
		var resp struct {
			Error *jsonrpc.Error `json:"error"`
		}
		if json.Unmarshal(answer, &resp) == nil && resp.Error != nil {
			assert.NotContains(t, resp.Error.Message, strings.Repeat("x", 65), name)
		}
	}
	// GET and DELETE carry the version header too.
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		req, err := http.NewRequestWithContext(t.Context(), method, f.url, nil)
		require.NoError(t, err)
		setHeaders(req, "2025-11-25"+long, []string{protocol.HeaderSessionID, "s1"})
		status, _, answer := do(t, req)
		assert.Equal(t, 4, status/100, method)
		assert.Less(t, len(answer), 1<<10, "%s: %.200s", method, answer)
	}
}

// A request on a loopback address whose Host is not a loopback name, as
// a page of a rebound domain sends it, gets no CORS answer from the
// edge: go-sdk and mcp-go refuse it (403), and so should any handler.
func testRebindingHost(t *testing.T, f *fixture) {
	f.serve(t, serve.Options{})
	const host = "rebound.example"
	for _, method := range []string{http.MethodOptions, http.MethodPost} {
		req, err := http.NewRequestWithContext(t.Context(), method, f.url, strings.NewReader(initialize("2025-11-25")))
		require.NoError(t, err)
		setHeaders(req, "", []string{"Origin", "http://" + host, "Access-Control-Request-Method", "POST"})
		req.Host = host
		status, h, _ := do(t, req)
		assert.Equal(t, http.StatusForbidden, status, method)
		assert.Empty(t, h.Get("Access-Control-Allow-Origin"), method)
		assert.Empty(t, h.Get(protocol.HeaderSessionID), method)
	}
	// The same page on the loopback name is served.
	req, err := http.NewRequestWithContext(t.Context(), http.MethodOptions, f.url, nil)
	require.NoError(t, err)
	setHeaders(req, "", []string{"Origin", "http://localhost", "Access-Control-Request-Method", "POST"})
	req.Host = "localhost"
	status, h, _ := do(t, req)
	assert.Equal(t, http.StatusNoContent, status)
	assert.Equal(t, "http://localhost", h.Get("Access-Control-Allow-Origin"))
}
