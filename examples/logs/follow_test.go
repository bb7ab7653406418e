package main

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/uritemplate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// parseKey returns the sliceKey of "service/date/range".
func parseKey(s string) sliceKey {
	f := strings.Split(s, "/")
	return sliceKey{service: f[0], window: window{date: f[1], hr: rangeIndex(f[2])}}
}

// parseKeys returns the sliceKeys of keys.
func parseKeys(keys ...string) []sliceKey {
	out := make([]sliceKey, len(keys))
	for i, k := range keys {
		out[i] = parseKey(k)
	}
	return out
}

// appendTo appends text to the file at path, as a logger does.
func appendTo(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(text)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// followed writes text to a new file, opens it as -follow does, and
// returns its path, the logFile, and the logger that poll should be given,
// which writes to the returned buffer.
func followed(t *testing.T, text string) (string, *logFile, *slog.Logger, *bytes.Buffer) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "app.log")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	lf, err := openLog(path, true)
	require.NoError(t, err)
	t.Cleanup(func() { lf.Close() })
	var logs bytes.Buffer
	return path, lf, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), &logs
}

// logTmpl is the template of a slice's URI, which gives the read function
// its variables.
var logTmpl = uritemplate.MustParse(logTemplate)

// varsOf returns the variables of the URI of the slice key
// ("service/date/range").
func varsOf(t *testing.T, key string) resource.Vars {
	vars, ok := logTmpl.Match("log://" + key)
	if !ok {
		t.Fatalf("log://%s does not match %s", key, logTemplate)
	}
	return vars
}

// readKey reads the slice key ("service/date/range") from lf as the read
// function does, and reports whether it exists.
func readKey(t *testing.T, lf *logFile, key string) (string, bool) {
	t.Helper()
	text, ok, err := lf.read(varsOf(t, key), 1<<20)
	require.NoError(t, err, key)
	return string(text), ok
}

// requireIndexes checks that lf's index is the one of text indexed in one
// pass.
func requireIndexes(t *testing.T, lf *logFile, text string) {
	t.Helper()
	want, err := BuildIndex(strings.NewReader(text))
	require.NoError(t, err)
	sameIndex(t, want, lf.index())
}

// Lines appended are indexed at the next poll, once complete; a poll
// reports the slices that gained lines, and whether any is new.
func TestPollAppend(t *testing.T) {
	text := unitLog + "\n"
	path, lf, logger, logs := followed(t, text)
	changed, listChanged := lf.poll(t.Context(), logger)
	require.Empty(t, changed, "nothing appended")
	require.False(t, listChanged)

	// Half a line: nothing to index yet.
	appendTo(t, path, "2026-11-21T01:00:00Z api INFO par")
	changed, listChanged = lf.poll(t.Context(), logger)
	require.Empty(t, changed)
	require.False(t, listChanged)
	_, ok := readKey(t, lf, "api/2026-11-21/00-04")
	require.False(t, ok)

	// The rest of it: a new slice.
	appendTo(t, path, "tial\n")
	text += "2026-11-21T01:00:00Z api INFO partial\n"
	changed, listChanged = lf.poll(t.Context(), logger)
	require.Equal(t, parseKeys("api/2026-11-21/00-04"), changed)
	require.True(t, listChanged)
	got, ok := readKey(t, lf, "api/2026-11-21/00-04")
	require.True(t, ok)
	require.Equal(t, "2026-11-21T01:00:00Z api INFO partial\n", got)

	// More lines for two slices that exist.
	more := "2026-11-21T02:00:00Z api INFO more\n2026-11-21T03:00:00Z db INFO more\n"
	appendTo(t, path, more)
	text += more
	changed, listChanged = lf.poll(t.Context(), logger)
	require.Equal(t, parseKeys("api/2026-11-21/00-04", "db/2026-11-21/00-04"), changed)
	require.False(t, listChanged, "no new slice")
	got, _ = readKey(t, lf, "api/2026-11-21/00-04")
	require.Equal(t, "2026-11-21T01:00:00Z api INFO partial\n2026-11-21T02:00:00Z api INFO more\n", got)
	requireIndexes(t, lf, text)
	require.Contains(t, logs.String(), `level=DEBUG msg="indexed lines appended to the log file"`)
	require.NotContains(t, logs.String(), "level=WARN")
}

