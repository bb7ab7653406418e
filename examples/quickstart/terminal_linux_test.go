//go:build linux

package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// openPTY opens a new pseudo-terminal and returns its two ends: master, on
// the terminal emulator's side, and slave, the terminal a shell and the
// programs it starts read and write. Both are closed when t ends. It skips
// t if the system has no pseudo-terminals to give.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	// O_NOCTTY: the terminal must not become the test's controlling
	// terminal.
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	var unlock int32 // 0 unlocks the slave, which can then be opened
	require.NoError(t, ioctl(master, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)), "ioctl TIOCSPTLCK")
	var n uint32
	require.NoError(t, ioctl(master, syscall.TIOCGPTN, unsafe.Pointer(&n)), "ioctl TIOCGPTN")
	slave, err = os.OpenFile("/dev/pts/"+strconv.FormatUint(uint64(n), 10), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { slave.Close() })
	return master, slave
}

func TestIsTerminal(t *testing.T) {
	_, pts := openPTY(t)
	require.True(t, isTerminal(pts), "pseudo-terminal")

	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	require.False(t, isTerminal(r), "pipe")

	// A character device, as terminals are, but not one.
	null, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer null.Close()
	require.False(t, isTerminal(null), os.DevNull)

	file, err := os.Create(filepath.Join(t.TempDir(), "file"))
	require.NoError(t, err)
	defer file.Close()
	require.False(t, isTerminal(file), "regular file")
}

// Started in a terminal, the server says once how to try it, and stops
// cleanly when interrupted.
func TestTerminalHint(t *testing.T) {
	_, pts := openPTY(t)
	cmd := exec.Command(binPath)
	cmd.Stdin = pts
	cmd.Stdout = pts
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		// In case the test failed before the server stopped.
		cmd.Process.Kill()
		cmd.Wait()
	})
	// Kill the server if it does not print its hint, or does not stop,
	// rather than wait for the test binary's timeout.
	guard := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
	defer guard.Stop()

	r := bufio.NewReader(stderr)
	line, err := r.ReadString('\n')
	require.NoError(t, err, "stderr: %q", line)
	require.Equal(t, terminalHint+"\n", line)
	require.Less(t, len(line), 200)

	// The server waits for a host's messages; interrupt it, as Ctrl-C
	// would.
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	rest, err := io.ReadAll(r)
	require.NoError(t, err)
	require.NoError(t, cmd.Wait(), "server exit; stderr after the hint: %q", rest)
	require.NotContains(t, string(rest), terminalHint, "hint printed again")
}

// Started by a host, through pipes, the server prints no hint: its stderr
// holds only its log records (today, the line saying that its list
// cursors use a random key).
func TestNoHintOnPipe(t *testing.T) {
	cmd := exec.Command(binPath)
	stderr := mcptest.Stderr(t, cmd)
	client := mcp.NewClient(&mcp.Implementation{Name: "quickstart-test", Version: "v0"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	_, err = cs.ListResources(t.Context(), nil)
	require.NoError(t, err)
	// Closing the session closes the server's stdin and waits for it to
	// exit, after which stderr is complete.
	require.NoError(t, cs.Close(), "server exit")

	out := stderr.String()
	require.NotContains(t, out, "quickstart:")
	for line := range strings.Lines(out) {
		require.True(t, strings.HasPrefix(line, "time="), "not a log record on stderr: %q", line)
	}
}
