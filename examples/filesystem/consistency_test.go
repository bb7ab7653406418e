package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// A churnTree is a tree of stable files and directories, which no one
// changes, among which a churner creates, removes and renames others.
type churnTree struct {
	dir    string
	stable []string // the keys of what stays, sorted

	mu        sync.Mutex
	transient map[string]bool // the keys of whatever the churner made, at any time
}

// newChurnTree makes, under dir, stable files interleaved with the names
// the churner uses: in the root, in big/ (1,000 stable files, the
// churner's files between them), quiet/ (which the churner leaves alone)
// and sub/deep/ (next to which the churner makes and removes
// directories).
func newChurnTree(t testing.TB, dir string, big int) *churnTree {
	t.Helper()
	c := &churnTree{dir: dir, transient: make(map[string]bool)}
	mk := func(rel string) {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, rel), []byte("stable "+rel+"\n"), 0o644))
		c.stable = append(c.stable, rel)
	}
	for i := range 40 {
		mk(fmt.Sprintf("r%03d.txt", 2*i))
	}
	for i := range big {
		mk(fmt.Sprintf("big/f%04d.txt", 2*i))
	}
	for i := range 50 {
		mk(fmt.Sprintf("quiet/q%02d.txt", i))
		mk(fmt.Sprintf("sub/deep/d%02d.txt", 2*i))
	}
	c.stable = append(c.stable, "big/", "quiet/", "sub/", "sub/deep/")
	slices.Sort(c.stable)
	return c
}

// churn creates, removes and renames files and directories among the
// stable ones, as fast as it can, until stop is closed; then it returns
// the first error it met. It keeps at most a few hundred of them at a
// time, and records every key it makes.
func (c *churnTree) churn(stop <-chan struct{}, big int) error {
	rng := rand.New(rand.NewPCG(1, 2))
	var live []string // files and directories made and still there
	add := func(keys ...string) {
		c.mu.Lock()
		for _, k := range keys {
			c.transient[k] = true
		}
		c.mu.Unlock()
	}
	path := func(key string) string { return filepath.Join(c.dir, filepath.FromSlash(strings.TrimSuffix(key, "/"))) }
	for n := 0; ; n++ {
		select {
		case <-stop:
			return nil
		default:
		}
		var err error
		switch op := rng.IntN(10); {
		case len(live) > 300 || op < 3 && len(live) > 0: // remove
			i := rng.IntN(len(live))
			err = os.RemoveAll(path(live[i]))
			live = slices.Delete(live, i, i+1)
		case op < 6: // a file between the stable ones of big/ or the root
			key := fmt.Sprintf("big/f%04d.txt", 2*rng.IntN(big)+1)
			if op == 5 {
				key = fmt.Sprintf("r%03d.txt", 2*rng.IntN(40)+1)
			}
			add(key)
			err = os.WriteFile(path(key), []byte("transient\n"), 0o644)
			live = append(live, key)
		case op < 8 && len(live) > 0: // a rename, to a name before or after
			i := rng.IntN(len(live))
			if strings.HasPrefix(live[i], "big/") {
				to := fmt.Sprintf("big/f%04d.txt", 2*rng.IntN(big)+1)
				add(to)
				if err = os.Rename(path(live[i]), path(to)); err == nil {
					live[i] = to
				}
			}
		default: // a directory, with files, next to sub/deep/
			d := fmt.Sprintf("sub/d%03d/", n%1000)
			add(d, d+"a.txt", d+"b.txt")
			if err = os.Mkdir(path(d), 0o755); err == nil {
				err = errors.Join(os.WriteFile(path(d+"a.txt"), nil, 0o644), os.WriteFile(path(d+"b.txt"), nil, 0o644))
				live = append(live, d)
			}
		}
		if err != nil && !errors.Is(err, fs.ErrExist) && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
}

// check fails t unless keys, the keys of one walk, hold every stable key
// once, in order, and nothing that never existed.
func (c *churnTree) check(t testing.TB, keys []string) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	var stable []string
	for i, k := range keys {
		if i > 0 {
			require.Less(t, keys[i-1], k, "keys increase: nothing twice, nothing out of order")
		}
		if c.transient[k] {
			continue
		}
		stable = append(stable, k)
	}
	require.Equal(t, c.stable, stable, "every stable file and directory once, in order, and nothing else")
}

