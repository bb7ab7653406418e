// Command broken is an MCP server over stdio that breaks the audit's rules
// on purpose, for the tests of the mcpaudit command: with -break ID it
// breaks rule ID alone (see mcpaudit -rules); without it, it breaks a few
// at once: a listed URI with credentials, JSON that does not parse, a PNG
// that is a JPEG, and an unknown resource answered with empty contents.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/mcpres/mcpres/audit/internal/broken"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	rule := flag.String("break", "", "break only the rule `ID`")
	flag.Parse()
	server := broken.Several()
	if *rule != "" {
		breakRule, ok := broken.Breakers[*rule]
		if !ok {
			log.Fatalf("broken: no way to break rule %q", *rule)
		}
		server = broken.Base()
		breakRule(server)
	}
	if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
