package mcpgo_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpres/mcpres/mcpgo"
	"github.com/mcpres/mcpres/resource"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// An mcp-go server serves a registry's resources: one option wires it.
// The server is then served as any mcp-go server (server.ServeStdio(s),
// or server.NewStreamableHTTPServer(s)); here an in-process client
// lists and reads.
func ExampleWithRegistry() {
	reg, err := resource.NewRegistry(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()
	reg.Add(&sdk.Resource{URI: "notes://welcome", Name: "welcome", MIMEType: "text/plain"}, resource.Text("Hello from mcp-go!"))
	reg.AddTemplate(&sdk.ResourceTemplate{URITemplate: "notes://users/{name}", Name: "user", MIMEType: "text/plain"},
		func(_ context.Context, _ *sdk.ReadResourceRequest, vars resource.Vars) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{Text: "user " + vars.Get("name")}}}, nil
		})

	s := server.NewMCPServer("notes", "v1.0.0", mcpgo.WithRegistry(reg))

	ctx := context.Background()
	c, err := client.NewInProcessClient(s)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		log.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		log.Fatal(err)
	}
	list, err := c.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range list.Resources {
		fmt.Println("listed:", r.URI)
	}
	for _, uri := range []string{"notes://welcome", "notes://users/Ada%20Lovelace"} {
		req := mcp.ReadResourceRequest{}
		req.Params.URI = uri
		res, err := c.ReadResource(ctx, req)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("read %s: %q\n", uri, res.Contents[0].(mcp.TextResourceContents).Text)
	}
	req := mcp.ReadResourceRequest{}
	req.Params.URI = "notes://nothing"
	_, err = c.ReadResource(ctx, req)
	fmt.Println(err)
	// Output:
	// listed: notes://welcome
	// read notes://welcome: "Hello from mcp-go!"
	// read notes://users/Ada%20Lovelace: "user Ada Lovelace"
	// resource not found: handler not found for resource URI 'notes://nothing': resource not found
}

// Each caller of an mcp-go server sees its own notes: the server's HTTP
// context function names the caller of each request from its bearer
// token (mcpgo.WithIdentity), and the registry reads that name back
// (mcpgo.Identity) for its Authorizer, rate limits and cursors.
func ExampleIdentity() {
	reg, err := resource.NewRegistry(&resource.Options{
		Identity: mcpgo.Identity,
		Authorize: func(_ context.Context, a resource.Access) error {
			if a.URI != "" && !strings.HasPrefix(a.URI, "notes://"+a.Identity+"/") {
				return resource.ErrDenied
			}
			return nil
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()
	for _, uri := range []string{"notes://ada/todo", "notes://bob/todo"} {
		reg.Add(&sdk.Resource{URI: uri, Name: uri, MIMEType: "text/plain"}, resource.Text("..."))
	}

	// A real server verifies the token, with its identity provider.
	users := map[string]string{"token-of-ada": "ada", "token-of-bob": "bob"}
	s := server.NewMCPServer("notes", "v1.0.0", mcpgo.WithRegistry(reg))
	h := server.NewStreamableHTTPServer(s, server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
		return mcpgo.WithIdentity(ctx, users[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")])
	}))
	ts := httptest.NewServer(h)
	defer ts.Close()

	for _, token := range []string{"token-of-ada", "token-of-bob"} {
		c, err := client.NewStreamableHttpClient(ts.URL, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
		if err != nil {
			log.Fatal(err)
		}
		ctx := context.Background()
		if err := c.Start(ctx); err != nil {
			log.Fatal(err)
		}
		init := mcp.InitializeRequest{}
		init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
		if _, err := c.Initialize(ctx, init); err != nil {
			log.Fatal(err)
		}
		list, err := c.ListResources(ctx, mcp.ListResourcesRequest{})
		if err != nil {
			log.Fatal(err)
		}
		for _, r := range list.Resources {
			fmt.Println(token, "lists", r.URI)
		}
		c.Close()
	}
	// Output:
	// token-of-ada lists notes://ada/todo
	// token-of-bob lists notes://bob/todo
}
