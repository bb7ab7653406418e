package mcptest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// The quickstart example serves five static resources on one page.
const quickstartResources = 5

// TestQuickstart builds the quickstart example and drives it with the
// helpers, in parallel subtests that share the binary, each with servers
// of its own.
func TestQuickstart(t *testing.T) {
	bin := mcptest.Build(t, "../examples/quickstart")
	require.FileExists(t, bin)
	require.Contains(t, bin, "quickstart")
	for _, c := range []struct {
		name string
		test func(*testing.T, string)
	}{
		{"Stderr", testStderr},
		{"Stdio", testStdio},
		{"StartHTTP", testStartHTTP},
		{"StartServer", testStartServer},
		{"SubscribeHTTP", testSubscribeHTTP},
		{"ContinueWalk", testContinueWalk},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.test(t, bin)
		})
	}
}

// A walk goes on across a restart when the server keeps its cursor keys,
// and is refused when it makes a new random one.
func testContinueWalk(t *testing.T, bin string) {
	keys := filepath.Join(t.TempDir(), "keys")
	require.NoError(t, os.WriteFile(keys, []byte("bWNwdGVzdCBjb250aW51ZXMgYSB3YWxrIGFjcm9zcyByZXN0YXJ0cw==\n"), 0o600))
	for _, tc := range []struct {
		args    []string
		resumes bool
	}{
		{[]string{"-page-size", "2", "-tick", "1h", "-cursor-keys", keys}, true},
		{[]string{"-page-size", "2", "-tick", "1h"}, false},
	} {
		s := mcptest.StartServer(t, bin, tc.args...)
		log := s.WaitLog("serving MCP over streamable HTTP")
		require.Contains(t, log, "cursor")
		first, err := mcptest.ConnectHTTP(t, s.URL("/mcp"), "", "2026-07-28", nil).ListResources(t.Context(), nil)
		require.NoError(t, err)
		s.Stop()
		s = mcptest.StartServer(t, bin, tc.args...)
		err = mcptest.ContinueWalk(t, mcptest.ConnectHTTP(t, s.URL("/mcp"), "", "2026-07-28", nil), first)
		if tc.resumes {
			require.NoError(t, err)
			continue
		}
		var jerr *jsonrpc.Error
		require.ErrorAs(t, err, &jerr)
		require.Equal(t, "invalid cursor", jerr.Message)
	}
}

func TestBuffer(t *testing.T) {
	var b mcptest.Buffer
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			b.Write([]byte("x"))
			_ = b.String()
		})
	}
	wg.Wait()
	require.Equal(t, "xxxx", b.String())
}

func testStderr(t *testing.T, bin string) {
	cmd := exec.Command(bin, "-no-such-flag")
	stderr := mcptest.Stderr(t, cmd)
	require.Same(t, stderr, cmd.Stderr)
	require.Error(t, cmd.Run())
	require.Contains(t, stderr.String(), "flag provided but not defined: -no-such-flag")
}

func testStdio(t *testing.T, bin string) {
	for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			cs := mcptest.Stdio(t, bin, nil, version, nil)
			require.Equal(t, version, cs.InitializeResult().ProtocolVersion)
			all, pages := mcptest.ListAll(t, cs)
			require.Len(t, all, quickstartResources)
			require.Equal(t, 1, pages)
			require.Equal(t, [][]*mcp.Resource{all}, mcptest.ListPages(t, cs))
		})
	}
}

func testStartHTTP(t *testing.T, bin string) {
	addr := mcptest.StartHTTP(t, bin)
	cs := mcptest.ConnectHTTP(t, "http://"+addr+"/mcp", "", "2025-11-25", nil)
	all, pages := mcptest.ListAll(t, cs)
	require.Len(t, all, quickstartResources)
	require.Equal(t, 1, pages)
}

// A server started with StartServer can be read from, stopped and started
// again.
func testStartServer(t *testing.T, bin string) {
	for range 2 {
		s := mcptest.StartServer(t, bin, "-tick", "1h")
		require.Equal(t, "http://"+s.Addr+"/mcp", s.URL("/mcp"))
		cs := mcptest.ConnectHTTP(t, s.URL("/mcp"), "", "2026-07-28", nil)
		all, _ := mcptest.ListAll(t, cs)
		require.Len(t, all, quickstartResources)
		require.Contains(t, s.Stderr.String(), `msg="serving MCP over streamable HTTP" url=`+s.URL("/mcp"))
		cs.Close()
		s.Stop()
		s.Stop() // a second Stop does nothing
	}
}

