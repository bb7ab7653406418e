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
		{"-no-such-flag"},
	} {
		code, _, stderr := mcpaudit(args...)
		assert.Equal(t, 2, code, "mcpaudit %q", args)
		assert.NotEmpty(t, stderr, "mcpaudit %q says why", args)
	}
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
