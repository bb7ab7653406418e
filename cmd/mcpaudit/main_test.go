package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcpres/mcpres/audit"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/stretchr/testify/assert"
)

// mcpaudit runs the command with args and returns its exit code and
// output.
func mcpaudit(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestRules(t *testing.T) {
	t.Parallel()
	code, out, _ := mcpaudit("-rules")
	assert.Equal(t, 0, code)
	for _, r := range audit.Rules() {
		assert.Contains(t, out, r.ID)
	}
}

func TestBadFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{},
		{"-url", "http://127.0.0.1:1/mcp", "--", "server"},
		{"-waive", "no-reason", "--", "server"},
		{"-waive", "no.such-rule=because", "--", "server"},
		{"-reads", "-1", "--", "server"},
		{"-header", "X: y", "--", "server"},
		{"-fail-on", "may", "--", "server"},
		{"-no-such-flag"},
	} {
		code, _, stderr := mcpaudit(args...)
		assert.Equal(t, 2, code, "mcpaudit %q", args)
		assert.NotEmpty(t, stderr, "mcpaudit %q says why", args)
	}
	// An unknown rule is refused with the flags, before any server starts.
	_, _, stderr := mcpaudit("-waive", "no.such-rule=because", "--", "/nonexistent/mcp-server")
	assert.Contains(t, stderr, `no rule is "no.such-rule"`)
	assert.NotContains(t, stderr, "connecting")
}

// A server that cannot be started is not audited: exit 2.
func TestNoServer(t *testing.T) {
	t.Parallel()
	code, _, stderr := mcpaudit("--", "/nonexistent/mcp-server")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "connecting")
}

// The examples' quickstart server passes, over stdio and HTTP.
func TestCleanServer(t *testing.T) {
	t.Parallel()
	bin := mcptest.Build(t, "../../examples/quickstart")
	code, out, stderr := mcpaudit("--", bin)
	assert.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, stderr)
	assert.Contains(t, out, "0 MUST, 0 SHOULD and 0 ADVICE findings")

	addr := mcptest.StartHTTP(t, bin)
	code, out, stderr = mcpaudit("-url", "http://"+addr+"/mcp")
	assert.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, stderr)
	assert.Contains(t, out, "0 MUST, 0 SHOULD and 0 ADVICE findings")
}

// The deliberately broken server of package audit's testdata fails, and
// the report names what it breaks; waiving every MUST rule it breaks
// makes the exit code 0.
func TestBrokenServer(t *testing.T) {
	t.Parallel()
	bin := mcptest.Build(t, "../../audit/testdata/broken")
	code, out, _ := mcpaudit("--", bin)
	assert.Equal(t, 1, code, out)
	var waive []string
	for _, line := range strings.Split(out, "\n") {
		if id, ok := strings.CutPrefix(line, "MUST "); ok {
			id, _, _ = strings.Cut(id, " ")
			waive = append(waive, "-waive", id+"=known")
		}
	}
	assert.NotEmpty(t, waive)
	code, out, _ = mcpaudit(append(waive, "--", bin)...)
	assert.Equal(t, 0, code, out)
}

// The README's worked example: the resources of go-sdk's "everything"
// example, audited at 2025-11-25 and at 2026-07-28, break the rules the
// README says they break, and no other.
func TestEverythingExample(t *testing.T) {
	t.Parallel()
	bin := mcptest.Build(t, "../../audit/testdata/everything")
	for _, c := range []struct {
		protocol string
		code     int
		rules    []string
	}{
		{"2025-11-25", 0, []string{"SHOULD notfound.code", "ADVICE complete.unknown-argument"}},
		{"2026-07-28", 0, []string{"ADVICE complete.unknown-argument"}},
	} {
		code, out, _ := mcpaudit("-protocol", c.protocol, "--", bin)
		assert.Equal(t, c.code, code, out)
		var rules []string
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "MUST ") || strings.HasPrefix(line, "SHOULD ") || strings.HasPrefix(line, "ADVICE ") {
				f := strings.Fields(line)
				rules = append(rules, f[0]+" "+f[1])
			}
		}
		assert.Equal(t, c.rules, rules, out)
		assert.Contains(t, out, "skipped: subscriptions: the server does not advertise subscribe")
	}
}

// Over stdio, the broken server of package audit's testdata breaking any
// one rule (-break ID) makes mcpaudit report that rule, at a version where
// the rule is checked, and exit 1 for a MUST rule; every rule but those of
// notifications, which need a change (see TestChangeFlags).
func TestEachRuleOverStdio(t *testing.T) {
	t.Parallel()
	bin := mcptest.Build(t, "../../audit/testdata/broken")
	for _, r := range audit.Rules() {
		if r.ID == "subscribe.delivers" || r.ID == "subscribe.unsubscribed-silent" || r.ID == "list.changed" {
			continue
		}
		const protocol = "2026-07-28"
		t.Run(r.ID, func(t *testing.T) {
			t.Parallel()
			code, out, _ := mcpaudit("-protocol", protocol, "--", bin, "-break", r.ID)
			sev := r.Severity(protocol)
			assert.Contains(t, out, sev.String()+" "+r.ID+" ", out)
			if sev == audit.Must {
				assert.Equal(t, 1, code, out)
			}
		})
	}
}
