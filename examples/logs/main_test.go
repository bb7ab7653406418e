package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// binPath is the server binary TestMain builds, once for all tests.
var binPath string

func TestMain(m *testing.M) { os.Exit(mcptest.RunWithBinary(m, ".", &binPath)) }

// testLog is the file the tests serve. beta has lines on both sides of
// 04:00:00 on 2026-11-20; alpha's 04:00:00 line shares beta's window.
var testLog = strings.Join([]string{
	"2026-11-19T22:10:00Z alpha INFO a1",
	"2026-11-19T23:59:59Z beta WARN b1",
	"2026-11-20T00:00:00Z alpha INFO a2",
	"2026-11-20T01:00:00Z gamma DEBUG g1",
	"2026-11-20T03:59:59Z beta INFO b2 last before four",
	"2026-11-20T04:00:00Z beta INFO b3 exactly four",
	"2026-11-20T04:00:00Z alpha ERROR a3",
	"2026-11-20T05:30:00Z gamma INFO g2 mentions beta",
	"2026-11-20T05:30:01Z beta INFO b4",
	"2026-11-20T07:59:59.5Z beta INFO b5 half a second before eight",
	"2026-11-20T08:00:00Z beta INFO b6 eight",
	"2026-11-20T13:00:00Z gamma INFO g3",
	"2026-11-20T23:59:59Z alpha INFO a4",
}, "\n") + "\n"

// wantSlice is what the listing and a read say of one slice.
type wantSlice struct {
	key  string // service/date/range
	text string
}

// expectedSlices parses text on its own, for the tests to compare with:
// the slices it holds, in key order.
func expectedSlices(t *testing.T, text string) []wantSlice {
	t.Helper()
	byKey := make(map[string]string)
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		f := strings.Fields(line)
		ts, err := time.Parse(time.RFC3339Nano, f[0])
		require.NoError(t, err)
		h := ts.Hour() / 4 * 4
		key := fmt.Sprintf("%s/%s/%02d-%02d", f[1], ts.Format(time.DateOnly), h, h+4)
		byKey[key] += line + "\n"
	}
	var out []wantSlice
	for k, v := range byKey {
		out = append(out, wantSlice{k, v})
	}
	slices.SortFunc(out, func(a, b wantSlice) int { return strings.Compare(a.key, b.key) })
	return out
}

// connect starts bin with args over stdio and returns a session on
// protocol version; the server must exit cleanly when it is closed.
func connect(t *testing.T, bin, version string, args ...string) *mcp.ClientSession {
	t.Helper()
	cs := mcptest.Stdio(t, bin, args, version, nil)
	require.Equal(t, version, cs.InitializeResult().ProtocolVersion, "negotiated version")
	return cs
}

func readText(t *testing.T, cs *mcp.ClientSession, uri string) string {
	t.Helper()
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
	require.NoError(t, err, uri)
	require.Len(t, res.Contents, 1, uri)
	c := res.Contents[0]
	require.Equal(t, uri, c.URI)
	require.Equal(t, "text/plain", c.MIMEType, uri)
	return c.Text
}

func writeTestLog(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "test.log")
	require.NoError(t, os.WriteFile(path, []byte(testLog), 0o644))
	return path
}

func TestStdio(t *testing.T) {
	path := writeTestLog(t)
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			cs := connect(t, binPath, version, "-file", path, "-page-size", "3")
			exercise(t, cs, version)
		})
	}
}

