//go:build unix

package main

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A FIFO put where a listed file was is not listed, and listing does not
// wait for a writer to open it, whether the directory is read through its
// index or scanned.
func TestListSkipsFIFO(t *testing.T) {
	t.Parallel()
	for _, settle := range []bool{true, false} {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "b.txt"), []byte("b"), 0o644))
		waitSettled(t, dir)
		s := newTestServer(t, dir)
		items, err := s.list(t.Context(), "", 10)
		require.NoError(t, err)
		require.Len(t, items, 2)

		require.NoError(t, os.Remove(filepath.Join(dir, "b.txt")))
		require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "b.txt"), 0o644))
		if settle {
			waitSettled(t, dir) // the new index holds no FIFO
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a failure, not a hang
		items, err = s.list(ctx, "", 10)
		cancel()
		require.NoError(t, err)
		require.Len(t, items, 1)
		require.Equal(t, "a.txt", items[0].Key)
	}
}
