package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/examples/quickstart/catalog"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// binPath is the server binary TestMain builds, once for all tests.
var binPath string

func TestMain(m *testing.M) { os.Exit(mcptest.RunWithBinary(m, ".", &binPath)) }

// tick is the clock's interval in the tests: quick, so that a subscriber
// hears of a change soon.
const tick = "100ms"

// wantMIME is the MIME type of each static resource the quickstart serves.
var wantMIME = map[string]string{
	"quickstart://static/hello.txt":     "text/plain",
	"quickstart://static/guide.md":      "text/markdown",
	"quickstart://static/settings.json": "application/json",
	"quickstart://static/logo.png":      "image/png",
	catalog.ClockURI:                    "text/plain",
}

// Over stdio, a client of each protocol version reads everything, and is
// told of the changes of the resource it subscribed to.
func TestStdio(t *testing.T) {
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			var n mcptest.Notifications
			cs := mcptest.Stdio(t, binPath, []string{"-tick", tick}, version, n.ClientOptions(nil))
			exercise(t, cs, version)
			subscribe(t, cs, &n, version)
		})
	}
}

// exercise checks everything the quickstart serves through cs, a session
// that asked for protocol version.
func exercise(t *testing.T, cs *mcp.ClientSession, version string) {
	ctx := t.Context()
	require.Equal(t, version, cs.InitializeResult().ProtocolVersion, "negotiated version")

	list, err := cs.ListResources(ctx, nil)
	require.NoError(t, err)
	got := make(map[string]*mcp.Resource)
	for _, r := range list.Resources {
		got[r.URI] = r
	}
	require.Len(t, got, len(wantMIME))
	for uri, mime := range wantMIME {
		r := got[uri]
		require.NotNil(t, r, "resource %s not listed", uri)
		require.Equal(t, mime, r.MIMEType, uri)
		require.NotEmpty(t, r.Name, uri)
		require.NotEmpty(t, r.Title, uri)
		require.NotEmpty(t, r.Description, uri)
	}

	// Text resources: the declared MIME type and size match the content.
	for _, uri := range []string{"quickstart://static/hello.txt", "quickstart://static/guide.md", "quickstart://static/settings.json"} {
		c := read(t, cs, uri)
		require.Equal(t, wantMIME[uri], c.MIMEType, uri)
		require.NotEmpty(t, c.Text, uri)
		require.Empty(t, c.Blob, uri)
		require.Equal(t, got[uri].Size, int64(len(c.Text)), "%s: listed size", uri)
	}
	guide := read(t, cs, "quickstart://static/guide.md").Text
	require.True(t, strings.HasPrefix(guide, "# "), "markdown heading")
	require.Contains(t, guide, "`quickstart://greetings/Ada%20Lovelace`", "the example URI, percent-encoded")
	var settings map[string]any
	require.NoError(t, json.Unmarshal([]byte(read(t, cs, "quickstart://static/settings.json").Text), &settings))
	require.NotEmpty(t, settings)

	// The PNG arrives as a blob that decodes as a PNG image.
	c := read(t, cs, "quickstart://static/logo.png")
	require.Equal(t, "image/png", c.MIMEType)
	require.Empty(t, c.Text)
	require.Equal(t, got["quickstart://static/logo.png"].Size, int64(len(c.Blob)), "listed size")
	img, err := png.Decode(bytes.NewReader(c.Blob))
	require.NoError(t, err)
	require.Equal(t, 16, img.Bounds().Dx())
	require.Equal(t, 16, img.Bounds().Dy())

	// The clock says when it last ticked.
	c = read(t, cs, catalog.ClockURI)
	require.Equal(t, "text/plain", c.MIMEType)
	require.Regexp(t, `^tick \d+ at \d{4}-\d\d-\d\dT\S+Z\n$`, c.Text)

	// The template is listed, and its read function sees the decoded name.
	tmpls, err := cs.ListResourceTemplates(ctx, nil)
	require.NoError(t, err)
	require.Len(t, tmpls.ResourceTemplates, 1)
	require.Equal(t, catalog.GreetingTemplate, tmpls.ResourceTemplates[0].URITemplate)
	require.Equal(t, "text/plain", tmpls.ResourceTemplates[0].MIMEType)

	c = read(t, cs, "quickstart://greetings/Ada%20Lovelace")
	require.Equal(t, "text/plain", c.MIMEType)
	require.Equal(t, "Hello, Ada Lovelace!\n", c.Text)

	// An empty name is not found, with the code the client's version expects.
	_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "quickstart://greetings/"})
	var jerr *jsonrpc.Error
	require.True(t, errors.As(err, &jerr), "want a JSON-RPC error, got %v", err)
	wantCode := int64(-32002)
	if version >= "2026-07-28" {
		wantCode = jsonrpc.CodeInvalidParams
	}
	require.Equal(t, wantCode, jerr.Code)

	// Completion of {name} filters the fixed names by prefix, ignoring case.
	comp, err := cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: catalog.GreetingTemplate},
		Argument: mcp.CompleteParamsArgument{Name: "name", Value: "a"},
	})
	require.NoError(t, err)
	require.Equal(t, []string{"Ada Lovelace", "Alan Turing"}, comp.Completion.Values)
	require.Equal(t, 2, comp.Completion.Total)
	require.False(t, comp.Completion.HasMore)
}

