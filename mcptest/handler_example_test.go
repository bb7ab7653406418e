package mcptest_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// A test of a server served over streamable HTTP, in the test's own
// process: here go-sdk's handler; mcp-go's
// server.NewStreamableHTTPServer(s) is tested the same way.
func ExampleConnectHandler() {
	server := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "v1"}, nil)
	server.AddResource(&mcp.Resource{URI: "notes://welcome", Name: "welcome", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "Hello over HTTP"}}}, nil
		})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)

	testRead := func(t testing.TB) {
		cs := mcptest.ConnectHandler(t, handler, "2025-11-25", nil)
		res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "notes://welcome"})
		require.NoError(t, err)
		fmt.Println(res.Contents[0].Text)
	}
	runTest(testRead) // in a test file: func TestRead(t *testing.T) { testRead(t) }
	// Output: Hello over HTTP
}

// runTest runs test as go test runs a Test function, for an Example,
// which has no *testing.T: t.Context() ends and the cleanups run when
// test returns, and a failure panics.
func runTest(test func(t testing.TB)) {
	ctx, cancel := context.WithCancel(context.Background())
	t := &exampleT{ctx: ctx}
	defer func() {
		cancel()
		for _, f := range slices.Backward(t.cleanups) {
			f()
		}
	}()
	test(t)
}

// An exampleT is the part of a testing.TB the helpers call.
type exampleT struct {
	testing.TB // nil: no other method is called
	ctx        context.Context
	cleanups   []func()
}

func (*exampleT) Helper()                           {}
func (t *exampleT) Context() context.Context        { return t.ctx }
func (t *exampleT) Cleanup(f func())                { t.cleanups = append(t.cleanups, f) }
func (*exampleT) Errorf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (*exampleT) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (*exampleT) Fatal(args ...any)                 { panic(fmt.Sprint(args...)) }
func (*exampleT) FailNow()                          { panic("FailNow") }
