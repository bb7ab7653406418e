// Command everything serves, over stdio, the resources of go-sdk v1.8's
// "everything" example server (examples/server/everything), written with
// plain go-sdk as that example writes them: two static resources under one
// URI, a template, and a completion handler. The README audits it as a
// worked example of what the audit finds in a server written the way the
// SDK shows.
package main

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	server := mcp.NewServer(&mcp.Implementation{Name: "everything"}, &mcp.ServerOptions{
		Instructions:      "Use this server!",
		CompletionHandler: complete,
		Logger:            slog.New(slog.DiscardHandler),
	})
	server.AddResource(&mcp.Resource{Name: "info", MIMEType: "text/plain", URI: "embedded:info"}, embeddedResource)
	server.AddResource(&mcp.Resource{Name: "info (with Icons)", MIMEType: "text/plain", URI: "embedded:info"}, embeddedResource)
	server.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "Resource template (with Icon)",
		MIMEType:    "text/plain",
		URITemplate: "http://example.com/~{resource_name}/",
	}, embeddedResource)
	if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}

var embeddedResources = map[string]string{
	"info": "This is the hello example server.",
}

func embeddedResource(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	u, err := url.Parse(req.Params.URI)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "embedded" {
		return nil, fmt.Errorf("wrong scheme: %q", u.Scheme)
	}
	key := u.Opaque
	text, ok := embeddedResources[key]
	if !ok {
		return nil, fmt.Errorf("no embedded resource named %q", key)
	}
	return &mcp.ReadResourceResult{
		Contents: []*mcp.ResourceContents{
			{URI: req.Params.URI, MIMEType: "text/plain", Text: text},
		},
	}, nil
}

func complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	return &mcp.CompleteResult{
		Completion: mcp.CompletionResultDetails{
			Total:  1,
			Values: []string{req.Params.Argument.Value + "x"},
		},
	}, nil
}
