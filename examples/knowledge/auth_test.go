package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// The tests' tokens. Bob is also granted "archive", a collection that does
// not exist: what he gets for it is what "not found" looks like to him.
const (
	aliceToken = "alice-secret"
	bobToken   = "bob-secret"
	testTokens = `{"tokens": [
		{"token": "alice-secret", "user": "alice", "collections": ["engineering", "support"]},
		{"token": "bob-secret", "user": "bob", "collections": ["product", "archive"]}
	]}`
)

// grantedTo is which seeded collections each test token grants.
var grantedTo = map[string][]string{
	aliceToken: {"engineering", "support"},
	bobToken:   {"product"},
}

// tokensFile writes the tests' tokens file into a temporary directory and
// returns its path.
func tokensFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens.json")
	require.NoError(t, os.WriteFile(path, []byte(testTokens), 0o600))
	return path
}

// connectAs connects a client with opts (nil for none) presenting token to
// the server at url and checks the negotiated version; the session is
// closed when t ends.
func connectAs(t *testing.T, url, token, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cs := mcptest.ConnectHTTP(t, url, token, version, opts)
	require.Equal(t, version, cs.InitializeResult().ProtocolVersion, "negotiated version")
	return cs
}

// rpcError returns err as a JSON-RPC error, failing t if it is not one.
func rpcError(t *testing.T, err error, what string) *jsonrpc.Error {
	t.Helper()
	var jerr *jsonrpc.Error
	require.True(t, errors.As(err, &jerr), "%s: want a JSON-RPC error, got %v", what, err)
	return jerr
}

// requireSameError checks that got, the error about gotURI, is want, the
// error about wantURI, but for the URI.
func requireSameError(t *testing.T, want *jsonrpc.Error, wantURI string, got *jsonrpc.Error, gotURI string) {
	t.Helper()
	require.Equal(t, want.Code, got.Code, "code")
	require.Equal(t, want.Message, strings.ReplaceAll(got.Message, gotURI, wantURI), "message")
	require.Equal(t, string(want.Data), strings.ReplaceAll(string(got.Data), gotURI, wantURI), "data")
}

// TestAuthHTTP runs the binary behind bearer tokens and checks, over HTTP
// with both tokens and on each protocol version, that each user sees only
// their collections, and is told of changes to what they subscribed to.
func TestAuthHTTP(t *testing.T) {
	bin := binPath
	url := "http://" + mcptest.StartHTTP(t, bin, "-tokens", tokensFile(t), "-page-size", fmt.Sprint(pageSize), "-db", testDB(t)) + mcpPath

	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			alice := connectAs(t, url, aliceToken, version, nil)
			bobNotes := new(mcptest.Notifications)
			bob := connectAs(t, url, bobToken, version, bobNotes.ClientOptions(nil))
			users := map[string]*mcp.ClientSession{aliceToken: alice, bobToken: bob}

			t.Run("Lists", func(t *testing.T) {
				for token, cs := range users {
					checkList(t, cs, grantedTo[token])
				}
			})
			t.Run("Templates", func(t *testing.T) {
				for _, cs := range users {
					res, err := cs.ListResourceTemplates(t.Context(), nil)
					require.NoError(t, err)
					var got []string
					for _, tm := range res.ResourceTemplates {
						got = append(got, tm.URITemplate)
					}
					require.ElementsMatch(t, []string{documentsTmpl, documentTmpl, statsTmpl}, got)
				}
			})
			t.Run("DeniedReads", func(t *testing.T) { checkDeniedReads(t, alice, bob, version) })
			t.Run("Cursors", func(t *testing.T) { checkCursors(t, alice, bob) })
			t.Run("Completion", func(t *testing.T) { checkCompletion(t, alice, bob) })
			t.Run("Subscriptions", func(t *testing.T) {
				if version < "2026-07-28" {
					checkRefused(t, legacySubscribe(t, bob), deniedOrMissing...)
				} else {
					// go-sdk's client subscribes with a subscriptions/listen
					// it sends in the background, whose errors it does not
					// return: mcptest.SubscribeHTTP sends the listen itself.
					checkRefused(t, func(uri string) *jsonrpc.Error {
						return rpcError(t, mcptest.SubscribeHTTP(t, url, bobToken, version, uri), uri)
					}, deniedOrMissing...)
					checkListen(t, url, bobToken)
				}
				checkNotified(t, bob, bobNotes)
			})
			t.Run("Collections", func(t *testing.T) {
				var cols struct {
					Collections []CollectionInfo `json:"collections"`
				}
				readJSON(t, alice, collectionsURI, &cols)
				require.Equal(t, []CollectionInfo{{"engineering", 3}, {"support", 1}}, cols.Collections)
				readJSON(t, bob, collectionsURI, &cols)
				require.Equal(t, []CollectionInfo{{"product", 2}}, cols.Collections)
			})
			t.Run("Tools", func(t *testing.T) { checkTools(t, alice, bob) })
			t.Run("NoToken", func(t *testing.T) { checkUnauthenticated(t, url, version) })
			if version < "2026-07-28" {
				t.Run("SessionOfAnother", func(t *testing.T) { checkSessionOwner(t, url, bob) })
			}
		})
	}
}

