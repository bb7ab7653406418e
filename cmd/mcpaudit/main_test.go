package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpres/mcpres/audit"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// broken is the deliberately broken server of package audit's testdata,
// built once for the tests that audit it.
var broken string

func TestMain(m *testing.M) {
	os.Exit(mcptest.RunWithBinary(m, "../../audit/testdata/broken", &broken))
}

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
		{"-protocol", "2026", "--", "server"},
		{"-format", "yaml", "--", "server"},
		{"-change", "curl:x", "--", "server"},
		{"-change", "tool:", "--", "server"},
		{"-change", "tool:touch {not json}", "--", "server"},
		{"-list-change", "sh:", "--", "server"},
		{"-change-uri", "test://a", "--", "server"},
		{"-wait", "0s", "--", "server"},
		{"-server-log", "log.txt", "-url", "http://127.0.0.1:1/mcp"},
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
	code, out, _ := mcpaudit("--", "/nonexistent/mcp-server")
	assert.Equal(t, 2, code)
	assert.Contains(t, out, "error: the audit could not be made: connecting")
	_, _, stderr := mcpaudit("-format", "json", "--", "/nonexistent/mcp-server")
	assert.Contains(t, stderr, "connecting", "and on stderr, with -format json")
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
	bin := broken
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
// the rule is checked, and exit 1 for a MUST rule; the rules of
// notifications with its tools as -change and -list-change.
func TestEachRuleOverStdio(t *testing.T) {
	t.Parallel()
	bin := broken
	rules := audit.Rules()
	protocols := make([]string, len(rules))
	runs := make([]outcome, len(rules))
	together(len(rules), func(i int) {
		protocols[i] = "2026-07-28"
		if rules[i].ID == "subscribe.unsubscribed-silent" {
			protocols[i] = "2025-11-25" // at 2026-07-28 the server cannot ignore the end of a listen
		}
		runs[i] = audited("-protocol", protocols[i], "-wait", "1s", "-change", touch, "-list-change", "tool:add",
			"--", bin, "-break", rules[i].ID, "-tools")
	})
	for i, r := range rules {
		t.Run(r.ID, func(t *testing.T) {
			code, out := runs[i].code, runs[i].out
			sev := r.Severity(protocols[i])
			assert.Contains(t, out, sev.String()+" "+r.ID+" ", out)
			if sev == audit.Must {
				assert.Equal(t, 1, code, out)
			}
		})
	}
}

// An outcome is what one run of mcpaudit returned.
type outcome struct {
	code        int
	out, stderr string
}

// audited runs mcpaudit with args.
func audited(args ...string) outcome {
	var r outcome
	r.code, r.out, r.stderr = mcpaudit(args...)
	return r
}

// together calls f(0), …, f(n-1), eight at a time, and returns when every
// call has returned. It is for audits that mostly wait on the clock
// (-wait, for a notification or for none), which t.Parallel would run only
// GOMAXPROCS at a time.
func together(n int, f func(i int)) {
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			f(i)
		})
	}
	wg.Wait()
}

// touch is the -change that calls the broken server's tool touch.
const touch = `tool:touch {"uri": "{uri}"}`

// With a way to make changes, a tool call or a shell command, mcpaudit
// checks that they are told, in each era; a change that fails ends the
// audit (exit 2).
func TestChangeFlags(t *testing.T) {
	t.Parallel()
	bin := broken
	dir := t.TempDir()
	shell := `sh:echo "$MCPAUDIT_URI" > "` + dir + `/$(date +%s%N)"`
	notified := []string{"subscribe.delivers", "subscribe.unsubscribed-silent", "list.changed"}
	cases := []struct {
		name    string
		args    []string
		code    int
		rules   []string // of notified
		skipped string   // a skipped check the output names
	}{
		{"tools", []string{"-change", touch, "-list-change", "tool:add", "--", bin, "-break", "read.single-uri", "-tools"}, 0, nil, ""},
		{"shell", []string{"-change", shell, "--", bin, "-break", "read.single-uri", "-watch", dir}, 0, nil, "list changes: needs a way"},
		{"the resource named", []string{"-change", shell, "-change-uri", "test://b", "--", bin, "-break", "read.single-uri", "-watch", dir}, 0, nil, ""},
		{"untold list", []string{"-fail-on", "should", "-list-change", "tool:add", "--", bin, "-break", "list.changed", "-tools"}, 1, []string{"list.changed"}, ""},
		{"untold change", []string{"-change", "sh:true", "--", bin, "-break", "read.single-uri"}, 0, []string{"subscribe.delivers"}, ""},
		{"without a way", []string{"--", bin, "-break", "read.single-uri"}, 0, nil, "subscription delivery: needs a way"},
		{"a change that fails", []string{"-change", "tool:no-such-tool", "--", bin, "-break", "read.single-uri", "-tools"}, 2, nil, ""},
	}
	versions := []string{"2025-11-25", "2026-07-28"}
	runs := make([]outcome, len(cases)*len(versions))
	together(len(runs), func(i int) {
		c, version := cases[i/len(versions)], versions[i%len(versions)]
		runs[i] = audited(append([]string{"-protocol", version, "-wait", "1s"}, c.args...)...)
	})
	for i, r := range runs {
		c, version := cases[i/len(versions)], versions[i%len(versions)]
		t.Run(c.name+"/"+version, func(t *testing.T) {
			code, out, stderr := r.code, r.out, r.stderr
			assert.Equal(t, c.code, code, "%s\n%s", out, stderr)
			var rules []string
			for _, line := range strings.Split(out, "\n") {
				if f := strings.Fields(line); len(f) > 1 && slices.Contains(notified, f[1]) {
					rules = append(rules, f[1])
				}
			}
			assert.Equal(t, c.rules, rules, out)
			if c.skipped != "" {
				assert.Contains(t, out, "skipped: "+c.skipped)
			}
			if c.code == 2 {
				assert.Contains(t, out, "no-such-tool")
			}
		})
	}
}

