package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// The benchmarks compare resources/list with directory indexes ("index")
// against the listing before them ("baseline", baseline_test.go), side by
// side, on trees made once and kept under os.TempDir() (see benchTree):
//
//	go test -run '^$' -bench . -benchmem -count 5 .
//
// The trees take up to a minute to make the first time (a million files,
// in one directory), and about 1.1 GB of inodes and blocks; remove
// $TMPDIR/mcpres-filesystem-bench to reclaim them.

// pageLimit is what the registry asks a ListFunc for with the default
// page size: one more item than a page, to know whether there is a next.
const pageLimit = resource.DefaultPageSize + 1

// flatSizes are the sizes of the one-directory trees.
var flatSizes = []int{1_000, 10_000, 100_000, 1_000_000}

// benchTree returns the path of the tree name under os.TempDir(), making it
// with fill if it is not there whole (a marker file, written last, says
// it is), and waits until its directories have settled (see
// dirVersion.settled), as a tree that has been in place for some time
// has.
func benchTree(b *testing.B, name string, fill func(dir string) error) string {
	b.Helper()
	base := filepath.Join(os.TempDir(), "mcpres-filesystem-bench")
	dir := filepath.Join(base, name)
	marker := filepath.Join(base, name+".done")
	if _, err := os.Stat(marker); err != nil {
		require.NoError(b, os.RemoveAll(dir))
		require.NoError(b, os.MkdirAll(dir, 0o755))
		b.Logf("making %s (once)", dir)
		require.NoError(b, fill(dir))
		require.NoError(b, os.WriteFile(marker, nil, 0o644))
	}
	waitSettled(b, dir)
	return dir
}