// checkList checks that cs lists exactly the static resources and the
// documents lists, statistics and documents of collections.
func checkList(t *testing.T, cs *mcp.ClientSession, collections []string) {
	t.Helper()
	want := []string{collectionsURI, healthURI}
	for _, c := range collections {
		want = append(want, documentsURI(c), statsURI(c))
	}
	for _, d := range seed {
		if slices.Contains(collections, d.collection) {
			want = append(want, documentURI(d.collection, d.name))
		}
	}
	got, pages := mcptest.ListAll(t, cs)
	require.Greater(t, pages, 1, "listing takes several pages")
	var uris []string
	for _, r := range got {
		uris = append(uris, r.URI)
	}
	require.ElementsMatch(t, want, uris)
}

// checkDeniedReads checks that bob, reading alice's collections, gets what
// he gets for what does not exist; and that alice reads them.
func checkDeniedReads(t *testing.T, alice, bob *mcp.ClientSession, version string) {
	wantCode := int64(resource.CodeLegacyResourceNotFound)
	if version >= "2026-07-28" {
		wantCode = jsonrpc.CodeInvalidParams
	}
	for _, tc := range []struct{ denied, missing string }{
		{documentURI("engineering", "runbook"), documentURI("product", "nosuch")},
		{documentURI("engineering", "runbook"), documentURI("archive", "runbook")},
		{documentURI("support", "faq"), documentURI("product", "faq")},
		{documentsURI("engineering"), documentsURI("archive")},
		{statsURI("engineering"), statsURI("archive")},
		{statsURI("support"), statsURI("nosuch")},
		{documentURI("nosuch", "runbook"), documentURI("archive", "runbook")},
	} {
		_, err := bob.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: tc.missing})
		missing := rpcError(t, err, tc.missing)
		require.Equal(t, wantCode, missing.Code, tc.missing)
		require.Equal(t, "Resource not found", missing.Message, tc.missing)
		require.JSONEq(t, fmt.Sprintf(`{"uri": %q}`, tc.missing), string(missing.Data))

		_, err = bob.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: tc.denied})
		requireSameError(t, missing, tc.missing, rpcError(t, err, tc.denied), tc.denied)
	}
	for _, d := range seed {
		if d.collection != "product" {
			require.Equal(t, d.markdown, read(t, alice, documentURI(d.collection, d.name)).Text)
		}
	}
	require.Equal(t, 3, readStats(t, alice, "engineering").Documents)
}

// checkCursors checks that a cursor issued to alice serves her and is
// refused to bob.
func checkCursors(t *testing.T, alice, bob *mcp.ClientSession) {
	first, err := alice.ListResources(t.Context(), nil)
	require.NoError(t, err)
	require.NotEmpty(t, first.NextCursor)
	next := &mcp.ListResourcesParams{Cursor: first.NextCursor}

	_, err = bob.ListResources(t.Context(), next)
	jerr := rpcError(t, err, "bob with alice's cursor")
	require.Equal(t, int64(jsonrpc.CodeInvalidParams), jerr.Code)
	require.Equal(t, "invalid cursor", jerr.Message)

	_, err = alice.ListResources(t.Context(), next)
	require.NoError(t, err, "alice with her cursor")
}