// A file truncated is indexed afresh, every slice of before and after
// reported changed: whether it shrank, or was written again past its old
// size (copytruncate and a busy writer), which its first line tells.
func TestPollTruncated(t *testing.T) {
	for _, tc := range []struct {
		name, text, log string
	}{
		{"shrank", "2026-12-01T00:00:00Z api INFO fresh\n", "log file truncated"},
		{"grew again", "2026-12-01T00:00:00Z api INFO fresh\n" + strings.Repeat("2026-12-01T00:00:01Z db INFO and a lot more\n", 20), "log file rewritten"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, lf, logger, logs := followed(t, unitLog+"\n")
			file := lf.cur.Load().file
			before := lf.index().Keys()
			require.NoError(t, os.WriteFile(path, []byte(tc.text), 0o644)) // the same file, truncated
			changed, listChanged := lf.poll(t.Context(), logger)
			require.Contains(t, logs.String(), `level=WARN msg="`+tc.log)
			requireIndexes(t, lf, tc.text)
			require.Equal(t, mergeKeys(before, lf.index().Keys()), changed)
			require.True(t, listChanged)
			require.Same(t, file, lf.cur.Load().file, "the same file, still open")

			got, ok := readKey(t, lf, "api/2026-12-01/00-04")
			require.True(t, ok)
			require.Equal(t, "2026-12-01T00:00:00Z api INFO fresh\n", got)
			_, ok = readKey(t, lf, "api/2026-11-20/04-08")
			require.False(t, ok)

			// It is followed as before.
			appendTo(t, path, "2026-12-03T00:00:00Z db INFO next\n")
			changed, _ = lf.poll(t.Context(), logger)
			require.Equal(t, parseKeys("db/2026-12-03/00-04"), changed)
		})
	}
}

// A file rotated (renamed, and a new one created at its path) is followed
// at its path: while the path names no file the old one is served, then
// the new one is indexed and served, and the old one closed.
func TestPollRotated(t *testing.T) {
	old := unitLog + "\n"
	path, lf, logger, logs := followed(t, old)
	oldFile := lf.cur.Load().file
	require.NoError(t, os.Rename(path, path+".1"))

	for range 2 {
		changed, listChanged := lf.poll(t.Context(), logger)
		require.Empty(t, changed)
		require.False(t, listChanged)
	}
	require.Equal(t, 1, strings.Count(logs.String(), `level=WARN msg="log file not found`), "said once:\n%s", logs)
	got, ok := readKey(t, lf, "db/2026-11-21/00-04")
	require.True(t, ok, "the old file is served meanwhile")
	require.Equal(t, "2026-11-21T00:00:00Z db INFO next day\n", got)

	text := "2026-11-21T00:00:01Z db INFO rotated\n"
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	changed, listChanged := lf.poll(t.Context(), logger)
	require.Contains(t, logs.String(), `level=WARN msg="log file replaced (rotated?)`)
	requireIndexes(t, lf, text)
	want, err := BuildIndex(strings.NewReader(old))
	require.NoError(t, err)
	require.Equal(t, want.keys, changed, "every slice changed: the new one was one of the old")
	require.True(t, listChanged)
	got, ok = readKey(t, lf, "db/2026-11-21/00-04")
	require.True(t, ok)
	require.Equal(t, text, got)
	_, err = oldFile.Stat()
	require.ErrorIs(t, err, os.ErrClosed, "the old file is closed")

	appendTo(t, path, "2026-11-21T00:00:02Z db INFO again\n")
	changed, listChanged = lf.poll(t.Context(), logger)
	require.Equal(t, parseKeys("db/2026-11-21/00-04"), changed)
	require.False(t, listChanged)
}

// A line appended out of order stops the indexing there, logged once at
// Error; the lines before it are served. Once the file is truncated, it is
// followed again.
func TestPollBadLine(t *testing.T) {
	path, lf, logger, logs := followed(t, unitLog+"\n")
	appendTo(t, path, "2026-11-21T01:00:00Z api INFO good\n"+
		"2026-11-20T01:00:00Z api INFO back in time\n"+
		"2026-11-21T02:00:00Z api INFO after\n")
	changed, listChanged := lf.poll(t.Context(), logger)
	require.Equal(t, parseKeys("api/2026-11-21/00-04"), changed, "the line before is indexed")
	require.True(t, listChanged)
	require.Contains(t, logs.String(), `level=ERROR msg="log file: indexing stops at a bad line, until the file is truncated or replaced"`)
	require.Contains(t, logs.String(), `line 12: 2026-11-20T01:00:00Z is earlier than the line before`)

	appendTo(t, path, "2026-11-21T03:00:00Z api INFO later still\n")
	for range 2 {
		changed, _ = lf.poll(t.Context(), logger)
		require.Empty(t, changed)
	}
	require.Equal(t, 1, strings.Count(logs.String(), "level=ERROR"), "said once:\n%s", logs)
	got, _ := readKey(t, lf, "api/2026-11-21/00-04")
	require.Equal(t, "2026-11-21T01:00:00Z api INFO good\n", got)

	text := "2026-11-22T00:00:00Z api INFO fresh start\n"
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	changed, _ = lf.poll(t.Context(), logger)
	require.NotEmpty(t, changed)
	requireIndexes(t, lf, text)
	appendTo(t, path, "2026-11-22T00:00:01Z api INFO and on\n")
	changed, _ = lf.poll(t.Context(), logger)
	require.Equal(t, parseKeys("api/2026-11-22/00-04"), changed)
}

