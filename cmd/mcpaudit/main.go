// Command mcpaudit audits the resources of any MCP server, whatever it is
// written in, over the real protocol, and prints what it finds (see
// package audit for the rules).
//
// Usage:
//
//	mcpaudit [flags] -- command [args...]   # a server over stdio
//	mcpaudit [flags] -url URL               # a server over streamable HTTP
//	mcpaudit [flags] -url URL -- command    # both: the same server, each way
//
// It audits the server once per transport and per protocol version asked
// for (-protocol 2025-11-25,2026-07-28, or all), starting the command
// afresh for each, and prints each report: the version negotiated, with a
// warning when it is not the one asked for (the report is judged by the
// one negotiated).
//
// Exit status:
//
//	0  no audit found a rule broken at or above the -fail-on level (not waived)
//	1  an audit did: a finding at or above -fail-on that is not waived
//	2  an audit could not be made, or ended early: bad flags, a server that
//	   does not start or answer, a session that fails, a change (-change,
//	   -list-change) that fails, the -timeout reached
//
// By default (-fail-on must) only MUST violations fail the run; SHOULD
// and ADVICE findings are printed and exit 0. With -fail-on should SHOULD
// violations fail it too, and with -fail-on advice every finding does.
// Waived findings never fail it. Each rule takes its severity from the
// words of the specification it is judged by, at the version negotiated:
// MUST, SHOULD, or ADVICE where they require nothing (-rules lists them).
//
// The delivery of notifications is checked when mcpaudit is told how to
// make a change: -change makes the server change a resource (the first
// listed, or -change-uri), -list-change changes its list of resources.
// Each is a tool call over the audited session, "tool:NAME {JSON
// arguments}" where {uri} stands for the URI, or a shell command,
// "sh:COMMAND", run with the URI in $MCPAUDIT_URI. It is called again
// every 200 ms until the notification arrives or -wait has passed.
//
// The server's stderr (over stdio) is kept out of the report: -server-log
// appends it to a file, each run of the server after a line that names
// it ("=== mcpaudit TIME: stdio, protocol VERSION: COMMAND"), -v copies
// it to mcpaudit's stderr; otherwise its end is shown only if the audit
// could not be made.
//
// -format json prints one object whose schemaVersion says its shape
// (docs/auditing.md describes it; report.schema.json is its JSON
// Schema).
//
// Flags:
//
//	-fail-on LEVEL      exit 1 on a finding of LEVEL or above: must (default), should or advice
//	-url URL            audit the streamable HTTP server at URL
//	-header 'K: V'      send this HTTP header with every request (repeatable; such as an Authorization)
//	-protocol V[,V]     ask for protocol version V, or each of a list, or all (default: the newest both sides speak)
//	-reads N            read the first N listed resources (default 100; 0 reads all)
//	-waive ID=REASON    do not count rule ID as a violation, for REASON (repeatable)
//	-change SPEC        how to change a resource: tool:NAME {"uri": "{uri}"} or sh:COMMAND
//	-change-uri URI     the resource -change changes (default: the first listed)
//	-list-change SPEC   how to change the list of resources: tool:NAME {...} or sh:COMMAND
//	-wait D             how long to wait for a notification after a change (default 5s)
//	-format F           text (default) or json, on stdout
//	-junit FILE         also write the results as JUnit XML: a test case per rule, server, transport and version
//	-name NAME          name the server NAME in the reports (default: the name it gives in initialize)
//	-server-log FILE    write the server's stderr to FILE (stdio)
//	-v                  copy the server's stderr to mcpaudit's stderr
//	-timeout D          give up after D (default 5m)
//	-rules              print every rule, with the clauses it is judged by, and exit
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mcpres/mcpres/audit"
	"github.com/mcpres/mcpres/internal/protocol"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// versions are the protocol versions -protocol all asks for.
var versions = []string{protocol.Version20250618, protocol.Version20251125, protocol.Version20260728}

// A config is what the flags say.
type config struct {
	url        string
	name       string
	headers    http.Header
	protocols  []string // "" is the newest both sides speak
	reads      int
	waive      map[string]string
	timeout    time.Duration
	wait       time.Duration
	rules      bool
	failOn     audit.Severity
	change     *change
	changeURI  string
	listChange *change
	format     string
	junit      string
	serverLog  string
	verbose    bool
	command    []string
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
		printRules(stdout)
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
	defer cancel()
	serverLog, closeLog, err := cfg.openServerLog(stderr)
	if err != nil {
		fmt.Fprintln(stderr, "mcpaudit:", err)
		return 2
	}
	defer closeLog()

	var results []*result
	for _, t := range cfg.targets() {
		for _, version := range cfg.protocols {
			r := auditOne(ctx, cfg, t, version, serverLog)
			results = append(results, r)
			if cfg.format != "text" { // text has them in the report
				for _, w := range r.Warnings {
					fmt.Fprintln(stderr, "mcpaudit: warning:", w)
				}
				if r.err != nil {
					fmt.Fprintf(stderr, "mcpaudit: %s: %v\n", r.name(), r.err)
				}
			}
			if tail := r.serverTail; tail != "" {
				fmt.Fprintf(stderr, "mcpaudit: %s: the end of the server's stderr:\n%s\n", r.name(), tail)
			}
		}
	}
	code := exitCode(results, cfg.failOn)
	if err := writeReports(stdout, cfg, results, code); err != nil {
		fmt.Fprintln(stderr, "mcpaudit:", err)
		return 2
	}
	if cfg.junit != "" {
		if err := writeJUnitFile(cfg.junit, results, cfg.failOn); err != nil {
			fmt.Fprintln(stderr, "mcpaudit:", err)
			return 2
		}
	}
	return code
}