// completeValues asks cs to complete arg of tmpl from value, with bound chosen.
func completeValues(ctx context.Context, cs *mcp.ClientSession, tmpl, arg, value string, bound map[string]string) ([]string, error) {
	p := &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: tmpl},
		Argument: mcp.CompleteParamsArgument{Name: arg, Value: value},
	}
	if bound != nil {
		p.Context = &mcp.CompleteContext{Arguments: bound}
	}
	res, err := cs.Complete(ctx, p)
	if err != nil {
		return nil, err
	}
	return res.Completion.Values, nil
}

// checkCompletion checks that each user is proposed only their
// collections and documents, and that completing within another's
// collection is refused as completing an unknown template is.
func checkCompletion(t *testing.T, alice, bob *mcp.ClientSession) {
	ctx := t.Context()
	values := func(cs *mcp.ClientSession, tmpl, arg, value string, bound map[string]string) []string {
		t.Helper()
		got, err := completeValues(ctx, cs, tmpl, arg, value, bound)
		require.NoError(t, err)
		return got
	}
	require.Equal(t, []string{"engineering", "support"}, values(alice, documentTmpl, "collection", "", nil))
	require.Equal(t, []string{"product"}, values(bob, documentTmpl, "collection", "", nil))
	require.Equal(t, []string{"product"}, values(bob, documentsTmpl, "collection", "", nil))
	require.Equal(t, []string{"product"}, values(bob, statsTmpl, "collection", "", nil))
	require.Equal(t, []string{"support"}, values(alice, statsTmpl, "collection", "s", nil))
	require.Empty(t, values(bob, documentsTmpl, "collection", "eng", nil))

	// {doc} with no collection chosen proposes the documents of the
	// caller's collections only.
	require.Equal(t, []string{"runbook"}, values(alice, documentTmpl, "doc", "r", nil))
	require.Equal(t, []string{"roadmap"}, values(bob, documentTmpl, "doc", "r", nil))
	require.Equal(t, []string{"personas", "roadmap"}, values(bob, documentTmpl, "doc", "", map[string]string{"collection": "product"}))

	// {doc} within alice's collection is, to bob, an unknown template.
	unknownTmpl := "resource://knowledge/{collection}/nosuch/{doc}"
	_, err := completeValues(ctx, bob, unknownTmpl, "doc", "", nil)
	unknown := rpcError(t, err, "an unknown template")
	require.Equal(t, int64(jsonrpc.CodeInvalidParams), unknown.Code)
	for _, c := range []string{"engineering", "support"} {
		_, err = completeValues(ctx, bob, documentTmpl, "doc", "", map[string]string{"collection": c})
		requireSameError(t, unknown, unknownTmpl, rpcError(t, err, "doc in "+c), documentTmpl)
	}
	require.Equal(t, []string{"code-review", "onboarding", "runbook"}, values(alice, documentTmpl, "doc", "", map[string]string{"collection": "engineering"}))
}

// deniedOrMissing are URIs bob may not subscribe to: those of alice's
// collections, which exist, and of his own collections and others, which
// do not. A template matches each. He is refused each exactly as a URI no
// template matches: he cannot tell what exists of others' collections.
var deniedOrMissing = []string{
	documentURI("engineering", "runbook"), // alice's
	documentsURI("engineering"),
	statsURI("engineering"),
	documentURI("support", "faq"),
	documentURI("product", "nosuch"),  // his collection, a missing document
	documentURI("product", "faq"),     // a document of support's name
	documentURI("archive", "runbook"), // granted to him, but missing
	documentsURI("archive"),
	statsURI("archive"),
	documentURI("nosuch", "runbook"), // neither granted nor existing
	statsURI("nosuch"),
}

