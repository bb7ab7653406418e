package serve_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The request-metadata rules of 2026-07-28 (transports, "Request
// Metadata"), over real HTTP, go-sdk's handler for every era behind
// Guard: each request that breaks one is refused with 400 and -32020
// HeaderMismatch, whether go-sdk or the edge in front of it enforces the
// rule, and whatever era the request would be routed to.

// metadataServer serves eraRegistry's server, with docs://other added,
// behind Guard with opts, with go-sdk's handler given sdkOpts, until t
// ends. It returns its URL and an HTTP client for it.
func metadataServer(t *testing.T, opts *serve.Options, sdkOpts *mcp.StreamableHTTPOptions) (string, *http.Client) {
	t.Helper()
	reg, server := eraRegistry(t)
	require.NoError(t, reg.Add(&mcp.Resource{URI: "docs://other", Name: "other"}, resource.Text("other")))
	return startGuarded(t, server, opts, sdkOpts), mcptest.HTTPClient(t, "")
}

// modern is the body of a 2026-07-28 request with id 7: method, params
// (JSON members, or ""), and a _meta naming version.
func modern(method, params, version string) string {
	if params != "" {
		params += ","
	}
	return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":{` + params + `"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"` + version + `",` +
		`"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"},` +
		`"io.modelcontextprotocol/clientCapabilities":{}}}}`
}

// readBody is modern's resources/read of docs://readme, of version.
func readBody(version string) string {
	return modern("resources/read", `"uri":"docs://readme"`, version)
}

// headers are a request's header lines: a name, then its value, and so
// on; a name may come more than once.
type headers []string

// mirrored are the headers of a 2026-07-28 request of method, named name
// ("" for none).
func mirrored(method, name string) headers {
	h := headers{"Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", method}
	if name != "" {
		h = append(h, "Mcp-Name", name)
	}
	return h
}

// without returns h without the lines of name.
func (h headers) without(name string) headers {
	var out headers
	for i := 0; i+1 < len(h); i += 2 {
		if h[i] != name {
			out = append(out, h[i], h[i+1])
		}
	}
	return out
}

// with returns h with the lines kv added.
func (h headers) with(kv ...string) headers { return append(append(headers{}, h...), kv...) }

// b64 is s in the Base64 form of Mcp-Name.
func b64(s string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=" }

// An answer is what the server answered a POST.
type answer struct {
	status      int
	contentType string
	body        []byte
}

// post sends body to url with h, and the Content-Type and Accept every
// POST needs.
func post(t *testing.T, c *http.Client, url, body string, h headers) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(h); i += 2 {
		req.Header.Add(h[i], h[i+1])
	}
	res, err := c.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return answer{res.StatusCode, res.Header.Get("Content-Type"), b}
}

// response decodes a's body as one JSON-RPC response: in a JSON object,
// or in the one event of an event stream.
func (a answer) response(t *testing.T, what string) (fields map[string]json.RawMessage) {
	t.Helper()
	body := a.body
	if strings.HasPrefix(a.contentType, "text/event-stream") {
		for line := range strings.Lines(string(a.body)) {
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				body = []byte(data)
			}
		}
	}
	require.NoError(t, json.Unmarshal(body, &fields), "%s: %s", what, a.body)
	assert.JSONEq(t, `"2.0"`, string(fields["jsonrpc"]), "%s", what)
	return fields
}

// requireHeaderMismatch checks that a is the refusal the transport asks
// for: "servers MUST return HTTP status 400 Bad Request and MUST include
// a JSON-RPC error response using the following error code: -32020",
// answering the request with id 7 (none if id is false).
func requireHeaderMismatch(t *testing.T, a answer, id bool, what string) {
	t.Helper()
	require.Equal(t, http.StatusBadRequest, a.status, "%s: %s", what, a.body)
	assert.Equal(t, "application/json", a.contentType, what)
	fields := a.response(t, what)
	if id {
		assert.JSONEq(t, `7`, string(fields["id"]), "%s: the request's id", what)
	} else {
		assert.NotContains(t, fields, "id", what)
	}
	assert.NotContains(t, fields, "result", what)
	var jerr jsonrpc.Error
	require.NoError(t, json.Unmarshal(fields["error"], &jerr), "%s: %s", what, a.body)
	assert.EqualValues(t, -32020, jerr.Code, "%s: %s", what, jerr.Message)
	assert.EqualValues(t, mcp.CodeHeaderMismatch, jerr.Code, what)
	assert.NotEmpty(t, jerr.Message, what)
}

// requireResult checks that a is a result, and returns it.
func requireResult(t *testing.T, a answer, what string) json.RawMessage {
	t.Helper()
	require.Equal(t, http.StatusOK, a.status, "%s: %s", what, a.body)
	fields := a.response(t, what)
	require.Contains(t, fields, "result", "%s: %s", what, a.body)
	return fields["result"]
}

// readURI returns the URI of the contents a resources/read result holds.
func readURI(t *testing.T, result json.RawMessage) string {
	t.Helper()
	var res mcp.ReadResourceResult
	require.NoError(t, json.Unmarshal(result, &res))
	require.Len(t, res.Contents, 1)
	return res.Contents[0].URI
}

// Each rule, broken once; by: who refuses (go-sdk v1.8 beneath the
// edge, or the edge in front of it).
func TestMetadataRefusesMismatch(t *testing.T) {
	t.Parallel()
	url, c := metadataServer(t, nil, &mcp.StreamableHTTPOptions{SessionTimeout: time.Hour})
	read := readBody("2026-07-28")
	readHeaders := mirrored("resources/read", "docs://readme")
	for _, tc := range []struct {
		name, by string
		body     string
		h        headers
	}{
		// "| Mcp-Method | method | All requests |"; "A required standard
		// header (MCP-Protocol-Version, Mcp-Method, Mcp-Name) is missing."
		{"Mcp-Method missing", "go-sdk", read, readHeaders.without("Mcp-Method")},
		{"Mcp-Method missing, resources/list", "go-sdk", modern("resources/list", "", "2026-07-28"),
			mirrored("resources/list", "").without("Mcp-Method")},
		// "A header value does not match the corresponding request body value."
		{"Mcp-Method of another method", "go-sdk", read, mirrored("resources/list", "docs://readme")},
		// "Header values (such as method names) are case-sensitive."
		{"Mcp-Method in another case", "go-sdk", read, mirrored("Resources/Read", "docs://readme")},
		{"Mcp-Method empty", "go-sdk", read, mirrored("", "docs://readme")},
		{"Mcp-Method twice", "mcpres", read, readHeaders.with("Mcp-Method", "resources/read")},
		{"Mcp-Method twice, the second another", "mcpres", read, readHeaders.with("Mcp-Method", "resources/list")},
		{"Mcp-Method not ASCII", "mcpres", read, readHeaders.without("Mcp-Method").with("Mcp-Method", "resources/réad")},

		// "| Mcp-Name | params.name or params.uri | tools/call,
		// resources/read, prompts/get requests |"
		{"Mcp-Name missing, resources/read", "go-sdk", read, readHeaders.without("Mcp-Name")},
		{"Mcp-Name of another resource", "go-sdk", read, mirrored("resources/read", "docs://other")},
		{"Mcp-Name a prefix of the URI", "go-sdk", read, mirrored("resources/read", "docs://read")},
		// go-sdk reads params' keys as they are written ("URI" is not
		// "uri"); mark3labs/mcp-go, with encoding/json, reads either
		// case, the last one. The edge reads as mcp-go does, and go-sdk
		// checks its own reading behind it: a body whose "uri" and "URI"
		// differ is refused whichever one Mcp-Name names.
		{"Mcp-Name of URI, uri another", "go-sdk", modern("resources/read", `"uri":"docs://other","URI":"docs://readme"`, "2026-07-28"),
			mirrored("resources/read", "docs://readme")},
		{"Mcp-Name of uri, URI another", "mcpres", modern("resources/read", `"uri":"docs://readme","URI":"docs://other"`, "2026-07-28"),
			mirrored("resources/read", "docs://readme")},
		{"Mcp-Name missing, tools/call", "go-sdk", modern("tools/call", `"name":"t","arguments":{}`, "2026-07-28"),
			mirrored("tools/call", "")},
		{"Mcp-Name of another tool", "go-sdk", modern("tools/call", `"name":"t","arguments":{}`, "2026-07-28"),
			mirrored("tools/call", "u")},
		{"Mcp-Name missing, prompts/get", "go-sdk", modern("prompts/get", `"name":"p"`, "2026-07-28"),
			mirrored("prompts/get", "")},
		{"Mcp-Name of another prompt", "go-sdk", modern("prompts/get", `"name":"p"`, "2026-07-28"),
			mirrored("prompts/get", "q")},
		// Two Mcp-Name lines: go-sdk compares the first, a proxy may route
		// on the last.
		{"Mcp-Name twice, the first right", "mcpres", read, readHeaders.with("Mcp-Name", "docs://other")},
		{"Mcp-Name twice, the second right", "mcpres", read, mirrored("resources/read", "docs://other").with("Mcp-Name", "docs://readme")},
		// "A header value contains invalid characters."
		{"Mcp-Name not ASCII", "mcpres", modern("resources/read", `"uri":"docs://ré"`, "2026-07-28"),
			mirrored("resources/read", "docs://ré")},
		// "servers MUST decode an encoded Mcp-Name … before comparing it
		// to the corresponding request body value"
		{"Mcp-Name in Base64, of another resource", "mcpres, then go-sdk", read, mirrored("resources/read", b64("docs://other"))},
		{"Mcp-Name in Base64, not valid", "mcpres", read, mirrored("resources/read", "=?base64?docs://readme?=")},
		// A value that has the sentinel's form is Base64 ("clients MUST
		// also Base64-encode any plain-ASCII value that matches the
		// sentinel pattern"): decoded, it is not the body's.
		{"Mcp-Name the sentinel's form, as is", "mcpres, then go-sdk",
			modern("resources/read", `"uri":"=?base64?ZG9jczovL3JlYWRtZQ==?="`, "2026-07-28"),
			mirrored("resources/read", "=?base64?ZG9jczovL3JlYWRtZQ==?=")},

		// "The header value MUST match the
		// io.modelcontextprotocol/protocolVersion field carried in the
		// request body's _meta. If the values do not match, the server
		// MUST reject the request with 400 Bad Request and a
		// HeaderMismatch JSON-RPC error"
		{"_meta an older version", "go-sdk", readBody("2025-11-25"), readHeaders},
		{"_meta a later version", "go-sdk", readBody("2099-01-01"), readHeaders},
		{"header a later version", "go-sdk", read, readHeaders.without("Mcp-Protocol-Version").with("Mcp-Protocol-Version", "2099-01-01")},
		// The requests below would go to the stateful handler by their
		// header, which answered -32022 UnsupportedProtocolVersion,
		// naming the header's version as the one it does not support.
		{"header an older version", "mcpres", read,
			readHeaders.without("Mcp-Protocol-Version").with("Mcp-Protocol-Version", "2025-11-25")},
		{"header missing", "mcpres", read, readHeaders.without("Mcp-Protocol-Version")},
		{"header missing, server/discover", "mcpres", modern("server/discover", "", "2026-07-28"),
			mirrored("server/discover", "").without("Mcp-Protocol-Version")},
		{"header missing, _meta escaped", "mcpres",
			strings.Replace(read, `"io.modelcontextprotocol/protocolVersion"`, `"io.modelcontextprotocol\/protocolVersion"`, 1),
			readHeaders.without("Mcp-Protocol-Version")},
		// Two Mcp-Protocol-Version lines: go-sdk and the routing read the
		// first, a proxy may read the last.
		{"header twice, older first", "mcpres", read,
			headers{"Mcp-Protocol-Version", "2025-11-25"}.with(readHeaders...)},
		{"header twice, older last", "mcpres", read, readHeaders.with("Mcp-Protocol-Version", "2025-11-25")},
		{"header twice, the same", "mcpres", read, readHeaders.with("Mcp-Protocol-Version", "2026-07-28")},
		{"header not ASCII", "mcpres", readBody("2026-07-28é"),
			readHeaders.without("Mcp-Protocol-Version").with("Mcp-Protocol-Version", "2026-07-28é")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			requireHeaderMismatch(t, post(t, c, url, tc.body, tc.h), true, tc.name+" (refused by "+tc.by+")")
		})
	}
}

// A request whose headers mirror its body is served: plain, or with
// Mcp-Name in Base64; and what a resources/read reads is the resource its
// Mcp-Name names, however its body is written.
func TestMetadataServesMatching(t *testing.T) {
	t.Parallel()
	url, c := metadataServer(t, nil, &mcp.StreamableHTTPOptions{SessionTimeout: time.Hour})
	for _, tc := range []struct {
		name string
		body string
		h    headers
		uri  string // read; "" if not a read
	}{
		{"resources/read", readBody("2026-07-28"), mirrored("resources/read", "docs://readme"), "docs://readme"},
		// Header names are not case-sensitive.
		{"resources/read, header names in lower case", readBody("2026-07-28"),
			headers{"mcp-protocol-version", "2026-07-28", "mcp-method", "resources/read", "mcp-name", "docs://readme"}, "docs://readme"},
		{"resources/read of another", modern("resources/read", `"uri":"docs://other"`, "2026-07-28"),
			mirrored("resources/read", "docs://other"), "docs://other"},
		{"resources/read, Mcp-Name in Base64", readBody("2026-07-28"), mirrored("resources/read", b64("docs://readme")), "docs://readme"},
		// Of two "uri" keys, go-sdk takes the last, for the check and the
		// read alike.
		{"resources/read, two uri keys", modern("resources/read", `"uri":"docs://readme","uri":"docs://other"`, "2026-07-28"),
			mirrored("resources/read", "docs://other"), "docs://other"},
		{"resources/list", modern("resources/list", "", "2026-07-28"), mirrored("resources/list", ""), ""},
		// Mcp-Name where no rule asks for one is not compared.
		{"resources/list with an Mcp-Name", modern("resources/list", "", "2026-07-28"), mirrored("resources/list", "anything"), ""},
		{"resources/templates/list", modern("resources/templates/list", "", "2026-07-28"), mirrored("resources/templates/list", ""), ""},
		{"server/discover", modern("server/discover", "", "2026-07-28"), mirrored("server/discover", ""), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := requireResult(t, post(t, c, url, tc.body, tc.h), tc.name)
			if tc.uri != "" {
				assert.Equal(t, tc.uri, readURI(t, res), "%s: the resource read", tc.name)
			}
		})
	}
}

// A URI in the sentinel's form, sent in Base64 as the transport asks,
// passes the check: the read is then the registry's to answer (the URI
// has no scheme, so the answer is -32602, not -32020).
func TestMetadataDecodesMcpNameOnce(t *testing.T) {
	t.Parallel()
	url, c := metadataServer(t, nil, nil)
	uri := "=?base64?ZG9jczovL3JlYWRtZQ==?="
	a := post(t, c, url, modern("resources/read", `"uri":"`+uri+`"`, "2026-07-28"), mirrored("resources/read", b64(uri)))
	fields := a.response(t, "read")
	var jerr jsonrpc.Error
	require.NoError(t, json.Unmarshal(fields["error"], &jerr), "%s", a.body)
	assert.EqualValues(t, jsonrpc.CodeInvalidParams, jerr.Code, jerr.Message)
}

// The mirrored headers of a request of an older protocol mean nothing,
// and nothing is checked of them: a client of 2025-11-25 (whose requests
// carry no _meta protocol version) opens its session and reads as
// before, whatever Mcp-* headers a proxy adds.
func TestMetadataIgnoresLegacyMirroredHeaders(t *testing.T) {
	t.Parallel()
	url, c := metadataServer(t, nil, &mcp.StreamableHTTPOptions{SessionTimeout: time.Hour})
	odd := headers{"Mcp-Method", "tools/call", "Mcp-Method", "x", "Mcp-Name", "ré", "Mcp-Name", "=?base64?!?="}
	initialize := `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`
	for _, h := range []headers{odd, odd.with("Mcp-Protocol-Version", "2025-11-25"),
		odd.with("Mcp-Protocol-Version", "2025-11-25", "Mcp-Protocol-Version", "2025-06-18")} {
		requireResult(t, post(t, c, url, initialize, h), "initialize")
	}

	cs := mcptest.ConnectHTTP(t, url, "", "2025-11-25", nil)
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "docs://readme"})
	require.NoError(t, err)
	assert.Equal(t, "docs://readme", res.Contents[0].URI)
}

// A request with a 2026-07-28 _meta sent in a session of an older
// protocol, with that session's headers, is refused as a mismatch: it
// does not reach the session, and the session goes on.
func TestMetadataRefusesModernMetaInSession(t *testing.T) {
	t.Parallel()
	url, c := metadataServer(t, nil, &mcp.StreamableHTTPOptions{SessionTimeout: time.Hour})
	cs := mcptest.ConnectHTTP(t, url, "", "2025-11-25", nil)
	require.NotEmpty(t, cs.ID())
	h := headers{"Mcp-Session-Id", cs.ID(), "Mcp-Protocol-Version", "2025-11-25", "Mcp-Method", "resources/read", "Mcp-Name", "docs://readme"}
	requireHeaderMismatch(t, post(t, c, url, readBody("2026-07-28"), h), true, "in a session")
	requireHeaderMismatch(t, post(t, c, url, readBody("2026-07-28"), h.without("Mcp-Protocol-Version")), true, "in a session, no version")
	_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "docs://readme"})
	require.NoError(t, err)
}

// The edge reads a body to find its _meta only as far as
// Options.MaxBodyBytes: a longer one is refused as too large (413), as
// go-sdk beneath would with the same limit (Handler gives it the same).
func TestMetadataReadsBodyWithinLimit(t *testing.T) {
	t.Parallel()
	const limit = 2048
	url, c := metadataServer(t, &serve.Options{MaxBodyBytes: limit},
		&mcp.StreamableHTTPOptions{SessionTimeout: time.Hour, MaxRequestBodyBytes: limit})
	pad := func(n int) string {
		return modern("resources/list", `"pad":"`+strings.Repeat("x", n)+`"`, "2026-07-28")
	}
	short := pad(limit - len(pad(0)))
	require.Len(t, short, limit)
	h := mirrored("resources/list", "").without("Mcp-Protocol-Version")
	requireHeaderMismatch(t, post(t, c, url, short, h), true, "at the limit")
	long := pad(limit - len(pad(0)) + 1)
	a := post(t, c, url, long, h)
	assert.Equal(t, http.StatusRequestEntityTooLarge, a.status, "%s", a.body)

	// A request of 2026-07-28 over the limit too.
	a = post(t, c, url, long, mirrored("resources/list", ""))
	assert.Equal(t, http.StatusRequestEntityTooLarge, a.status, "%s", a.body)
	// Its body is read only to answer a refusal with its id, and only to
	// the limit: past it, the id is not known.
	a = post(t, c, url, pad(2*limit), mirrored("resources/list", "").with("Mcp-Method", "resources/list"))
	requireHeaderMismatch(t, a, false, "refused over the limit")
}

// A batch is never of 2026-07-28 ("The body of the HTTP POST MUST be a
// single JSON-RPC request or notification"), and the edge leaves one of
// an older version unread for go-sdk's handler, which refuses a message
// of it that names a protocol version in _meta itself (behaviour 4 of
// serve/gosdk.go): 400, and its -32022. In front of another handler the
// edge scans the batch, and refuses the same message with -32020. A
// batch of 2025-03-26 without such a message, with no session, is served.
func TestMetadataBatchOfOlderVersion(t *testing.T) {
	t.Parallel()
	url, c := metadataServer(t, nil, &mcp.StreamableHTTPOptions{SessionTimeout: time.Hour})
	batch := `[` + readBody("2026-07-28") + `]`
	for _, h := range []headers{nil, {"Mcp-Protocol-Version", "2025-03-26"}} {
		a := post(t, c, url, batch, h)
		require.Equal(t, http.StatusBadRequest, a.status, "%v: %s", h, a.body)
		assert.NotContains(t, string(a.body), "header mismatch", "%v: not the edge's refusal", h)
	}

	// Served: two pings, before any session (go-sdk answers ping then).
	pings := `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`
	a := post(t, c, url, pings, nil)
	require.Equal(t, http.StatusOK, a.status, "%s", a.body)
	assert.Contains(t, string(a.body), `"id":1`)
	assert.Contains(t, string(a.body), `"id":2`)

	// Another handler: the edge scans the batch.
	var served atomic.Int32
	h, err := serve.Guard(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		served.Add(1)
		w.WriteHeader(http.StatusAccepted)
	}), &serve.Options{Logger: quietLogger()})
	require.NoError(t, err)
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	requireHeaderMismatch(t, post(t, c, hs.URL, batch, nil), true, "another handler")
	assert.Zero(t, served.Load(), "another handler: the batch reached it")
	assert.Equal(t, http.StatusAccepted, post(t, c, hs.URL, pings, nil).status, "another handler: pings")
}

// A batch is known by its first byte, before the rest of its body is
// read: one of a version without batches is refused at once, and one of
// an older version goes on to go-sdk's handler, unread, where a body
// too large to open a session is refused at the session caps (429).
// The client here sends "[" and waits: the answers come before
// ReadTimeout (an hour).
func TestMetadataBatchKnownByFirstByte(t *testing.T) {
	t.Parallel()
	url, c := metadataServer(t, &serve.Options{ReadTimeout: time.Hour}, nil)
	for _, tc := range []struct {
		name   string
		h      headers
		status int
	}{
		{"a version without batches", headers{"Mcp-Protocol-Version", "2025-11-25"}, http.StatusBadRequest},
		{"no version, no session, 2 MiB", nil, http.StatusTooManyRequests},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pr, pw := io.Pipe()
			t.Cleanup(func() { pw.Close() })
			// Were the body awaited, the request would fail here.
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, pr)
			require.NoError(t, err)
			req.ContentLength = 2 << 20
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for i := 0; i+1 < len(tc.h); i += 2 {
				req.Header.Add(tc.h[i], tc.h[i+1])
			}
			go pw.Write([]byte("\n ["))
			res, err := c.Do(req)
			require.NoError(t, err)
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			assert.Equal(t, tc.status, res.StatusCode, "%s", body)
		})
	}
}