// startChurn runs c.churn until the test ends, and checks its error then.
func (c *churnTree) startChurn(t testing.TB, big int) {
	stop, done := make(chan struct{}), make(chan error)
	go func() { done <- c.churn(stop, big) }()
	t.Cleanup(func() {
		close(stop)
		require.NoError(t, <-done)
	})
}

// A walk lists every file that stays from its first page to its last
// exactly once, in order, while others are created, removed and renamed
// around it, in the directories it walks, ahead of it and behind it:
// whether directories are read through their indexes, scanned, or both
// as the cache drops and makes indexes. The modes that read a settled
// tree, each through a server of its own, read one tree, changed by one
// churner, started once their servers are; the unsettled mode, before
// them, a tree of its own.
//
// A churner keeps a core busy for as long as the walks it changes the
// tree under last: these tests and TestListUnderChangeOverStdio run one
// mode after another, and before the parallel tests, so that each walk
// has the other core, rather than several churners taking both from
// every test running beside them.
func TestListUnderChange(t *testing.T) {
	const big = 1000
	for _, mode := range listModes {
		if mode.settle {
			continue
		}
		t.Run(mode.name, func(t *testing.T) {
			c := newChurnTree(t, t.TempDir(), big)
			s := newTestServerCache(t, c.dir, mode.cache)
			c.startChurn(t, big)
			walkUnderChange(t, c, s)
		})
	}
	settled := newChurnTree(t, t.TempDir(), big)
	waitSettled(t, settled.dir) // quiet/ is read through its index (but with no cache)
	servers := make([]*fileServer, len(listModes))
	for i, mode := range listModes {
		if mode.settle {
			servers[i] = newTestServerCache(t, settled.dir, mode.cache)
		}
	}
	settled.startChurn(t, big) // until the modes have all ended
	for i, mode := range listModes {
		if mode.settle {
			t.Run(mode.name, func(t *testing.T) { walkUnderChange(t, settled, servers[i]) })
		}
	}
}

// walkUnderChange walks s's list at several page sizes while c changes,
// and checks each walk.
func walkUnderChange(t *testing.T, c *churnTree, s *fileServer) {
	t.Helper()
	for _, size := range []int{7, 50, 101} {
		c.check(t, walkAll(t, s, size))
	}
}

// The same, over stdio with the server's own defaults (the watcher
// running, dropping indexes as it sees changes) and with no cache, at
// small pages, as a client lists: one server after the other, on one
// tree that one churner changes once both are started.
func TestListUnderChangeOverStdio(t *testing.T) {
	const big = 300
	c := newChurnTree(t, t.TempDir(), big)
	waitSettled(t, c.dir)
	flags := [][]string{nil, {"-list-cache", "0"}}
	sessions := make([]*mcp.ClientSession, len(flags))
	for i, args := range flags {
		sessions[i] = mcptest.Stdio(t, binPath, append([]string{"-root", c.dir, "-page-size", "7"}, args...), "2025-11-25", nil)
	}
	c.startChurn(t, big) // until both have ended
	for i, args := range flags {
		t.Run(strings.Join(append([]string{"flags"}, args...), " "), func(t *testing.T) {
			cs := sessions[i]
			for range 2 {
				var keys []string
				params := &mcp.ListResourcesParams{}
				for {
					res, err := cs.ListResources(t.Context(), params)
					require.NoError(t, err)
					for _, r := range res.Resources {
						keys = append(keys, r.Name) // the key: the path, a directory's with its '/'
					}
					if res.NextCursor == "" {
						break
					}
					params = &mcp.ListResourcesParams{Cursor: res.NextCursor}
				}
				c.check(t, keys)
			}
		})
	}
}