// flatTree returns a directory holding n empty files, f0000000.txt on.
func flatTree(b *testing.B, n int) string {
	return benchTree(b, fmt.Sprintf("flat-%d", n), func(dir string) error {
		for i := range n {
			f, err := os.Create(filepath.Join(dir, fmt.Sprintf("f%07d.txt", i)))
			if err != nil {
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
		}
		return nil
	})
}

// balancedTree returns the tree of TestList100k, 100 directories of 1,000
// files, 100,100 resources in all, each file holding a line of text.
func balancedTree(b *testing.B) string {
	return benchTree(b, "tree-100x1000", func(dir string) error {
		for i := range 100 {
			d := filepath.Join(dir, fmt.Sprintf("dir%03d", i))
			if err := os.Mkdir(d, 0o755); err != nil {
				return err
			}
			for j := range 1000 {
				if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%04d.txt", j)), fmt.Appendf(nil, "file %d of dir%03d\n", j, i), 0o644); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// listFunc is one of the implementations compared.
type listFunc struct {
	name string
	list func(s *fileServer) resource.ListFunc
}

var listFuncs = []listFunc{
	{"baseline", baselineList},
	{"index", func(s *fileServer) resource.ListFunc { return s.list }},
}

// BenchmarkListPage lists one page (pageLimit items) in a directory of
// 1,000 to 1,000,000 files, at a different place at each iteration. For
// the index, a walk of the whole directory before the timer starts builds
// the index and notes every file's MIME type, as a first walk does: the
// pages timed are those of any walk after it, at every size alike. (A
// file's first listing also opens it: BenchmarkWalkStdio/index-fresh
// measures a first walk.)
func BenchmarkListPage(b *testing.B) {
	for _, n := range flatSizes {
		dir := flatTree(b, n)
		for _, impl := range listFuncs {
			b.Run(fmt.Sprintf("files=%d/%s", n, impl.name), func(b *testing.B) {
				s := newTestServer(b, dir)
				list := impl.list(s)
				ctx := context.Background()
				if impl.name != "baseline" {
					for after := ""; ; {
						items, err := list(ctx, after, 10_000)
						require.NoError(b, err)
						if len(items) < 10_000 {
							break
						}
						after = items[len(items)-1].Key
					}
				}
				i := 0
				for b.Loop() {
					i = (i + 7919) % n // a prime: every part of the directory in turn
					items, err := list(ctx, fmt.Sprintf("f%07d.txt", i), pageLimit)
					if err != nil || len(items) != min(pageLimit, n-i-1) {
						b.Fatalf("after f%07d.txt: %d items, %v", i, len(items), err)
					}
				}
			})
		}
	}
}

// BenchmarkFirstPage lists the first page of a directory of 100,000 files:
// with the baseline; with the index cold (a new server at each iteration,
// whose first page builds the index); and with the index built (by an
// earlier page, or by the watcher's walk at start-up).
func BenchmarkFirstPage(b *testing.B) {
	const n = 100_000
	dir := flatTree(b, n)
	ctx := context.Background()
	first := func(b *testing.B, list resource.ListFunc) {
		items, err := list(ctx, "", pageLimit)
		if err != nil || len(items) != pageLimit {
			b.Fatalf("%d items, %v", len(items), err)
		}
	}
	b.Run(fmt.Sprintf("files=%d/baseline", n), func(b *testing.B) {
		list := baselineList(newTestServer(b, dir))
		for b.Loop() {
			first(b, list)
		}
	})
	b.Run(fmt.Sprintf("files=%d/index-cold", n), func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			s := newTestServer(b, dir) // closed at the end of the benchmark
			b.StartTimer()
			first(b, s.list)
		}
	})
	b.Run(fmt.Sprintf("files=%d/index-built", n), func(b *testing.B) {
		s := newTestServer(b, dir)
		first(b, s.list)
		for b.Loop() {
			first(b, s.list)
		}
	})
}

// BenchmarkWalkStdio walks the whole balanced tree of 100,100 resources,
// page by page at the default page size (1,001 pages), as a go-sdk client
// does over stdio: the server built from this package (index), and the
// test binary serving the baseline (see serveBaseline). The servers start
// before the timer, with default flags: the index server's watcher walks
// the tree at start-up, building its indexes, and a first walk, before
// the timer too, notes the MIME type of every file. "index-fresh" starts a
// new server for each walk, with -list-changed=false, and times its first
// walk, which builds every index and opens every file. "floor" is the test
// binary listing the same resources, made up, without a file system (see
// serveFloor): what the protocol costs.
func BenchmarkWalkStdio(b *testing.B) {
	dir := balancedTree(b)
	const want = 100_100
	walk := func(b *testing.B, cs *mcp.ClientSession) {
		n, pages := 0, 0
		params := &mcp.ListResourcesParams{}
		for {
			res, err := cs.ListResources(context.Background(), params)
			if err != nil {
				b.Fatalf("page %d: %v", pages, err)
			}
			n += len(res.Resources)
			pages++
			if res.NextCursor == "" {
				break
			}
			params = &mcp.ListResourcesParams{Cursor: res.NextCursor}
		}
		if n != want {
			b.Fatalf("listed %d resources in %d pages, want %d", n, pages, want)
		}
	}
	self, err := os.Executable()
	require.NoError(b, err)
	for _, server := range []struct {
		name string
		bin  string
		args []string
	}{
		{"baseline", self, []string{baselineServerArg, "-root", dir}},
		{"index", binPath, []string{"-root", dir}},
		{"floor", self, []string{floorServerArg}},
	} {
		b.Run("resources="+strconv.Itoa(want)+"/"+server.name, func(b *testing.B) {
			cs := startStdio(b, server.bin, server.args)
			defer cs.Close()
			if server.name == "index" {
				walk(b, cs)
			}
			for b.Loop() {
				walk(b, cs)
			}
		})
	}
	b.Run("resources="+strconv.Itoa(want)+"/index-fresh", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			cs := startStdio(b, binPath, []string{"-root", dir, "-list-changed=false"})
			b.StartTimer()
			walk(b, cs)
			b.StopTimer()
			require.NoError(b, cs.Close())
			b.StartTimer()
		}
	})
}

// startStdio starts bin with args and connects a go-sdk client to it over
// stdio, at protocol 2025-11-25. Closing the session stops the server.
// The server's log is shown if the benchmark fails.
func startStdio(b *testing.B, bin string, args []string) *mcp.ClientSession {
	b.Helper()
	cmd := exec.Command(bin, args...)
	mcptest.Stderr(b, cmd)
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(b, err)
	return cs
}

// floorServerArg, as the test binary's first argument, makes it serve
// the resources of the balanced tree over stdio, made up in memory, as
// the real server would list them, without a file system (see TestMain).
const floorServerArg = "-filesystem-floor-server"

// serveFloor serves, over stdio, the same registry and template as the
// real server, listing the 100,100 resources of balancedTree, with the
// fields the real server gives them, from memory, until the client hangs
// up. It returns the exit code: 1 if serving fails.
func serveFloor() int {
	reg, err := resource.NewRegistry(&resource.Options{})
	if err != nil {
		return 1
	}
	defer reg.Close()
	var keys []string
	for i := range 100 {
		keys = append(keys, fmt.Sprintf("dir%03d/", i))
		for j := range 1000 {
			keys = append(keys, fmt.Sprintf("dir%03d/f%04d.txt", i, j))
		}
	}
	mtime := time.Now()
	list := func(ctx context.Context, after string, limit int) ([]cursor.Item[*mcp.Resource], error) {
		i, _ := slices.BinarySearch(keys, after)
		if i < len(keys) && keys[i] == after {
			i++
		}
		var items []cursor.Item[*mcp.Resource]
		for ; i < len(keys) && len(items) < limit; i++ {
			uri, err := reg.Expand(uriTemplate, "path", keys[i])
			if err != nil {
				return nil, err
			}
			items = append(items, cursor.Item[*mcp.Resource]{Key: keys[i], Value: &mcp.Resource{
				URI: uri, Name: keys[i], Title: path.Base(keys[i]), MIMEType: "text/plain", Size: 20, Annotations: lastModified(mtime),
			}})
		}
		return items, nil
	}
	read := func(context.Context, *mcp.ReadResourceRequest, resource.Vars) (*mcp.ReadResourceResult, error) {
		return nil, resource.ErrNotFound
	}
	if err := reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: uriTemplate, Name: "file"}, read, resource.WithInstances(list)); err != nil {
		return 1
	}
	server, err := reg.NewServer(&mcp.Implementation{Name: "filesystem-floor", Version: "v0"}, nil)
	if err != nil {
		return 1
	}
	if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
		return 1
	}
	return 0
}
