// Command broken is an MCP server over stdio that breaks resource rules on
// purpose, for the tests of package audit and of the mcpaudit command: a
// listed URI with credentials in it, JSON that does not parse, a PNG that
// is a JPEG, and an unknown resource answered with empty contents.
package main

import (
	"context"
	"log"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	server := mcp.NewServer(&mcp.Implementation{Name: "broken", Version: "v0"}, &mcp.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	text := func(uri, mime, body string) mcp.ResourceHandler {
		return func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: body}}}, nil
		}
	}
	server.AddResource(&mcp.Resource{URI: "https://user:secret@example.com/notes", Name: "notes", MIMEType: "text/plain"},
		text("https://user:secret@example.com/notes", "text/plain", "hello"))
	server.AddResource(&mcp.Resource{URI: "data://config.json", Name: "config", MIMEType: "application/json"},
		text("data://config.json", "application/json", `{"name": "broken",`))
	server.AddResource(&mcp.Resource{URI: "data://logo.png", Name: "logo", MIMEType: "image/png"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			jpeg := []byte{0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 'J', 'F', 'I', 'F', 0}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "data://logo.png", MIMEType: "image/png", Blob: jpeg}}}, nil
		})
	// An unknown resource is answered with empty contents, not an error.
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == "resources/read" && err != nil {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{}}, nil
			}
			return res, err
		}
	})
	if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
