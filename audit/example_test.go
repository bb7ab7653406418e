package audit_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"

	"github.com/mcpres/mcpres/audit"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Audit a server in the same process: here one that declares a JSON
// resource whose content does not parse. The report names the rule, the
// URI and what was seen.
func ExampleRun() {
	reg, err := resource.NewRegistry(&resource.Options{Logger: slog.New(slog.DiscardHandler), MIME: resource.MIMEOff}) // let the bad JSON through
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()
	reg.Add(&mcp.Resource{URI: "docs://readme.md", Name: "readme", MIMEType: "text/markdown"}, resource.Text("# Hello"))
	reg.Add(&mcp.Resource{URI: "docs://config.json", Name: "config", MIMEType: "application/json"}, resource.Text(`{"debug": tru`))
	server, err := reg.NewServer(&mcp.Implementation{Name: "docs"}, nil)
	if err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	serverTransport, clientTransport := mcp.NewInMemoryTransports()
	if _, err := server.Connect(ctx, serverTransport, nil); err != nil {
		log.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "auditor"}, nil).Connect(ctx, clientTransport, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	report, err := audit.Run(ctx, cs, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range report.Findings {
		fmt.Println(f.Severity, f.Rule.ID, f.Target)
	}
	fmt.Println("failed:", report.Failed(), "at advice:", report.FailedAt(audit.Advice))
	// Output:
	// ADVICE read.true-type docs://config.json
	// failed: false at advice: true
}