// checkListen checks, on protocol 2026-07-28, that a subscriptions/listen
// presenting token for any of deniedOrMissing is answered with the same
// HTTP status as one for a URI no template matches, and that one for bob's
// own document is acknowledged, with HTTP 200 and an acknowledgment that
// names it. (checkRefused checks the JSON-RPC errors.)
func checkListen(t *testing.T, url, token string) {
	missingStatus, _ := listen(t, url, token, noTemplateURI)
	for _, uri := range deniedOrMissing {
		status, _ := listen(t, url, token, uri)
		require.Equal(t, missingStatus, status, "HTTP status for %s", uri)
	}

	roadmap := documentURI("product", "roadmap")
	require.NoError(t, mcptest.SubscribeHTTP(t, url, token, "2026-07-28", roadmap))
	status, ack := listen(t, url, token, roadmap)
	require.Equal(t, http.StatusOK, status)
	require.NotNil(t, ack, "an acknowledgment")
	require.Equal(t, []string{roadmap}, ack.Notifications.ResourceSubscriptions)
}

// checkNotified checks that bob, whose notifications n records, is told of
// changes to his document and his collection's statistics, over HTTP with
// his token: on his session's GET stream before 2026-07-28, on his
// listens' streams from 2026-07-28 on.
func checkNotified(t *testing.T, bob *mcp.ClientSession, n *mcptest.Notifications) {
	roadmap, stats := documentURI("product", "roadmap"), statsURI("product")
	edits := 0
	edit := func() {
		edits++
		md := fmt.Sprintf("# Product roadmap\n\nRevision %d.\n", edits)
		callTool(t, bob, "put_document", map[string]any{"collection": "product", "doc": "roadmap", "markdown": md})
	}
	for _, uri := range []string{roadmap, stats} {
		require.NoError(t, bob.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}))
		n.WaitUpdated(t, uri, edit)
	}
	require.NoError(t, bob.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: roadmap}))
	require.NoError(t, bob.Unsubscribe(t.Context(), &mcp.UnsubscribeParams{URI: stats}))
}

// listen POSTs a 2026-07-28 subscriptions/listen for uri presenting token,
// as go-sdk's client does, and returns the HTTP status of the answer and,
// if it is an event stream that begins with the acknowledgment of the
// subscription, the acknowledgment's params. It then hangs up, which ends
// the listen. It is a raw request because mcptest.SubscribeHTTP returns
// only the JSON-RPC answer, and checkListen checks the HTTP status and
// what the acknowledgment names.
func listen(t *testing.T, url, token, uri string) (int, *mcp.SubscriptionsAcknowledgedParams) {
	t.Helper()
	const version = "2026-07-28"
	body, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
		"params": map[string]any{
			"_meta": map[string]any{
				mcp.MetaKeyProtocolVersion:    version,
				mcp.MetaKeyClientInfo:         map[string]string{"name": "knowledge-auth-test", "version": "v0"},
				mcp.MetaKeyClientCapabilities: map[string]any{},
			},
			"notifications": map[string]any{"resourceSubscriptions": []string{uri}},
		},
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel() // hang up
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", version)
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := mcptest.HTTPClient(t, token).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()

	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp.StatusCode, nil
	}
	var first struct {
		Method string
		Params mcp.SubscriptionsAcknowledgedParams
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
			require.NoError(t, json.Unmarshal([]byte(data), &first), "%s", data)
			break
		}
	}
	require.NoError(t, sc.Err())
	if first.Method != "notifications/subscriptions/acknowledged" {
		return resp.StatusCode, nil
	}
	return resp.StatusCode, &first.Params
}

