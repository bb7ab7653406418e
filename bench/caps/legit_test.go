package caps

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpres/mcpres/bench/internal/selfproc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The legitimate client runs in a process of its own (this test binary,
// started again with legitEnv set to the server's base URL), so that its
// latency is the server's and the machine's, not that of a Go runtime it
// shares with thousands of the attacker's goroutines.
const legitEnv = "MCPRES_CAPS_LEGIT"

// A legitResult is what the legitimate client reports when told to stop:
// by phase (0 during the attack, 1 after it), each successful read's
// latency and the number of reads that failed, and the first failure of
// each phase.
type legitResult struct {
	Lat    [2][]time.Duration
	Failed [2]int
	First  [2]string
}

// runLegit reads caps://r/1 over a 2025-11-25 session from legitAddr, at
// a pace of one read each 5 ms, until its standard input says "stop";
// "after" on it starts phase 1. It prints "ready" once connected, and its
// legitResult as JSON when stopped; it closes the session when its
// standard input closes.
func runLegit(base string) error {
	client := mcp.NewClient(&mcp.Implementation{Name: "legit", Version: "v0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: clientFrom(legitAddr, 2)},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return err
	}
	defer cs.Close()
	fmt.Println("ready")
	var phase atomic.Int32
	stop := make(chan struct{})
	in := bufio.NewScanner(os.Stdin)
	go func() {
		defer close(stop)
		for in.Scan() {
			switch in.Text() {
			case "after":
				phase.Store(1)
			case "stop":
				return
			}
		}
	}()
	var res legitResult
	for {
		select {
		case <-stop:
			if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
				return err
			}
			io.Copy(io.Discard, os.Stdin)
			return nil
		default:
		}
		p := phase.Load()
		start := time.Now()
		if _, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "caps://r/1"}); err != nil {
			if res.Failed[p] == 0 {
				res.First[p] = err.Error()
			}
			res.Failed[p]++
		} else {
			res.Lat[p] = append(res.Lat[p], time.Since(start))
		}
		time.Sleep(5 * time.Millisecond) // real clock: the legitimate client's pace against a server process, measured, not asserted
	}
}

// A legit is the legitimate client's process.
type legit struct{ *selfproc.Proc }

// startLegit starts the legitimate client against t and returns once it
// is connected.
func startLegit(b *testing.B, t *target) *legit {
	b.Helper()
	l := &legit{selfproc.Start(b, legitEnv+"="+t.base)}
	if line, err := l.Out.ReadString('\n'); err != nil || line != "ready\n" {
		b.Fatalf("legitimate client: %q, %v", line, err)
	}
	return l
}

// send writes a line to the client's standard input.
func (l *legit) send(line string) { io.WriteString(l.Stdin, line+"\n") }

// stop ends the client's reads and returns what it measured, by phase;
// it logs each phase's first failure.
func (l *legit) stop(b *testing.B) (lat [2][]time.Duration, failed [2]int) {
	l.send("stop")
	var res legitResult
	if err := json.NewDecoder(l.Out).Decode(&res); err != nil {
		b.Fatalf("legitimate client: %v", err)
	}
	for p, first := range res.First {
		if first != "" {
			b.Logf("legitimate read (phase %d): %s", p, first)
		}
	}
	return res.Lat, res.Failed
}
