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
	assert.Contains(t, out, "0 MUST and 0 SHOULD violations")

	addr := mcptest.StartHTTP(t, bin)
	code, out, stderr = mcpaudit("-url", "http://"+addr+"/mcp")
	assert.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, stderr)
	assert.Contains(t, out, "0 MUST and 0 SHOULD violations")
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
		{"2025-11-25", 0, []string{"SHOULD notfound.code", "SHOULD complete.unknown-argument"}},
		{"2026-07-28", 0, []string{"SHOULD complete.unknown-argument"}},
	} {
		code, out, _ := mcpaudit("-protocol", c.protocol, "--", bin)
		assert.Equal(t, c.code, code, out)
		var rules []string
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "MUST ") || strings.HasPrefix(line, "SHOULD ") {
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
// the rule is checked, and exit 1 for a MUST rule; every rule but the two
// of subscription delivery, which mcpaudit cannot check (it cannot change
// a resource; see audit's TestRulesFire).
func TestEachRuleOverStdio(t *testing.T) {
	t.Parallel()
	bin := mcptest.Build(t, "../../audit/testdata/broken")
	for _, r := range audit.Rules() {
		if r.ID == "subscribe.delivers" || r.ID == "subscribe.unsubscribed-silent" {
			continue
		}
		protocol := "2026-07-28"
		if r.ID == "subscribe.missing" {
			protocol = "2025-11-25" // at 2026-07-28 go-sdk's client cannot see a refusal
		}
		t.Run(r.ID, func(t *testing.T) {
			t.Parallel()
			code, out, _ := mcpaudit("-protocol", protocol, "--", bin, "-break", r.ID)
			assert.Contains(t, out, r.Severity.String()+" "+r.ID+" ", out)
			if r.Severity == audit.Must {
				assert.Equal(t, 1, code, out)
			}
		})
	}
}

// A SHOULD violation fails the run only with -fail-on should; a waived one
// never does.
func TestFailOn(t *testing.T) {
	t.Parallel()
	bin := mcptest.Build(t, "../../audit/testdata/broken")
	const rule = "cursor.invalid" // a SHOULD rule
	for _, c := range []struct {
		args []string
		code int
	}{
		{nil, 0},
		{[]string{"-fail-on", "must"}, 0},
		{[]string{"-fail-on", "should"}, 1},
		{[]string{"-fail-on", "SHOULD"}, 1},
		{[]string{"-fail-on", "should", "-waive", rule + "=known"}, 0},
	} {
		args := append(c.args, "--", bin, "-break", rule)
		code, out, _ := mcpaudit(args...)
		assert.Equal(t, c.code, code, "mcpaudit %q:\n%s", args, out)
		assert.Contains(t, out, "SHOULD "+rule+" ", "mcpaudit %q", args)
	}
}
