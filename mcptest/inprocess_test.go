package mcptest_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// newServer returns a go-sdk server, with sopts, that serves one text
// resource, file:///hello.txt.
func newServer(sopts *mcp.ServerOptions) *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "test-server", Version: "v0"}, sopts)
	server.AddResource(&mcp.Resource{URI: "file:///hello.txt", Name: "hello", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
				{URI: req.Params.URI, MIMEType: "text/plain", Text: "hello"},
			}}, nil
		})
	return server
}

func sessions(server *mcp.Server) int {
	n := 0
	for range server.Sessions() {
		n++
	}
	return n
}

func TestConnect(t *testing.T) {
	server := newServer(nil)
	for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28", ""} {
		t.Run(fmt.Sprintf("version=%q", version), func(t *testing.T) {
			cs := mcptest.Connect(t, server, version, nil)
			want := version
			if want == "" {
				want = mcp.SupportedProtocolVersions()[0] // the latest
			}
			require.Equal(t, want, cs.InitializeResult().ProtocolVersion)
			require.Equal(t, 1, sessions(server), "server sessions")

			res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "file:///hello.txt"})
			require.NoError(t, err)
			require.Len(t, res.Contents, 1)
			require.Equal(t, "hello", res.Contents[0].Text)
			require.Equal(t, "text/plain", res.Contents[0].MIMEType)
		})
		// The subtest's cleanup has waited for the server session to end.
		require.Zero(t, sessions(server), "server sessions after the cleanup of version %q", version)
	}
}

// TestConnectOptions checks that the client options reach the client: a
// ResourceListChangedHandler hears of a resource added after connecting.
// A 2026-07-28 client listens for list_changed in the background, and
// Connect does not wait for the listen: synctest.Wait does, before the
// resource is added.
func TestConnectOptions(t *testing.T) {
	for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				server := newServer(nil)
				changed := make(chan struct{}, 1)
				mcptest.Connect(t, server, version, &mcp.ClientOptions{
					ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
						select {
						case changed <- struct{}{}:
						default:
						}
					},
				})
				synctest.Wait()
				server.AddResource(&mcp.Resource{URI: "file:///new.txt", Name: "new"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
					return nil, mcp.ResourceNotFoundError("file:///new.txt")
				})
				time.Sleep(time.Second) // synctest's clock: go-sdk's delay before it announces a change passes
				synctest.Wait()
				select {
				case <-changed:
				default:
					t.Fatal("no notifications/resources/list_changed")
				}
			})
		})
	}
}

// TestConnectWrongVersion checks that Connect fails the test, and still
// ends the server session, when the server chooses another version.
func TestConnectWrongVersion(t *testing.T) {
	server := newServer(&mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
	for _, version := range []string{"2025-06-18", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			ft := &fakeTB{TB: t}
			ft.run(func() { mcptest.Connect(ft, server, version, nil) })
			require.True(t, ft.failed, "Connect did not fail the test")
			require.Len(t, ft.errors, 1)
			require.Equal(t, fmt.Sprintf(`mcptest.Connect: the server negotiated protocol version "2025-11-25", not the %q asked for`, version), ft.errors[0])
			require.Equal(t, 1, sessions(server), "server sessions before the cleanup")
			ft.cleanup()
			require.Zero(t, sessions(server), "server sessions after the cleanup")
		})
	}
}

// A fakeTB records failures and cleanups instead of acting on them.
type fakeTB struct {
	testing.TB
	mu       sync.Mutex
	failed   bool
	errors   []string
	cleanups []func()
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failed = true
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	f.FailNow()
}

func (f *fakeTB) FailNow() {
	f.mu.Lock()
	f.failed = true
	f.mu.Unlock()
	runtime.Goexit()
}

func (f *fakeTB) Cleanup(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleanups = append(f.cleanups, fn)
}

// run calls fn in a goroutine, which FailNow may end, and waits for it.
func (f *fakeTB) run(fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	<-done
}

// cleanup calls the registered cleanups, last first.
func (f *fakeTB) cleanup() {
	for _, fn := range slices.Backward(f.cleanups) {
		fn()
	}
}
