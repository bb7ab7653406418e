package mcptest_test

import (
	"testing"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/stretchr/testify/require"
)

// A test, in a server's main package, that builds the server and reads
// everything it lists, over stdio and over streamable HTTP.
func Example() {
	testServer := func(t *testing.T) {
		bin := mcptest.Build(t, ".")

		cs := mcptest.Stdio(t, bin, []string{"-page-size", "10"}, "2025-11-25", nil)
		require.Equal(t, "2025-11-25", cs.InitializeResult().ProtocolVersion)
		resources, pages := mcptest.ListAll(t, cs)
		require.NotEmpty(t, resources)
		t.Logf("%d resources on %d pages", len(resources), pages)

		addr := mcptest.StartHTTP(t, bin, "-page-size", "10")
		t.Logf("serving on http://%s", addr)
	}
	_ = testServer // run it from a Test function
}
