package catalog_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mcpres/mcpres/examples/quickstart/catalog"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server serves the registry NewRegistry returns (the quickstart with
// reg.NewServer, the mcp-go example with mcpgo.WithRegistry); here it
// answers directly.
func ExampleNewRegistry() {
	ctx := context.Background()
	reg, err := catalog.NewRegistry(nil, catalog.NewClock())
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()

	list, err := reg.ListResources(ctx, &mcp.ListResourcesRequest{Params: &mcp.ListResourcesParams{}})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range list.Resources {
		fmt.Println(r.URI, r.MIMEType)
	}
	uri, _ := reg.Expand(catalog.GreetingTemplate, "name", "Ada Lovelace")
	greeting, err := reg.ReadResource(ctx, &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: uri}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(uri, ": ", greeting.Contents[0].Text)
	// Output:
	// quickstart://clock text/plain
	// quickstart://static/guide.md text/markdown
	// quickstart://static/hello.txt text/plain
	// quickstart://static/logo.png image/png
	// quickstart://static/settings.json application/json
	// quickstart://greetings/Ada%20Lovelace: Hello, Ada Lovelace!
}
