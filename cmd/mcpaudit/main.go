// Command mcpaudit audits the resources of any MCP server, whatever it is
// written in, over the real protocol, and prints what it finds (see
// package audit for the rules).
//
// Usage:
//
//	mcpaudit [flags] -- command [args...]   # a server over stdio
//	mcpaudit [flags] -url URL               # a server over streamable HTTP
//
// Exit status:
//
//	0  the server breaks no rule at or above the -fail-on level (not waived)
//	1  it breaks one: a finding at or above -fail-on that is not waived
//	2  the audit could not be made: bad flags, a server that does not start
//	   or answer, a session that fails, the -timeout reached
//
// By default (-fail-on must) only MUST violations fail the run; SHOULD
// and ADVICE findings are printed and exit 0. With -fail-on should SHOULD
// violations fail it too, and with -fail-on advice every finding does.
// Waived findings never fail it. Each rule takes its severity from the
// words of the specification it is judged by, at the version negotiated:
// MUST, SHOULD, or ADVICE where they require nothing (-rules lists them).
//
// Flags:
//
//	-fail-on LEVEL    exit 1 on a finding of LEVEL or above: must (default), should or advice
//	-url URL          audit the streamable HTTP server at URL instead of a command
//	-header 'K: V'    send this HTTP header with every request (repeatable; such as an Authorization)
//	-protocol V       ask for protocol version V (default: the newest both sides speak)
//	-reads N          read the first N listed resources (default 100; 0 reads all)
//	-waive ID=REASON  do not count rule ID as a violation, for REASON (repeatable)
//	-timeout D        give up after D (default 5m)
//	-rules            print every rule and exit
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/mcpres/mcpres/audit"
	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// A config is what the flags say.
type config struct {
	url      string
	headers  http.Header
	protocol string
	reads    int
	waive    map[string]string
	timeout  time.Duration
	rules    bool
	failOn   audit.Severity
	command  []string
}

// run runs the command with args, printing to stdout and stderr, and
// returns its exit code.
func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "mcpaudit:", err)
		return 2
	}
	if cfg.rules {
		for _, r := range audit.Rules() {
			fmt.Fprintf(stdout, "%s: %s\n", r.ID, r.Check)
			for _, cl := range r.Clauses {
				fmt.Fprintf(stdout, "    %-6s %s\n", cl.Severity, cl)
			}
		}
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
	defer cancel()
	report, err := auditServer(ctx, cfg)
	if report != nil {
		report.WriteTo(stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "mcpaudit:", err)
		return 2
	}
	if report.FailedAt(cfg.failOn) {
		return 1
	}
	return 0
}

// parseFlags parses args into a config, refusing what it cannot use.
func parseFlags(args []string, stderr io.Writer) (*config, error) {
	cfg := &config{headers: http.Header{}, waive: map[string]string{}, failOn: audit.Must}
	fs := flag.NewFlagSet("mcpaudit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: mcpaudit [flags] -- command [args...]\n       mcpaudit [flags] -url URL")
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.url, "url", "", "audit the streamable HTTP server at `URL` instead of a command")
	fs.Func("header", "send the HTTP header `'Key: value'` with every request (repeatable)", func(s string) error {
		k, v, ok := strings.Cut(s, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("want 'Key: value', got %q", s)
		}
		cfg.headers.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		return nil
	})
	fs.StringVar(&cfg.protocol, "protocol", "", "ask for protocol `version` (default: the newest both sides speak)")
	fs.IntVar(&cfg.reads, "reads", audit.DefaultReads, "read the first `n` listed resources (0 reads them all)")
	fs.Func("waive", "do not count rule `ID=reason` as a violation (repeatable)", func(s string) error {
		id, reason, ok := strings.Cut(s, "=")
		if !ok || id == "" || reason == "" {
			return fmt.Errorf("want ID=reason, got %q", s)
		}
		if _, old := audit.Withdrawn()[id]; !old && !slices.ContainsFunc(audit.Rules(), func(r audit.Rule) bool { return r.ID == id }) {
			return fmt.Errorf("no rule is %q (mcpaudit -rules lists them)", id)
		}
		cfg.waive[id] = reason
		return nil
	})
	fs.TextVar(&cfg.failOn, "fail-on", audit.Must, "exit 1 on a finding of `level` or above: must, should or advice")
	fs.DurationVar(&cfg.timeout, "timeout", 5*time.Minute, "give up after `duration`")
	fs.BoolVar(&cfg.rules, "rules", false, "print every rule and exit")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	cfg.command = fs.Args()
	switch {
	case cfg.rules:
	case cfg.url == "" && len(cfg.command) == 0:
		fs.Usage()
		return nil, errors.New("name a server: a command after --, or -url")
	case cfg.url != "" && len(cfg.command) > 0:
		return nil, errors.New("name one server: a command or -url, not both")
	case cfg.reads < 0:
		return nil, fmt.Errorf("-reads %d: want 0 (all) or more", cfg.reads)
	case cfg.timeout <= 0:
		return nil, fmt.Errorf("-timeout %v: want a positive duration", cfg.timeout)
	case len(cfg.headers) > 0 && cfg.url == "":
		return nil, errors.New("-header is for -url")
	}
	if cfg.reads == 0 {
		cfg.reads = audit.AllReads
	}
	return cfg, nil
}

// auditServer connects to the server cfg names and audits it.
func auditServer(ctx context.Context, cfg *config) (*audit.Report, error) {
	var transport mcp.Transport
	httpClient := &http.Client{Transport: headerTransport{cfg.headers, http.DefaultTransport}}
	if cfg.url != "" {
		transport = &mcp.StreamableClientTransport{Endpoint: cfg.url, HTTPClient: httpClient}
	} else {
		cmd := exec.Command(cfg.command[0], cfg.command[1:]...)
		cmd.Stderr = os.Stderr
		transport = &mcp.CommandTransport{Command: cmd}
	}
	// No Options.Change: a command line cannot change the server's data,
	// so delivery is not checked (the report says so).
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpaudit", Version: "v1"}, nil)
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: cfg.protocol})
	if err != nil {
		return nil, fmt.Errorf("connecting: %w", err)
	}
	defer cs.Close()
	opts := &audit.Options{Reads: cfg.reads, Waive: cfg.waive}
	if version := cs.InitializeResult().ProtocolVersion; cfg.url != "" && version >= protocol.SessionlessSince {
		// go-sdk's client does not report a refused listen: ask with one of
		// our own.
		opts.Subscribe = func(ctx context.Context, uri string) error {
			return audit.SubscribeHTTP(ctx, httpClient, cfg.url, version, uri)
		}
	}
	return audit.Run(ctx, cs, opts)
}

// headerTransport adds headers to every request.
type headerTransport struct {
	headers http.Header
	next    http.RoundTripper
}

func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		req = req.Clone(req.Context())
		for k, vs := range t.headers {
			for _, v := range vs {
				req.Header.Add(k, v)
			}
		}
	}
	return t.next.RoundTrip(req)
}
