// Package natstest runs a real NATS server in a process of its own, for
// tests that kill it and start it again under running replicas: the test
// binary, run again as the server. A test package that uses it calls
// ServeIfAsked first thing in its TestMain.
package natstest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/mcpres/mcpres/mcptest"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/require"
)

// portEnv, set in its environment, makes a test binary a NATS server on
// that port (see ServeIfAsked).
const portEnv = "MCPRES_NATSTEST_PORT"

// ServeIfAsked, called first thing in a TestMain, makes the test binary a
// NATS server when Start ran it as one: it then serves until its parent
// ends or kills it, and exits. Otherwise it returns at once.
func ServeIfAsked() {
	if port := os.Getenv(portEnv); port != "" {
		os.Exit(serve(port))
	}
}

// serve runs a NATS server on 127.0.0.1:port, says "ready" on its
// standard output once it accepts connections, and runs until its
// standard input closes (its parent ended) or it is killed. It returns
// the exit status.
func serve(port string) int {
	p, err := strconv.Atoi(port)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: p, NoLog: true, NoSigs: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go ns.Start()
	if !ns.ReadyForConnections(mcptest.WaitTimeout) {
		fmt.Fprintln(os.Stderr, "NATS server not ready")
		return 1
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	ns.Shutdown()
	return 0
}

// A Process is a NATS server running in a process of its own.
type Process struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has ended
}

// Start starts a NATS server process on 127.0.0.1:port, and returns once
// it accepts connections; it fails t if it does not within
// mcptest.WaitTimeout. The process is killed when t ends, and ends with
// the test binary. The test package's TestMain must call ServeIfAsked.
func Start(t testing.TB, port int) *Process {
	t.Helper()
	p := &Process{cmd: exec.Command(os.Args[0], "-test.run=^$"), done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), portEnv+"="+strconv.Itoa(port))
	stderr := mcptest.Stderr(t, p.cmd)
	_, err := p.cmd.StdinPipe() // closed when this process ends, and the server with it
	require.NoError(t, err)
	r, w, err := os.Pipe()
	require.NoError(t, err)
	p.cmd.Stdout = w
	require.NoError(t, p.cmd.Start())
	w.Close()
	go func() { p.cmd.Wait(); r.Close(); close(p.done) }()
	t.Cleanup(p.Kill)

	ready := make(chan bool, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		ready <- line == "ready\n"
		io.Copy(io.Discard, r)
	}()
	require.True(t, mcptest.Receive(t, ready, "the NATS server process ready"), "NATS server process: %s", stderr)
	return p
}

// Kill kills the process (SIGKILL: no goodbye to its clients), and
// returns once it has ended. Killing it again does nothing.
func (p *Process) Kill() {
	p.cmd.Process.Kill()
	<-p.done
}

// FreePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