// subscribe subscribes cs, a session that asked for protocol version and
// whose notifications n records, to the clock, and waits until it is told
// of a tick. It checks that a subscription to a greeting that exists is
// accepted, and that one to a greeting with no name is refused.
func subscribe(t *testing.T, cs *mcp.ClientSession, n *mcptest.Notifications, version string) {
	t.Helper()
	ctx := t.Context()
	require.NoError(t, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: catalog.ClockURI}))
	require.NoError(t, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "quickstart://greetings/Ada%20Lovelace"}))
	if version < "2026-07-28" {
		// A 2026-07-28 client subscribes in the background, and learns
		// of a refusal only as the end of its listen stream (TestHTTP
		// checks it with mcptest.SubscribeHTTP).
		err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "quickstart://greetings/"})
		var jerr *jsonrpc.Error
		require.True(t, errors.As(err, &jerr), "want a JSON-RPC error, got %v", err)
		require.EqualValues(t, jsonrpc.CodeInvalidParams, jerr.Code)
		require.Contains(t, jerr.Message, "no such resource")
	}
	// The clock ticks on its own: no change to make.
	n.WaitUpdated(t, catalog.ClockURI, nil)
	// And the updates are of changes: the clock's content moves on.
	before := read(t, cs, catalog.ClockURI).Text
	for read(t, cs, catalog.ClockURI).Text == before {
		n.WaitUpdated(t, catalog.ClockURI, nil)
	}
}

// read returns the one content of the resource uri, read through cs,
// which names uri.
func read(t *testing.T, cs *mcp.ClientSession, uri string) *mcp.ResourceContents {
	t.Helper()
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
	require.NoError(t, err, uri)
	require.Len(t, res.Contents, 1, uri)
	c := res.Contents[0]
	require.Equal(t, uri, c.URI)
	return c
}

// Over HTTP, one server process serves clients of every protocol version
// at once on /mcp, and each is told of the changes of the resource it
// subscribed to.
func TestHTTP(t *testing.T) {
	addr := mcptest.StartHTTP(t, binPath, "-tick", tick)
	url := "http://" + addr + "/mcp"

	// Every client connects first, so that all are connected to the
	// server at once when each waits for its notification.
	sessions := make([]*mcp.ClientSession, len(mcptest.Versions))
	notes := make([]*mcptest.Notifications, len(mcptest.Versions))
	for i, version := range mcptest.Versions {
		notes[i] = new(mcptest.Notifications)
		sessions[i] = mcptest.ConnectHTTP(t, url, "", version, notes[i].ClientOptions(nil))
	}
	for i, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			caps := sessions[i].InitializeResult().Capabilities.Resources
			require.NotNil(t, caps)
			require.True(t, caps.Subscribe, "subscribe advertised")
			require.True(t, caps.ListChanged, "listChanged advertised")
			exercise(t, sessions[i], version)
			subscribe(t, sessions[i], notes[i], version)

			// Refused in every era. go-sdk's 2026-07-28 client subscribes
			// in the background and never reports a refusal: SubscribeHTTP
			// sends the subscriptions/listen itself.
			err := mcptest.SubscribeHTTP(t, url, "", version, "quickstart://greetings/")
			var jerr *jsonrpc.Error
			require.True(t, errors.As(err, &jerr), "want a JSON-RPC error, got %v", err)
			require.EqualValues(t, jsonrpc.CodeInvalidParams, jerr.Code)
			require.Contains(t, jerr.Message, "no such resource")
		})
	}

	// /mcp is the only path served.
	client := mcptest.HTTPClient(t, "")
	for _, path := range []string{"/", "/mcp/", "/other"} {
		resp, err := client.Post("http://"+addr+path, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		require.NoError(t, err, path)
		resp.Body.Close()
		require.Equal(t, http.StatusNotFound, resp.StatusCode, path)
	}
}

