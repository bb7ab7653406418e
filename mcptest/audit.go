package mcptest

import (
	"testing"

	"github.com/mcpres/mcpres/audit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Audit audits the server at the other end of cs with audit.Run and opts,
// and fails t with one error for each MUST or SHOULD finding that is not
// waived, each naming the rule, the URI, what was seen and the clause of
// the specification it is judged by; it logs the ADVICE findings and the
// waived ones. It fails t at once if Run cannot audit (bad
// options, a session that fails). It returns the report.
//
// A test in a server's main package:
//
//	func TestAudit(t *testing.T) {
//		cs := mcptest.Stdio(t, mcptest.Build(t, "."), nil, "2025-11-25", nil)
//		mcptest.Audit(t, cs, nil)
//	}
func Audit(t testing.TB, cs *mcp.ClientSession, opts *audit.Options) *audit.Report {
	t.Helper()
	report, err := audit.Run(t.Context(), cs, opts)
	if err != nil {
		if report != nil {
			t.Logf("audit: the report so far:\n%s", report)
		}
		t.Fatalf("audit: %v", err)
	}
	for _, f := range report.Findings {
		switch {
		case f.Waived != "":
			t.Logf("audit: %s %s %s: %s (waived: %s)", f.Severity, f.Rule.ID, f.Target, f.Seen, f.Waived)
		case f.Severity < audit.Should:
			t.Logf("audit: %s %s %s: %s\n    %s", f.Severity, f.Rule.ID, f.Target, f.Seen, f.Clause)
		default:
			t.Errorf("audit: %s %s %s: %s\n    %s", f.Severity, f.Rule.ID, f.Target, f.Seen, f.Clause)
		}
	}
	for _, s := range report.Skipped {
		t.Logf("audit: skipped %s", s)
	}
	return report
}