// exercise checks everything the server serves through cs, a session that
// asked for protocol version, of a server of testLog with -page-size 3.
func exercise(t *testing.T, cs *mcp.ClientSession, version string) {
	ctx := t.Context()
	want := expectedSlices(t, testLog)

	// The listing: every slice with a line, in key order, paged.
	list, pages := mcptest.ListAll(t, cs)
	require.Greater(t, pages, 2, "pages")
	require.Len(t, list, len(want))
	for i, w := range want {
		r := list[i]
		require.Equal(t, "log://"+w.key, r.URI)
		require.Equal(t, w.key, r.Name)
		require.NotEmpty(t, r.Title)
		require.Equal(t, "text/plain", r.MIMEType)
		require.Equal(t, int64(len(w.text)), r.Size, r.URI)
		require.Equal(t, w.text, readText(t, cs, r.URI), r.URI)
	}

	// The 04:00:00 line opens 04-08; 07:59:59.5 is its last.
	require.Equal(t, "2026-11-20T04:00:00Z beta INFO b3 exactly four\n"+
		"2026-11-20T05:30:01Z beta INFO b4\n"+
		"2026-11-20T07:59:59.5Z beta INFO b5 half a second before eight\n",
		readText(t, cs, "log://beta/2026-11-20/04-08"))
	require.Equal(t, "2026-11-20T03:59:59Z beta INFO b2 last before four\n",
		readText(t, cs, "log://beta/2026-11-20/00-04"))

	// The template.
	tmpls, err := cs.ListResourceTemplates(ctx, nil)
	require.NoError(t, err)
	require.Len(t, tmpls.ResourceTemplates, 1)
	require.Equal(t, logTemplate, tmpls.ResourceTemplates[0].URITemplate)

	// Unknown services, dates and ranges, and empty slices.
	wantCode := int64(-32002)
	if version >= "2026-07-28" {
		wantCode = jsonrpc.CodeInvalidParams
	}
	for _, uri := range []string{
		"log://delta/2026-11-20/04-08",   // unknown service
		"log://beta/2026-11-21/04-08",    // no lines that day
		"log://beta/20261120/04-08",      // malformed date
		"log://beta/2026-13-40/04-08",    // impossible date
		"log://beta/2026-11-20/04-09",    // not a range
		"log://beta/2026-11-20/4-8",      // not a range
		"log://gamma/2026-11-20/04-08x",  // not a range
		"log://alpha/2026-11-20/08-12",   // no alpha lines then
		"log://beta/2026-11-20/04-08/xx", // too deep
	} {
		_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		var jerr *jsonrpc.Error
		require.True(t, errors.As(err, &jerr), "%s: want a JSON-RPC error, got %v", uri, err)
		require.Equal(t, wantCode, jerr.Code, uri)
	}

	// Completion of each variable, with and without bound ones.
	complete := func(name, value string, bound map[string]string) []string {
		t.Helper()
		p := &mcp.CompleteParams{
			Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: logTemplate},
			Argument: mcp.CompleteParamsArgument{Name: name, Value: value},
		}
		if bound != nil {
			p.Context = &mcp.CompleteContext{Arguments: bound}
		}
		res, err := cs.Complete(ctx, p)
		require.NoError(t, err)
		require.Equal(t, len(res.Completion.Values), res.Completion.Total)
		return res.Completion.Values
	}
	require.Equal(t, []string{"alpha", "beta", "gamma"}, complete("service", "", nil))
	require.Equal(t, []string{"beta"}, complete("service", "b", nil))
	require.Equal(t, []string{"gamma"}, complete("service", "", map[string]string{"date": "2026-11-20", "hourRange": "12-16"}))
	require.Equal(t, []string{"2026-11-19", "2026-11-20"}, complete("date", "", nil))
	require.Equal(t, []string{"2026-11-20"}, complete("date", "", map[string]string{"service": "gamma"}))
	require.Equal(t, []string{"2026-11-19"}, complete("date", "2026-11-19", map[string]string{"service": "beta"}))
	require.Equal(t, hourRanges, complete("hourRange", "", nil))
	require.Equal(t, []string{"12-16", "16-20"}, complete("hourRange", "1", nil))
	require.Equal(t, []string{"00-04", "04-08", "08-12"}, complete("hourRange", "", map[string]string{"service": "beta", "date": "2026-11-20"}))
	require.Equal(t, []string{"00-04", "04-08", "20-24"}, complete("hourRange", "", map[string]string{"service": "alpha", "date": "2026-11-20"}))
	require.Empty(t, complete("hourRange", "", map[string]string{"service": "delta", "date": "2026-11-20"}))

	// Subscriptions: accepted for a slice with lines, refused for
	// one with none. (Without -follow the server reads the file once,
	// so no update ever comes.)
	for _, w := range want {
		require.NoError(t, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "log://" + w.key}), w.key)
	}
	if version < "2026-07-28" {
		// A 2026-07-28 client subscribes in the background, and
		// learns of a refusal only as the end of its listen stream
		// (TestHTTP checks it with mcptest.SubscribeHTTP).
		for _, uri := range noSuchSlices {
			requireNoSuchResource(t, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}), uri)
		}
	}
}

