package resource_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const jpegBytes = "\xff\xd8\xff\xe0\x00\x10JFIF\x00"

// lyingRegistry holds resources whose content contradicts their type.
func lyingRegistry(t *testing.T, policy resource.MIMEPolicy, logs *syncBuffer) *resource.Registry {
	reg := newRegistry(t, &resource.Options{MIME: policy, Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	for uri, add := range map[string]func() error{
		"test://bad.json": func() error {
			return reg.Add(&mcp.Resource{URI: "test://bad.json", Name: "j", MIMEType: "application/json"}, resource.Text(`{"a":`))
		},
		"test://photo": func() error {
			return reg.Add(&mcp.Resource{URI: "test://photo", Name: "p", MIMEType: "image/png"}, resource.Bytes([]byte(jpegBytes)))
		},
		"test://picture-as-text": func() error {
			return reg.Add(&mcp.Resource{URI: "test://picture-as-text", Name: "t", MIMEType: "image/png"}, resource.Text("not a picture"))
		},
	} {
		require.NoError(t, add(), uri)
	}
	return reg
}

func TestMIMEPolicy(t *testing.T) {
	t.Parallel()
	cases := map[string]string{ // URI -> rule named in the log
		"test://bad.json":        "JSON parses",
		"test://photo":           "blob signature matches the declared type",
		"test://picture-as-text": "binary type delivered as blob",
	}
	t.Run("strict", func(t *testing.T) {
		logs := &syncBuffer{}
		h := connect(t, lyingRegistry(t, resource.MIMEStrict, logs), "2026-07-28", nil, nil)
		for uri, rule := range cases {
			_, err := h.session.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
			jerr := rpcError(t, err)
			assert.EqualValues(t, jsonrpc.CodeInternalError, jerr.Code, uri)
			assert.Equal(t, "Internal error", jerr.Message, uri)
			assert.Contains(t, logs.String(), `"rule":"`+rule+`"`, uri)
			assert.Contains(t, logs.String(), `"uri":"`+uri+`"`, uri)
		}
	})
	t.Run("warn", func(t *testing.T) {
		logs := &syncBuffer{}
		h := connect(t, lyingRegistry(t, resource.MIMEWarn, logs), "2025-11-25", nil, nil)
		for uri, rule := range cases {
			res, err := h.session.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
			require.NoError(t, err, uri)
			assert.Len(t, res.Contents, 1)
			assert.Contains(t, logs.String(), `"level":"WARN"`)
			assert.Contains(t, logs.String(), `"rule":"`+rule+`"`, uri)
		}
	})
	t.Run("off", func(t *testing.T) {
		logs := &syncBuffer{}
		h := connect(t, lyingRegistry(t, resource.MIMEOff, logs), "2025-06-18", nil, nil)
		for uri := range cases {
			_, err := h.session.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
			require.NoError(t, err, uri)
		}
		assert.Empty(t, logs.String())
	})
}

func TestMIMEFilledFromDetect(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	reg := newRegistry(t, nil)
	require.NoError(t, reg.Add(&mcp.Resource{URI: "file:///notes/todo.md", Name: "todo"}, resource.Text("# todo")))
	require.NoError(t, reg.Add(&mcp.Resource{URI: "test://logo", Name: "logo"}, resource.Bytes(png)))
	require.NoError(t, reg.Add(&mcp.Resource{URI: "test://empty.txt", Name: "empty"}, resource.Text("")))
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "src://{name}.go", Name: "source"},
		func(context.Context, *mcp.ReadResourceRequest, resource.Vars) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "package main"}}}, nil
		}))
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "any://{name}", Name: "any"},
		func(context.Context, *mcp.ReadResourceRequest, resource.Vars) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: `{"k": 1}`}}}, nil
		}))
	h := connect(t, reg, "2026-07-28", nil, nil)
	ctx := context.Background()

	lr, err := h.session.ListResources(ctx, nil)
	require.NoError(t, err)
	types := map[string]string{}
	for _, r := range lr.Resources {
		types[r.URI] = r.MIMEType
	}
	assert.Equal(t, "text/markdown", types["file:///notes/todo.md"], "metadata filled from the extension")
	assert.Equal(t, "", types["test://logo"], "no extension: nothing to say before reading")
	tr, err := h.session.ListResourceTemplates(ctx, nil)
	require.NoError(t, err)
	for _, tmpl := range tr.ResourceTemplates {
		if tmpl.URITemplate == "src://{name}.go" {
			assert.Equal(t, "text/x-go", tmpl.MIMEType)
		}
	}

	for uri, want := range map[string]string{
		"file:///notes/todo.md": "text/markdown",
		"test://logo":           "image/png", // from the signature
		"src://main.go":         "text/x-go",
		"any://thing":           "text/plain; charset=utf-8",
	} {
		res, err := h.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		require.NoError(t, err, uri)
		assert.Equal(t, want, res.Contents[0].MIMEType, uri)
	}
	// An empty text travels as an empty blob, the one form the schema accepts.
	res, err := h.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://empty.txt"})
	require.NoError(t, err)
	assert.Equal(t, "text/plain", res.Contents[0].MIMEType)
	assert.NotNil(t, res.Contents[0].Blob)
	assert.Empty(t, res.Contents[0].Blob)
}