// exitCode returns 2 if an audit could not be made, else 1 if one found
// a rule broken at or above failOn, else 0.
func exitCode(results []*result, failOn audit.Severity) int {
	code := 0
	for _, r := range results {
		switch {
		case r.err != nil:
			return 2
		case r.Report.FailedAt(failOn):
			code = 1
		}
	}
	return code
}

// printRules prints every rule, what it checks and its clauses.
func printRules(w io.Writer) {
	for _, r := range audit.Rules() {
		fmt.Fprintf(w, "%s: %s\n", r.ID, r.Check)
		for _, cl := range r.Clauses {
			fmt.Fprintf(w, "    %-6s %s\n", cl.Severity, cl)
		}
	}
}

// parseFlags parses args into a config, refusing what it cannot use.
func parseFlags(args []string, stderr io.Writer) (*config, error) {
	cfg := &config{headers: http.Header{}, waive: map[string]string{}, failOn: audit.Must}
	fs := flag.NewFlagSet("mcpaudit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: mcpaudit [flags] -- command [args...]\n       mcpaudit [flags] -url URL [-- command [args...]]")
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.url, "url", "", "audit the streamable HTTP server at `URL`")
	fs.StringVar(&cfg.name, "name", "", "name the server `NAME` in the reports (default: the name it gives in initialize)")
	fs.Func("header", "send the HTTP header `'Key: value'` with every request (repeatable)", func(s string) error {
		k, v, ok := strings.Cut(s, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return fmt.Errorf("want 'Key: value', got %q", s)
		}
		cfg.headers.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		return nil
	})
	protocols := fs.String("protocol", "", "ask for protocol `version`, or each of a comma-separated list, or all (default: the newest both sides speak)")
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
	fs.Func("change", "how to change a resource: `tool:NAME {\"uri\": \"{uri}\"} or sh:COMMAND` ($MCPAUDIT_URI holds the URI)", func(s string) (err error) {
		cfg.change, err = parseChange(s)
		return err
	})
	fs.StringVar(&cfg.changeURI, "change-uri", "", "the resource `URI` -change changes (default: the first listed)")
	fs.Func("list-change", "how to change the list of resources: `tool:NAME {...} or sh:COMMAND`", func(s string) (err error) {
		cfg.listChange, err = parseChange(s)
		return err
	})
	fs.DurationVar(&cfg.wait, "wait", audit.DefaultWait, "how long to wait for a notification after a change (`duration`)")
	fs.StringVar(&cfg.format, "format", "text", "print the reports as `text` or json")
	fs.StringVar(&cfg.junit, "junit", "", "also write the results as JUnit XML to `file`")
	fs.StringVar(&cfg.serverLog, "server-log", "", "write the server's stderr to `file` (stdio)")
	fs.BoolVar(&cfg.verbose, "v", false, "copy the server's stderr to mcpaudit's stderr")
	fs.DurationVar(&cfg.timeout, "timeout", 5*time.Minute, "give up after `duration`")
	fs.BoolVar(&cfg.rules, "rules", false, "print every rule, with the clauses it is judged by, and exit")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	cfg.command = fs.Args()
	var err error
	if cfg.protocols, err = parseProtocols(*protocols); err != nil {
		return nil, err
	}
	switch {
	case cfg.rules:
	case cfg.url == "" && len(cfg.command) == 0:
		fs.Usage()
		return nil, errors.New("name a server: a command after --, or -url")
	case cfg.reads < 0:
		return nil, fmt.Errorf("-reads %d: want 0 (all) or more", cfg.reads)
	case cfg.timeout <= 0:
		return nil, fmt.Errorf("-timeout %v: want a positive duration", cfg.timeout)
	case cfg.wait <= 0:
		return nil, fmt.Errorf("-wait %v: want a positive duration", cfg.wait)
	case len(cfg.headers) > 0 && cfg.url == "":
		return nil, errors.New("-header is for -url")
	case cfg.format != "text" && cfg.format != "json":
		return nil, fmt.Errorf("-format %q: want text or json", cfg.format)
	case cfg.changeURI != "" && cfg.change == nil:
		return nil, errors.New("-change-uri is for -change")
	case cfg.serverLog != "" && len(cfg.command) == 0:
		return nil, errors.New("-server-log is for a server over stdio (a command)")
	}
	if cfg.reads == 0 {
		cfg.reads = audit.AllReads
	}
	return cfg, nil
}

// parseProtocols parses -protocol: empty (the newest both sides speak),
// all, or a comma-separated list of versions.
func parseProtocols(s string) ([]string, error) {
	switch s {
	case "":
		return []string{""}, nil
	case "all":
		return versions, nil
	}
	var out []string
	for _, v := range strings.Split(s, ",") {
		v = strings.TrimSpace(v)
		if len(v) != len("2006-01-02") {
			return nil, fmt.Errorf("-protocol: %q is not a version (YYYY-MM-DD)", v)
		}
		if _, err := time.Parse(time.DateOnly, v); err != nil {
			return nil, fmt.Errorf("-protocol: %q is not a version (YYYY-MM-DD)", v)
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out, nil
}

// openServerLog returns where a stdio server's stderr goes besides the
// tail kept for a failure: the -server-log file, mcpaudit's stderr with
// -v, both, or nowhere.
func (cfg *config) openServerLog(stderr io.Writer) (io.Writer, func(), error) {
	var ws []io.Writer
	closeLog := func() {}
	if cfg.serverLog != "" {
		f, err := os.OpenFile(cfg.serverLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, nil, fmt.Errorf("-server-log: %w", err)
		}
		ws, closeLog = append(ws, f), func() { f.Close() }
	}
	if cfg.verbose {
		ws = append(ws, stderr)
	}
	return io.MultiWriter(ws...), closeLog, nil
}