// noSuchSlices are URIs of testLog's template that name no slice: a
// subscription to any is refused.
var noSuchSlices = []string{
	"log://delta/2026-11-20/04-08", // unknown service
	"log://beta/2026-11-21/04-08",  // no lines that day
	"log://beta/2026-13-40/04-08",  // impossible date
	"log://beta/2026-11-20/04-09",  // not a range
	"log://alpha/2026-11-20/08-12", // no alpha lines then
}

// requireNoSuchResource checks that err, the answer to a subscription to
// uri, is -32602 "no such resource".
func requireNoSuchResource(t *testing.T, err error, uri string) {
	t.Helper()
	var jerr *jsonrpc.Error
	require.True(t, errors.As(err, &jerr), "%s: want a JSON-RPC error, got %v", uri, err)
	require.EqualValues(t, jsonrpc.CodeInvalidParams, jerr.Code, uri)
	require.Contains(t, jerr.Message, "no such resource", uri)
}

// With -follow, a client of each protocol version over stdio is told when
// the slice it subscribed to gains lines, and reads them.
func TestStdioFollow(t *testing.T) {
	const uri = "log://alpha/2026-11-20/20-24" // the slice of testLog's last line
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			path := writeTestLog(t)
			var n mcptest.Notifications
			cs := mcptest.Stdio(t, binPath, []string{"-file", path, "-follow", "50ms"}, version, n.ClientOptions(nil))
			require.Equal(t, version, cs.InitializeResult().ProtocolVersion, "negotiated version")
			require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}))

			// A line each call: WaitUpdated calls again every second
			// until the update comes.
			var appended []string
			n.WaitUpdated(t, uri, func() {
				line := fmt.Sprintf("2026-11-20T23:59:59.5Z alpha INFO follow %d\n", len(appended)+1)
				appended = append(appended, line)
				appendTo(t, path, line)
			})

			// The update came once a line was indexed; later ones may be
			// indexed too, by now.
			got := readText(t, cs, uri)
			all := "2026-11-20T23:59:59Z alpha INFO a4\n" + strings.Join(appended, "")
			require.True(t, strings.HasPrefix(all, got), "read %q, not lines of %q", got, all)
			require.True(t, strings.HasPrefix(got, "2026-11-20T23:59:59Z alpha INFO a4\n"+appended[0]), "read %q", got)
		})
	}
}

func TestStdioSliceCap(t *testing.T) {
	bin := binPath
	path := writeTestLog(t)
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			cs := connect(t, bin, version, "-file", path, "-max-slice", "60")
			// 36 bytes: under the cap; beta's 04-08 slice, 144 bytes, is over it.
			require.Equal(t, "2026-11-20T04:00:00Z alpha ERROR a3\n", readText(t, cs, "log://alpha/2026-11-20/04-08"))
			_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "log://beta/2026-11-20/04-08"})
			var jerr *jsonrpc.Error
			require.True(t, errors.As(err, &jerr), "want a JSON-RPC error, got %v", err)
			require.Equal(t, int64(jsonrpc.CodeInternalError), jerr.Code)
			require.Contains(t, jerr.Message, "more than the 60-byte cap")
		})
	}
}

// TestStdioSample serves the generated sample: every listed slice reads
// as its listed size, and holds only its service's lines in its window.
func TestStdioSample(t *testing.T) {
	bin := binPath
	for _, version := range mcptest.Versions {
		t.Run(version, func(t *testing.T) {
			cs := connect(t, bin, version, "-page-size", "10")
			list, pages := mcptest.ListAll(t, cs)
			require.Len(t, list, 3*3*6, "three services, three days, six ranges")
			require.Equal(t, 6, pages)
			lines := 0
			for i, r := range list {
				if i > 0 {
					require.Less(t, list[i-1].URI, r.URI, "listing order")
				}
				text := readText(t, cs, r.URI)
				require.Equal(t, r.Size, int64(len(text)), r.URI)
				got := expectedSlices(t, text)
				require.Len(t, got, 1, r.URI)
				require.Equal(t, r.URI, "log://"+got[0].key)
				lines += strings.Count(text, "\n")
			}
			require.Greater(t, lines, 2000, "lines served")
		})
	}
}
