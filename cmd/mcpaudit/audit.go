package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/mcpres/mcpres/audit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A target is a server to audit, by one transport.
type target struct {
	transport string // "stdio" or "http"
	name      string // the command line, or the URL
}

// targets returns the servers cfg names: the command over stdio, and the
// URL over streamable HTTP.
func (cfg *config) targets() []target {
	var out []target
	if len(cfg.command) > 0 {
		out = append(out, target{"stdio", strings.Join(cfg.command, " ")})
	}
	if cfg.url != "" {
		out = append(out, target{"http", cfg.url})
	}
	return out
}

// A result is one audit: a server, by a transport, at a version asked
// for.
type result struct {
	// Server names the server in the reports: -name, or else the name
	// it gives in initialize, or else (if it gave none, or the audit
	// could not begin) the target.
	Server    string `json:"server"`
	Transport string `json:"transport"`
	Target    string `json:"target"`
	// Asked is the version asked for; empty for the newest both sides
	// speak. The version negotiated, which judges the report, is
	// Report.Protocol.
	Asked    string        `json:"asked,omitempty"`
	Warnings []string      `json:"warnings,omitempty"`
	Error    string        `json:"error,omitempty"`
	Report   *audit.Report `json:"report,omitempty"` // nil if the audit could not begin
	Failed   bool          `json:"failed"`           // it breaks a rule at or above -fail-on
	// Seconds is how long the audit took, connecting included.
	Seconds float64 `json:"seconds"`

	err        error
	serverTail string // the end of a stdio server's stderr, if the audit failed
}

// name names the audit for messages: "stdio at 2026-07-28".
func (r *result) name() string {
	v := r.Asked
	if r.Report != nil && r.Report.Protocol != "" {
		v = r.Report.Protocol
	}
	if v == "" {
		return r.Transport
	}
	return r.Transport + " at " + v
}

// auditOne connects to t, asking for version, and audits it. A stdio
// server's stderr goes to serverLog, and its end is kept for a failure.
func auditOne(ctx context.Context, cfg *config, t target, version string, serverLog io.Writer) *result {
	start := time.Now()
	r := &result{Server: cmp.Or(cfg.name, t.name), Transport: t.transport, Target: t.name, Asked: version}
	defer func() { r.Seconds = time.Since(start).Seconds() }()
	tail := &tailBuffer{max: 4 << 10}
	var transport mcp.Transport
	if t.transport == "http" {
		// audit.HTTPTransport ends a 2026-07-28 request by closing its
		// stream alone, as that version's transport says.
		httpClient := &http.Client{Transport: audit.HTTPTransport(headerTransport{cfg.headers, http.DefaultTransport})}
		transport = &mcp.StreamableClientTransport{Endpoint: cfg.url, HTTPClient: httpClient}
	} else {
		cmd := exec.Command(cfg.command[0], cfg.command[1:]...)
		// Each run of the server starts with a line that names it, so
		// that the runs a -server-log holds can be told apart.
		fmt.Fprintf(serverLog, "=== mcpaudit %s: %s, protocol %s: %s\n",
			start.UTC().Format(time.RFC3339), t.transport, cmp.Or(version, "the newest both sides speak"), t.name)
		cmd.Stderr = io.MultiWriter(tail, serverLog)
		transport = &mcp.CommandTransport{Command: cmd}
	}
	fail := func(err error) *result {
		r.err, r.Error = err, err.Error()
		if t.transport == "stdio" {
			r.serverTail = strings.TrimSpace(tail.String())
		}
		r.Failed = true
		return r
	}

	updates := &audit.Updates{}
	clientOpts := &mcp.ClientOptions{ResourceUpdatedHandler: updates.Handle}
	if cfg.listChange != nil {
		// At 2026-07-28 go-sdk's client listens for list changes only if
		// it has a handler for them.
		clientOpts.ResourceListChangedHandler = updates.HandleListChanged
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpaudit", Version: "v1"}, clientOpts)
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return fail(fmt.Errorf("connecting: %w", err))
	}
	defer cs.Close()
	if got := cs.InitializeResult().ProtocolVersion; version != "" && got != version {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s: asked for protocol %s, the server negotiated %s: the report is judged by %s", t.transport, version, got, got))
	}

	opts := &audit.Options{Reads: cfg.reads, Waive: cfg.waive, Wait: cfg.wait, Updates: updates, ChangeURI: cfg.changeURI}
	if ch := cfg.change; ch != nil {
		opts.Change = func(ctx context.Context, uri string) error { return ch.make(ctx, cs, uri) }
	}
	if ch := cfg.listChange; ch != nil {
		opts.ChangeList = func(ctx context.Context) error { return ch.make(ctx, cs, "") }
	}
	report, err := audit.Run(ctx, cs, opts)
	r.Report = report
	if cfg.name == "" && report != nil && report.Server != "" {
		r.Server = report.Server
	}
	if err != nil {
		return fail(err)
	}
	r.Failed = report.FailedAt(cfg.failOn)
	return r
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

// A tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if over := b.buf.Len() - b.max; over > 0 {
		b.buf.Next(over)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