// -format json prints every audit (a transport and a version) as one
// object; -junit writes a test case per rule per audit, failed, skipped
// or passed; the version negotiated is in both, with a warning where it
// is not the one asked for.
func TestReports(t *testing.T) {
	t.Parallel()
	bin := broken
	// go-sdk's stateful HTTP handler answers a 2026-07-28 client at
	// 2025-11-25.
	url := "http://" + mcptest.StartHTTP(t, bin, "-break", "list.uri") + "/mcp"
	junitFile := filepath.Join(t.TempDir(), "audit.xml")
	code, out, stderr := mcpaudit("-format", "json", "-junit", junitFile, "-protocol", "2025-11-25,2026-07-28",
		"-url", url, "--", bin, "-break", "list.uri")
	assert.Equal(t, 1, code, stderr)

	var got struct {
		FailOn   string
		ExitCode int
		Audits   []struct {
			Transport, Target, Asked string
			Warnings                 []string
			Failed                   bool
			Report                   struct {
				Protocol, JudgedBy string
				Unchecked          map[string]string
				Findings           []struct{ Rule, Severity, Target, Seen string }
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	assert.Equal(t, "MUST", got.FailOn)
	assert.Equal(t, 1, got.ExitCode)
	require.Len(t, got.Audits, 4)
	var names []string
	for _, a := range got.Audits {
		names = append(names, a.Transport+" "+a.Asked+" "+a.Report.Protocol)
		assert.True(t, a.Failed)
		assert.Contains(t, a.Report.Findings, struct{ Rule, Severity, Target, Seen string }{"list.uri", "MUST", "not a uri", `holds " " at byte 3, which RFC 3986 allows nowhere`})
	}
	assert.Equal(t, []string{
		"stdio 2025-11-25 2025-11-25", "stdio 2026-07-28 2026-07-28",
		"http 2025-11-25 2025-11-25", "http 2026-07-28 2025-11-25",
	}, names)
	assert.Empty(t, got.Audits[1].Warnings)
	require.Len(t, got.Audits[3].Warnings, 1)
	assert.Contains(t, got.Audits[3].Warnings[0], "asked for protocol 2026-07-28, the server negotiated 2025-11-25")
	assert.Contains(t, stderr, "warning: http: asked for protocol 2026-07-28")
	assert.Contains(t, got.Audits[0].Report.Unchecked["cache.hints"], "not a rule of protocol 2025-11-25")

	data, err := os.ReadFile(junitFile)
	require.NoError(t, err)
	var suites struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
				Time      string `xml:"time,attr"`
				Failure   *struct {
					Type string `xml:"type,attr"`
					Text string `xml:",chardata"`
				} `xml:"failure"`
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	require.NoError(t, xml.Unmarshal(data, &suites), string(data))
	rules := audit.Rules()
	assert.Equal(t, 4*len(rules), suites.Tests)
	require.Len(t, suites.Suites, 4)
	assert.Equal(t, "broken http 2025-11-25", suites.Suites[3].Name, "named by the server and the version negotiated")
	for _, s := range suites.Suites {
		require.Len(t, s.Cases, len(rules))
		for i, c := range s.Cases {
			assert.Equal(t, rules[i].ID, c.Name)
			assert.True(t, strings.HasPrefix(c.Classname, "mcpaudit.broken."), c.Classname)
			assert.Regexp(t, `^[0-9]+\.[0-9]{3}$`, c.Time, "%s %s", s.Name, c.Name)
			switch c.Name {
			case "list.uri":
				if assert.NotNil(t, c.Failure, s.Name) {
					assert.Equal(t, "MUST", c.Failure.Type)
					assert.Contains(t, c.Failure.Text, "not a uri")
				}
			case "cache.hints":
				if s.Name != "broken stdio 2026-07-28" && assert.NotNil(t, c.Skipped, s.Name) {
					assert.Contains(t, c.Skipped.Message, "not a rule of protocol")
				}
			default:
				assert.Nil(t, c.Failure, "%s %s", s.Name, c.Name)
			}
		}
	}
	// SHOULD findings (notfound.code, go-sdk's at 2025-11-25) fail only
	// with -fail-on should.
	assert.Equal(t, 4, suites.Failures)
}

// A server's stderr is kept out of the report: -server-log writes it to a
// file, -v to mcpaudit's stderr; a server that fails shows its end.
func TestServerStderr(t *testing.T) {
	t.Parallel()
	bin := broken
	const said = "broken: received resources/list"

	code, out, stderr := mcpaudit("--", bin, "-break", "read.single-uri", "-chatty")
	assert.Equal(t, 0, code)
	assert.NotContains(t, out, said)
	assert.NotContains(t, stderr, said)

	log := filepath.Join(t.TempDir(), "server.log")
	code, out, stderr = mcpaudit("-server-log", log, "--", bin, "-break", "read.single-uri", "-chatty")
	assert.Equal(t, 0, code)
	assert.NotContains(t, out+stderr, said)
	data, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Contains(t, string(data), said)

	code, out, stderr = mcpaudit("-v", "--", bin, "-break", "read.single-uri", "-chatty")
	assert.Equal(t, 0, code)
	assert.NotContains(t, out, said)
	assert.Contains(t, stderr, said)

	code, _, stderr = mcpaudit("--", bin, "-break", "no.such-rule")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `no way to break rule "no.such-rule"`, "the end of the server's stderr")
}
