package mcpgo_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpres/mcpres/mcpgo"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// An mcp-go server over streamable HTTP gets the same edge as a go-sdk
// server: serve.Guard in front of mcp-go's handler refuses a page of
// another origin, checks the request-metadata headers, bounds bodies,
// keeps event streams open, and caps each caller's sessions. In a
// program of its own, serve.ListenAndServeHandler(ctx, addr, h, opts)
// serves it at /mcp with the limits of a public endpoint.
func Example_edge() {
	reg, err := resource.NewRegistry(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()
	reg.Add(&sdk.Resource{URI: "notes://welcome", Name: "welcome", MIMEType: "text/plain"}, resource.Text("Hello from mcp-go!"))
	s := server.NewMCPServer("notes", "v1.0.0", mcpgo.WithRegistry(reg))

	// mcp-go closes an idle session when the edge stops counting it.
	streamable := server.NewStreamableHTTPServer(s, server.WithSessionIdleTTL(serve.DefaultSessionTimeout))
	defer streamable.Shutdown(context.Background())
	h, err := serve.Guard(streamable, &serve.Options{Registry: reg})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	hs := httptest.NewServer(mux)
	defer hs.Close()

	ctx := context.Background()
	client := sdk.NewClient(&sdk.Implementation{Name: "client", Version: "v0"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: hs.URL + "/mcp"}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "notes://welcome"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("read:", res.Contents[0].Text)

	// A web page of another origin is refused before mcp-go sees it.
	req, _ := http.NewRequest(http.MethodPost, hs.URL+"/mcp", strings.NewReader(`{}`))
	req.Header.Set("Origin", "https://evil.example")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println("from another origin:", resp.Status)
	// Output:
	// read: Hello from mcp-go!
	// from another origin: 403 Forbidden
}