// checkTools checks that the editing tools refuse collections outside the
// caller's, and serve the caller's own.
func checkTools(t *testing.T, alice, bob *mcp.ClientSession) {
	call := func(cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		require.NoError(t, err)
		return res
	}
	text := func(res *mcp.CallToolResult) string {
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	runbook := read(t, alice, documentURI("engineering", "runbook")).Text

	// Bob may neither write to alice's collections, existing or not, nor
	// delete from them; the refusal to delete is the one for a missing
	// document.
	for _, c := range []string{"engineering", "incidents"} {
		res := call(bob, "put_document", map[string]any{"collection": c, "doc": "runbook", "markdown": "# Mine now\n"})
		require.True(t, res.IsError, c)
		require.Equal(t, fmt.Sprintf("you may not write to collection %q", c), text(res))
	}
	denied := call(bob, "delete_document", map[string]any{"collection": "engineering", "doc": "runbook"})
	missing := call(bob, "delete_document", map[string]any{"collection": "product", "doc": "runbook"})
	require.True(t, denied.IsError)
	require.True(t, missing.IsError)
	require.Equal(t, strings.ReplaceAll(text(missing), `"product"`, `"engineering"`), text(denied))
	require.Equal(t, runbook, read(t, alice, documentURI("engineering", "runbook")).Text, "untouched")

	// In his own collection, bob writes and deletes.
	res := call(bob, "put_document", map[string]any{"collection": "product", "doc": "bob-notes", "markdown": "# Notes\n"})
	require.False(t, res.IsError, text(res))
	require.Equal(t, "# Notes\n", read(t, bob, documentURI("product", "bob-notes")).Text)
	require.Equal(t, 3, readStats(t, bob, "product").Documents)
	_, err := alice.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: documentURI("product", "bob-notes")})
	require.Error(t, err, "alice reads bob's new document")
	res = call(bob, "delete_document", map[string]any{"collection": "product", "doc": "bob-notes"})
	require.False(t, res.IsError, text(res))
	require.Equal(t, 2, readStats(t, bob, "product").Documents)
}

// checkUnauthenticated checks that a request without a token, or with an
// unknown one, is answered with HTTP 401, and a client cannot connect.
func checkUnauthenticated(t *testing.T, url, version string) {
	for _, token := range []string{"", "mallory-secret"} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url,
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{}}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := mcptest.HTTPClient(t, token).Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "token %q", token)

		client := mcp.NewClient(&mcp.Implementation{Name: "knowledge-auth-test", Version: "v0"}, nil)
		transport := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: mcptest.HTTPClient(t, token)}
		cs, err := client.Connect(t.Context(), transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err == nil {
			cs.Close()
		}
		require.Error(t, err, "connecting with token %q", token)
	}
}