// A walk through resources/list started before the server restarts
// continues after it if the server has the same cursor keys, from a file
// or from the environment; with no keys it is refused, and the server
// warns at start-up that it would be.
func TestCursorKeysAcrossRestart(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "cursor-keys")
	key := newKey(t)
	// An old key after the new one: rotation in progress.
	require.NoError(t, os.WriteFile(keyFile, []byte("# cursor keys, newest first\n"+key+"\n"+newKey(t)+"\n"), 0o600))

	for _, tc := range []struct {
		name    string
		args    []string
		env     string
		resumes bool
		log     []string // in the server's one line about cursors
	}{
		{"file", []string{"-cursor-keys", keyFile}, "", true, []string{`level=INFO msg="list cursors use the keys given"`, keyFile}},
		{"env", nil, key, true, []string{`level=INFO msg="list cursors use the keys given"`, "$" + cursor.KeysEnv}},
		{"none", nil, "", false, []string{`level=WARN msg="no cursor keys given: list cursors use a random key, so they will not survive a restart or reach another replica"`,
			"-cursor-keys FILE", "$" + cursor.KeysEnv}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(cursor.KeysEnv, tc.env)
			args := append([]string{"-page-size", "2"}, tc.args...)

			// The first page of each version's walk, from one server.
			var first []*mcp.ListResourcesResult
			t.Run("before", func(t *testing.T) {
				s := mcptest.StartServer(t, binPath, args...)
				for _, version := range mcptest.Versions {
					cs := mcptest.ConnectHTTP(t, s.URL("/mcp"), "", version, nil)
					page, err := cs.ListResources(t.Context(), nil)
					require.NoError(t, err, version)
					require.Len(t, page.Resources, 2, version)
					require.NotEmpty(t, page.NextCursor, version)
					first = append(first, page)
				}
				checkStartupLog(t, s, tc.log, key)
			})

			// The rest, from the next server: the walk goes on, nothing
			// skipped or listed twice, or the cursor is refused.
			t.Run("after", func(t *testing.T) {
				s := mcptest.StartServer(t, binPath, args...)
				for i, version := range mcptest.Versions {
					t.Run(version, func(t *testing.T) {
						cs := mcptest.ConnectHTTP(t, s.URL("/mcp"), "", version, nil)
						err := mcptest.ContinueWalk(t, cs, first[i])
						if tc.resumes {
							require.NoError(t, err, "the walk across the restart")
							return
						}
						var jerr *jsonrpc.Error
						require.True(t, errors.As(err, &jerr), "want a JSON-RPC error, got %v", err)
						require.EqualValues(t, jsonrpc.CodeInvalidParams, jerr.Code)
						mcptest.ListAll(t, cs) // a new walk is served
					})
				}
				checkStartupLog(t, s, tc.log, key)
			})
		})
	}
}

// A bad key file stops the server before it serves anything.
func TestCursorKeysInvalid(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "cursor-keys")
	require.NoError(t, os.WriteFile(keyFile, []byte("c2hvcnQ=\n"), 0o600)) // "short"
	for _, tc := range []struct{ name, arg string }{
		{"short key", keyFile},
		{"missing file", keyFile + ".missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := exec.Command(binPath, "-cursor-keys", tc.arg, "-http", "127.0.0.1:0").CombinedOutput()
			var exit *exec.ExitError
			require.True(t, errors.As(err, &exit), "want the server to fail, got %v; output:\n%s", err, out)
			require.Equal(t, 1, exit.ExitCode())
			require.Contains(t, string(out), `level=ERROR msg="server failed"`)
			require.NotContains(t, string(out), "serving MCP")
		})
	}
}

// newKey returns a new random cursor key, base64-encoded as key files and
// $MCPRES_CURSOR_KEYS hold it.
func newKey(t *testing.T) string {
	b := make([]byte, 32)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return base64.StdEncoding.EncodeToString(b)
}

// checkStartupLog checks the log of s once it holds the line giving the
// URL s serves MCP on, the last it logs at start-up: that it holds one line
// about cursors, that the line holds each of want, and that the log does
// not reveal key.
func checkStartupLog(t *testing.T, s *mcptest.Server, want []string, key string) {
	t.Helper()
	out := s.WaitLog(`msg="serving MCP over streamable HTTP" url=` + s.URL("/mcp") + "\n")
	var lines []string
	for line := range strings.Lines(out) {
		if strings.Contains(line, "cursor") {
			lines = append(lines, line)
		}
	}
	require.Len(t, lines, 1, "one line about cursors; stderr:\n%s", out)
	for _, w := range want {
		require.Contains(t, lines[0], w)
	}
	require.NotContains(t, out, key)
}
