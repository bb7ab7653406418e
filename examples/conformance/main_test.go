package main

import (
	"bufio"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpres/mcpres/internal/conformance"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// binPath is the server binary TestMain builds, once for all tests.
var binPath string

func TestMain(m *testing.M) { os.Exit(mcptest.RunWithBinary(m, ".", &binPath)) }

// Over HTTP, one server process serves clients of every protocol version
// at once on /mcp, and each is told of the changes of the watched resource
// it subscribed to. (The official suite, which scripts/conformance.sh
// runs, checks the rest.)
func TestHTTP(t *testing.T) {
	addr := mcptest.StartHTTP(t, binPath, "-update", "100ms")
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
			ctx := t.Context()
			cs, n := sessions[i], notes[i]
			require.Equal(t, version, cs.InitializeResult().ProtocolVersion, "negotiated version")
			caps := cs.InitializeResult().Capabilities.Resources
			require.NotNil(t, caps)
			require.True(t, caps.Subscribe, "subscribe advertised")
			require.True(t, caps.ListChanged, "listChanged advertised")

			// One page holds every resource: no cursor is issued.
			list, err := cs.ListResources(ctx, nil)
			require.NoError(t, err)
			require.Len(t, list.Resources, 3)
			require.Empty(t, list.NextCursor)

			res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://template/42/data"})
			require.NoError(t, err)
			require.Contains(t, res.Contents[0].Text, `"id":"42"`)

			require.NoError(t, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: conformance.WatchedURI}))
			require.NoError(t, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://template/42/data"}))
			// Refused in every era. go-sdk's 2026-07-28 client subscribes in
			// the background and never reports a refusal: SubscribeHTTP
			// sends the subscriptions/listen itself.
			for _, uri := range []string{"test://template//data", "test://unknown"} {
				err := mcptest.SubscribeHTTP(t, url, "", version, uri)
				var jerr *jsonrpc.Error
				require.True(t, errors.As(err, &jerr), "%s: want a JSON-RPC error, got %v", uri, err)
				require.EqualValues(t, jsonrpc.CodeInvalidParams, jerr.Code, uri)
			}
			// The resource changes on its own, every -update.
			n.WaitUpdated(t, conformance.WatchedURI, nil)
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

// scriptURL is how scripts/conformance.sh reads the server's URL from its
// log (sed -nE 's/.*msg="serving MCP over streamable HTTP" url=(http:[^ ]*).*/\1/p').
var scriptURL = regexp.MustCompile(`msg="serving MCP over streamable HTTP" url=(http:[^ ]*)`)

// The server starts as scripts/conformance.sh starts it, with
// -http 127.0.0.1:0 and nothing else, logs a URL the script finds, and
// serves the suite's protocol versions there.
func TestAsScriptStartsIt(t *testing.T) {
	cmd := exec.Command(binPath, "-http", "127.0.0.1:0")
	stderr := mcptest.Stderr(t, cmd)
	require.NoError(t, cmd.Start())
	var waitErr error
	exited := make(chan struct{}) // closed when the server has exited
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		// As the script stops it.
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			cmd.Process.Kill()
		}
		select {
		case <-exited:
			require.NoError(t, waitErr, "server exit")
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
			t.Error("server did not stop on interrupt; killed it")
		}
	})

	var url string
	deadline := time.After(10 * time.Second)
	for url == "" {
		sc := bufio.NewScanner(strings.NewReader(stderr.String()))
		for sc.Scan() {
			if m := scriptURL.FindStringSubmatch(sc.Text()); m != nil {
				url = m[1]
				break
			}
		}
		if url != "" {
			break
		}
		select {
		case <-exited:
			t.Fatalf("server exited before it listened: %v", waitErr)
		case <-deadline:
			t.Fatal("server did not log its URL within 10s")
		case <-time.After(10 * time.Millisecond):
		}
	}
	require.Regexp(t, `^http://127\.0\.0\.1:\d+/mcp$`, url)

	// The suite runs with --spec-version 2025-11-25 and 2026-07-28; the
	// subscribe scenarios run on 2025-11-25.
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		cs := mcptest.ConnectHTTP(t, url, "", version, nil)
		require.Equal(t, version, cs.InitializeResult().ProtocolVersion, "negotiated version")
		res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: conformance.StaticTextURI})
		require.NoError(t, err, version)
		require.Equal(t, "This is the content of the static text resource.", res.Contents[0].Text, version)
		require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: conformance.WatchedURI}), version)
	}
}
