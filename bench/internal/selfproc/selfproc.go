// Package selfproc starts the running test binary again as a helper
// process (a server, or a client) of a benchmark, so that its CPU, memory
// and Go runtime are its own. The helper sees the environment variables
// it is given, and talks to the benchmark over its standard input and
// output.
package selfproc

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"
)

// A Proc is a helper process.
type Proc struct {
	// Stdin is the helper's standard input; closing it asks the helper to
	// end.
	Stdin io.WriteCloser
	// Out reads the helper's standard output.
	Out *bufio.Reader

	cmd   *exec.Cmd
	close func()
}

// Start starts the test binary again, running no test, with env added to
// the environment, its standard error the benchmark's. It fails tb if the
// process cannot start. The process is closed (Close) when tb ends.
func Start(tb testing.TB, env ...string) *Proc {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	p := &Proc{Stdin: stdin, Out: bufio.NewReader(stdout), cmd: cmd}
	p.close = sync.OnceFunc(func() { stdin.Close(); cmd.Wait() })
	tb.Cleanup(p.Close)
	return p
}

// Close closes the helper's standard input and waits for it to exit. It
// may be called more than once.
func (p *Proc) Close() { p.close() }
