package resource_test

import (
	"fmt"
	"testing"

	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkExpand is the cost of building one instance URI, as a provider
// does for each resource it lists, among 10 and 10,000 templates.
func BenchmarkExpand(b *testing.B) {
	for _, n := range []int{10, 10_000} {
		b.Run(fmt.Sprintf("templates=%d", n), func(b *testing.B) {
			reg := newRegistry(b, &resource.Options{Logger: quietLogger()})
			for i := range n {
				if err := reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: fmt.Sprintf("db://t%d/{id}", i), Name: "t"}, nil2); err != nil {
					b.Fatal(err)
				}
			}
			tmpl := fmt.Sprintf("db://t%d/{id}", n-1)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := reg.Expand(tmpl, "id", "12345"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