// Reads, lists, completions and lookups go on while the file grows and is
// rotated (go test -race checks they do so safely), and every read serves
// whole lines of its slice.
func TestPollConcurrentReads(t *testing.T) {
	path, lf, _, _ := followed(t, unitLog+"\n")
	logger := slog.New(slog.DiscardHandler)
	keys := []string{"api/2026-11-21/00-04", "db/2026-11-21/00-04", "api/2026-11-20/04-08"}

	vars := make([]resource.Vars, len(keys))
	for i, key := range keys {
		vars[i] = varsOf(t, key)
	}
	done := make(chan struct{})
	var readers sync.WaitGroup
	for range 4 {
		readers.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				for i, key := range keys {
					text, ok, err := lf.read(vars[i], 1<<20)
					if err != nil || !ok {
						continue // the file was replaced twice during the read, or lacks the slice
					}
					for line := range strings.Lines(string(text)) {
						if !strings.HasSuffix(line, "\n") || strings.Fields(line)[1] != parseKey(key).service {
							t.Errorf("%s: read %q", key, text)
						}
					}
				}
				idx := lf.index()
				idx.After("", 100)
				idx.complete("date", "", map[string]string{"service": "api"})
				idx.HasService("api")
				idx.Stat(parseKey(keys[0]))
			}
		})
	}

	text := unitLog + "\n"
	for i := range 200 {
		if i%50 == 49 {
			require.NoError(t, os.Rename(path, path+".1"))
			text = "2026-11-21T00:00:00Z db INFO rotated\n"
			require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		} else {
			line := "2026-11-21T01:00:00Z api INFO more\n"
			if i%2 == 1 {
				line = "2026-11-21T01:00:00Z db INFO more\n"
			}
			appendTo(t, path, line)
			text += line
		}
		lf.poll(t.Context(), logger)
	}
	close(done)
	readers.Wait()
	requireIndexes(t, lf, text)
	got, ok := readKey(t, lf, "db/2026-11-21/00-04")
	require.True(t, ok)
	require.Equal(t, strings.Count(text, " db "), strings.Count(got, "\n"))
}

// Followed in a server, the file's changes reach the subscribers of every
// protocol version, and stopping the follower (as run does, before it
// closes the registry) leaves no goroutine behind.
func TestFollowStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		baseline := mcptest.BubbleGoroutines(t)
		path, lf, _, _ := followed(t, unitLog+"\n")
		logger := slog.New(slog.DiscardHandler)
		codec, err := cursor.NewCodec(nil)
		require.NoError(t, err)
		reg, err := newRegistry(lf, config{}, codec, logger)
		require.NoError(t, err)
		server, err := reg.NewServer(&mcp.Implementation{Name: "logs"}, &mcp.ServerOptions{Logger: logger})
		require.NoError(t, err)
		stop := startFollowing(t.Context(), lf, reg, time.Second, logger)

		const uri = "log://db/2026-11-21/00-04"
		var notes []*mcptest.Notifications
		var sessions []*mcp.ClientSession
		for _, version := range mcptest.Versions {
			n := new(mcptest.Notifications)
			st, ct := mcp.NewInMemoryTransports()
			_, err := server.Connect(t.Context(), st, nil)
			require.NoError(t, err)
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, n.ClientOptions(nil)).Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
			require.NoError(t, err)
			require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}))
			notes, sessions = append(notes, n), append(sessions, cs)
		}
		synctest.Wait() // every subscription recorded

		appendTo(t, path, "2026-11-21T01:00:00Z db INFO more\n")
		for _, n := range notes {
			n.WaitUpdated(t, uri, nil)
		}
		appendTo(t, path, "2026-11-21T01:00:00Z zeta INFO new\n")
		for _, n := range notes {
			n.WaitListChanged(t, nil)
		}

		stop()
		require.NoError(t, reg.Close())
		for _, cs := range sessions {
			require.NoError(t, cs.Close())
		}
		synctest.Wait()
		require.Equal(t, baseline, mcptest.BubbleGoroutines(t), "goroutines left")

		// Nothing follows the file any more.
		appendTo(t, path, "2026-11-21T02:00:00Z zeta INFO unseen\n")
		time.Sleep(time.Minute)
		synctest.Wait()
		st, _ := lf.index().Stat(parseKey("zeta/2026-11-21/00-04"))
		require.Equal(t, 1, st.lines, "the last line is not indexed")
	})
}

// A negative -follow stops the server before it serves anything.
func TestFollowNegative(t *testing.T) {
	out, err := exec.Command(binPath, "-follow", "-1s").CombinedOutput()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "want the server to fail, got %v; output:\n%s", err, out)
	require.Equal(t, 1, exit.ExitCode())
	require.Contains(t, string(out), `level=ERROR msg="server failed" error="-follow -1s: want a positive duration, or 0 not to follow"`)
}
