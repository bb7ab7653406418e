package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"image/png"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// binPath is the server binary TestMain builds, once for all tests.
var binPath string

func TestMain(m *testing.M) { os.Exit(mcptest.RunWithBinary(m, ".", &binPath)) }

// protocolVersions are the protocol versions the client negotiates in turn.
var protocolVersions = []string{"2025-06-18", "2025-11-25", "2026-07-28"}

const greetingTemplate = "quickstart://greetings/{name}"

// wantMIME is the MIME type of each static resource the quickstart serves.
var wantMIME = map[string]string{
	"quickstart://static/hello.txt":     "text/plain",
	"quickstart://static/guide.md":      "text/markdown",
	"quickstart://static/settings.json": "application/json",
	"quickstart://static/logo.png":      "image/png",
}

func TestStdio(t *testing.T) {
	bin := binPath
	for _, version := range protocolVersions {
		t.Run(version, func(t *testing.T) {
			cs := mcptest.Stdio(t, bin, nil, version, nil)
			exercise(t, cs, version)
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

	read := func(uri string) *mcp.ResourceContents {
		t.Helper()
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		require.NoError(t, err, uri)
		require.Len(t, res.Contents, 1, uri)
		c := res.Contents[0]
		require.Equal(t, uri, c.URI)
		return c
	}

	// Text resources: the declared MIME type and size match the content.
	for _, uri := range []string{"quickstart://static/hello.txt", "quickstart://static/guide.md", "quickstart://static/settings.json"} {
		c := read(uri)
		require.Equal(t, wantMIME[uri], c.MIMEType, uri)
		require.NotEmpty(t, c.Text, uri)
		require.Empty(t, c.Blob, uri)
		require.Equal(t, got[uri].Size, int64(len(c.Text)), "%s: listed size", uri)
	}
	require.True(t, strings.HasPrefix(read("quickstart://static/guide.md").Text, "# "), "markdown heading")
	var settings map[string]any
	require.NoError(t, json.Unmarshal([]byte(read("quickstart://static/settings.json").Text), &settings))
	require.NotEmpty(t, settings)

	// The PNG arrives as a blob that decodes as a PNG image.
	c := read("quickstart://static/logo.png")
	require.Equal(t, "image/png", c.MIMEType)
	require.Empty(t, c.Text)
	require.Equal(t, got["quickstart://static/logo.png"].Size, int64(len(c.Blob)), "listed size")
	img, err := png.Decode(bytes.NewReader(c.Blob))
	require.NoError(t, err)
	require.Equal(t, 16, img.Bounds().Dx())
	require.Equal(t, 16, img.Bounds().Dy())

	// The template is listed, and its read function sees the decoded name.
	tmpls, err := cs.ListResourceTemplates(ctx, nil)
	require.NoError(t, err)
	require.Len(t, tmpls.ResourceTemplates, 1)
	require.Equal(t, greetingTemplate, tmpls.ResourceTemplates[0].URITemplate)
	require.Equal(t, "text/plain", tmpls.ResourceTemplates[0].MIMEType)

	c = read("quickstart://greetings/Ada%20Lovelace")
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
		Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: greetingTemplate},
		Argument: mcp.CompleteParamsArgument{Name: "name", Value: "a"},
	})
	require.NoError(t, err)
	require.Equal(t, []string{"Ada Lovelace", "Alan Turing"}, comp.Completion.Values)
	require.Equal(t, 2, comp.Completion.Total)
	require.False(t, comp.Completion.HasMore)
}

func TestHTTP(t *testing.T) {
	bin := binPath
	addr := mcptest.StartHTTP(t, bin)

	// A client of our own, whose idle connections are closed before the
	// server is stopped.
	httpClient := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	t.Cleanup(httpClient.CloseIdleConnections)

	for _, version := range protocolVersions {
		t.Run(version, func(t *testing.T) {
			ctx := t.Context()
			transport := &mcp.StreamableClientTransport{Endpoint: "http://" + addr, HTTPClient: httpClient}
			client := mcp.NewClient(&mcp.Implementation{Name: "quickstart-test", Version: "v0"}, nil)
			cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
			require.NoError(t, err)
			defer cs.Close()
			exercise(t, cs, version)
		})
	}
}