// SubscribeHTTP tells an accepted subscription from a refused one in every
// era, 2026-07-28's listens included.
func testSubscribeHTTP(t *testing.T, bin string) {
	s := mcptest.StartServer(t, bin, "-tick", "1h")
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			require.NoError(t, mcptest.SubscribeHTTP(t, s.URL("/mcp"), "", version, "quickstart://clock"))
			require.NoError(t, mcptest.SubscribeHTTP(t, s.URL("/mcp"), "", version, "quickstart://greetings/Ada%20Lovelace"))
			err := mcptest.SubscribeHTTP(t, s.URL("/mcp"), "", version, "quickstart://nowhere")
			var jerr *jsonrpc.Error
			require.ErrorAs(t, err, &jerr)
			require.EqualValues(t, jsonrpc.CodeInvalidParams, jerr.Code)
			require.Equal(t, `cannot subscribe to "quickstart://nowhere": no such resource`, jerr.Message)
		})
	}
}

func TestHTTPClient(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	for _, token := range []string{"s3cret", ""} {
		resp, err := mcptest.HTTPClient(t, token).Get(srv.URL)
		require.NoError(t, err)
		resp.Body.Close()
	}
	require.Equal(t, []string{"Bearer s3cret", ""}, got)
}

// recorder is a testing.TB that records failures instead of reporting
// them; run the code that may fail it with run.
type recorder struct {
	testing.TB
	failed bool
	msgs   []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(f string, a ...any) {
	r.failed = true
	r.msgs = append(r.msgs, fmt.Sprintf(f, a...))
}
func (r *recorder) FailNow()     { r.failed = true; runtime.Goexit() }
func (r *recorder) Failed() bool { return r.failed }

// run calls f in a goroutine of its own, which FailNow may end.
func (r *recorder) run(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

// pager returns a session with a server whose resources/list pages
// answer with next(page), the cursor after page (numbered from 1).
func pager(t *testing.T, next func(page int) string) *mcp.ClientSession {
	server := mcp.NewServer(&mcp.Implementation{Name: "pager", Version: "v0"}, nil)
	server.AddResource(&mcp.Resource{URI: "test://r", Name: "r"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return nil, errors.New("not read")
	})
	server.AddReceivingMiddleware(func(h mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "resources/list" {
				return h(ctx, method, req)
			}
			page := 1
			if c := req.GetParams().(*mcp.ListResourcesParams).Cursor; c != "" {
				page, _ = strconv.Atoi(c)
				page++
			}
			return &mcp.ListResourcesResult{
				Resources:  []*mcp.Resource{{URI: fmt.Sprintf("test://%d", page), Name: "r"}},
				NextCursor: next(page),
			}, nil
		}
	})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(t.Context(), st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "mcptest-test", Version: "v0"}, nil).Connect(t.Context(), ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestListPages(t *testing.T) {
	// Three pages, whose cursors are their numbers.
	cs := pager(t, func(page int) string {
		if page == 3 {
			return ""
		}
		return strconv.Itoa(page)
	})
	pages := mcptest.ListPages(t, cs)
	require.Len(t, pages, 3)
	for i, p := range pages {
		require.Len(t, p, 1)
		require.Equal(t, fmt.Sprintf("test://%d", i+1), p[0].URI)
	}
	all, n := mcptest.ListAll(t, cs)
	require.Equal(t, 3, n)
	require.Len(t, all, 3)
}

func TestListPagesCursorLoop(t *testing.T) {
	// Page 3 points back at page 2.
	cs := pager(t, func(page int) string { return strconv.Itoa(min(page, 2)) })
	r := &recorder{TB: t}
	r.run(func() { mcptest.ListAll(r, cs) })
	require.True(t, r.failed)
	require.Contains(t, strings.Join(r.msgs, "\n"), `repeats cursor "2"`)
}

// ListPages gives up on cursors that never end after 10,000 pages, as it
// says; the test lowers the limit to 100 to see it give up, which the
// same comparison does at any limit.
func TestListPagesEndless(t *testing.T) {
	require.Equal(t, 10_000, mcptest.MaxPages())
	mcptest.SetMaxPages(t, 100)
	// Every page has a new cursor.
	cs := pager(t, strconv.Itoa)
	r := &recorder{TB: t}
	r.run(func() { mcptest.ListPages(r, cs) })
	require.True(t, r.failed)
	require.Contains(t, strings.Join(r.msgs, "\n"), "too many pages")
}