// checkSessionOwner checks that a request in bob's session (of a protocol
// before 2026-07-28) is refused with HTTP 403 when it carries alice's
// token, and served with his.
func checkSessionOwner(t *testing.T, url string, bob *mcp.ClientSession) {
	require.NotEmpty(t, bob.ID(), "a session")
	for token, want := range map[string]int{aliceToken: http.StatusForbidden, bobToken: http.StatusOK} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url,
			strings.NewReader(`{"jsonrpc":"2.0","id":99,"method":"resources/templates/list","params":{}}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", bob.ID())
		req.Header.Set("Mcp-Protocol-Version", bob.InitializeResult().ProtocolVersion)
		resp, err := mcptest.HTTPClient(t, token).Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, want, resp.StatusCode, "bob's session with token %q", token)
	}
}

// TestReadRate checks that -read-rate refuses reads beyond the rate, per
// user.
func TestReadRate(t *testing.T) {
	bin := binPath
	tokens := tokensFile(t)
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			url := "http://" + mcptest.StartHTTP(t, bin, "-tokens", tokens, "-read-rate", "2", "-db", testDB(t)) + mcpPath
			alice := connectAs(t, url, aliceToken, version, nil)
			uri := documentURI("engineering", "runbook")
			var limited *jsonrpc.Error
			for i := range 5 {
				_, err := alice.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
				if i == 0 {
					require.NoError(t, err, "the first read")
				}
				if err != nil {
					limited = rpcError(t, err, "read")
					break
				}
			}
			require.NotNil(t, limited, "5 reads in a row at 2 a second")
			require.Equal(t, int64(resource.CodeRateLimited), limited.Code)
			require.Equal(t, "Rate limit exceeded", limited.Message)

			// Bob's reads are counted apart.
			bob := connectAs(t, url, bobToken, version, nil)
			read(t, bob, documentURI("product", "roadmap"))
		})
	}
}

// TestAuditLog serves the knowledge base in process, logging to a buffer,
// and checks that denials are logged at Info level with who was denied.
func TestAuditLog(t *testing.T) {
	tokens, err := parseTokens([]byte(testTokens))
	require.NoError(t, err)
	logs := new(mcptest.Buffer)
	server, _ := newTestServer(t, config{pageSize: pageSize, tokens: tokens}, slog.New(slog.NewJSONHandler(logs, nil)))
	ts := httptest.NewServer(httpHandler(server, tokens))
	defer ts.Close()

	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			bob := connectAs(t, ts.URL+mcpPath, bobToken, version, nil)
			denied, allowed := documentURI("engineering", "runbook"), documentURI("product", "roadmap")
			_, err := bob.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: denied})
			require.Error(t, err)
			read(t, bob, allowed)
			require.Contains(t, auditRecords(t, logs), auditRecord{Level: "INFO", Op: "read", URI: denied, Identity: "bob", Decision: "denied"})
			// Allowed reads are audited at Debug, below this logger's level.
			require.NotContains(t, auditRecords(t, logs), auditRecord{Level: "INFO", Op: "read", URI: allowed, Identity: "bob", Decision: "allowed"})
		})
	}
}

// An auditRecord is what TestAuditLog checks of an audit record.
type auditRecord struct {
	Level    string `json:"level"`
	Op       string `json:"op"`
	URI      string `json:"uri"`
	Identity string `json:"identity"`
	Decision string `json:"decision"`
}

// auditRecords returns the audit records logged to logs so far.
func auditRecords(t *testing.T, logs *mcptest.Buffer) []auditRecord {
	t.Helper()
	var out []auditRecord
	for line := range strings.Lines(logs.String()) {
		var rec struct {
			Msg string `json:"msg"`
			auditRecord
		}
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		if rec.Msg == "resource access" {
			out = append(out, rec.auditRecord)
		}
	}
	return out
}

// TestTokensFile checks that bad tokens files are refused with a clear
// error, and that -tokens needs -http.
func TestTokensFile(t *testing.T) {
	ts, err := parseTokens([]byte(testTokens))
	require.NoError(t, err)
	info, err := ts.verify(t.Context(), aliceToken, nil)
	require.NoError(t, err)
	require.Equal(t, "alice", info.UserID)
	require.Equal(t, []string{"collection:engineering", "collection:support"}, info.Scopes)

	example, err := os.ReadFile("tokens.example.json")
	require.NoError(t, err)
	_, err = parseTokens(example)
	require.NoError(t, err, "tokens.example.json")

	for _, tc := range []struct{ file, want string }{
		{`{}`, "no tokens"},
		{`{"tokens": [{"token": "", "user": "a"}]}`, "token 1: empty token"},
		{`{"tokens": [{"token": "a b", "user": "a"}]}`, "cannot hold spaces"},
		{`{"tokens": [{"token": "t", "user": ""}]}`, "token 1: empty user"},
		{`{"tokens": [{"token": "t", "user": "a", "collections": ["Engineering"]}]}`, `invalid collection name "Engineering"`},
		{`{"tokens": [{"token": "t", "user": "a"}, {"token": "t", "user": "b"}]}`, "token 2 (user \"b\"): the same token is listed twice"},
		{`{"tokens": [{"token": "t", "user": "a", "collection": ["product"]}]}`, `unknown field "collection"`},
		{`{"tokens": []} {}`, "data after"},
		{`[`, "unexpected EOF"},
	} {
		_, err := parseTokens([]byte(tc.file))
		require.ErrorContains(t, err, tc.want, tc.file)
	}

	bin := binPath
	out, err := exec.Command(bin, "-tokens", tokensFile(t), "-db", testDB(t)).CombinedOutput()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "-tokens without -http: %v", err)
	require.Equal(t, 2, exit.ExitCode())
	require.Contains(t, string(out), "-tokens needs -http")
}
