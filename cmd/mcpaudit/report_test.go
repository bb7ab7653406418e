package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpres/mcpres/audit"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// junitFile is the JUnit XML mcpaudit writes, as a test reads it.
type junitFile struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
	Suites   []struct {
		Name    string `xml:"name,attr"`
		Skipped int    `xml:"skipped,attr"`
		Time    string `xml:"time,attr"`
		Cases   []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Time      string `xml:"time,attr"`
			Failure   *struct {
				Text string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Text string `xml:",chardata"`
			} `xml:"error"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// readJUnit reads the JUnit XML at path, and fails t unless its
// testsuites element is what junit-10.xsd allows: no skipped attribute.
func readJUnit(t *testing.T, path string) junitFile {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.NotRegexp(t, `<testsuites[^>]* skipped=`, string(data), "junit-10.xsd gives testsuites no skipped attribute")
	assert.Regexp(t, `<testsuites[^>]* time="[0-9]+\.[0-9]{3}"`, string(data))
	var f junitFile
	require.NoError(t, xml.Unmarshal(data, &f), string(data))
	return f
}

// schema returns report.schema.json, resolved.
func schema(t *testing.T) *jsonschema.Resolved {
	t.Helper()
	data, err := os.ReadFile("report.schema.json")
	require.NoError(t, err)
	var s jsonschema.Schema
	require.NoError(t, json.Unmarshal(data, &s))
	rs, err := s.Resolve(nil)
	require.NoError(t, err)
	return rs
}

// -format json's object holds to report.schema.json, whose version it
// names, whether the audits held, failed, ended early or never began;
// and docs/auditing.md names every field of it.
func TestJSONSchema(t *testing.T) {
	t.Parallel()
	rs := schema(t)
	bin := mcptest.Build(t, "../../audit/testdata/broken")
	for _, c := range []struct {
		name string
		code int
		args []string
	}{
		{"broken", 1, []string{"-protocol", "all", "--", bin, "-break", "list.uri"}},
		{"a change that fails", 2, []string{"-change", "tool:no-such-tool", "--", bin, "-break", "read.single-uri", "-tools"}},
		{"no server", 2, []string{"--", "/nonexistent/mcp-server"}},
		{"named", 0, []string{"-name", "my server", "--", bin, "-break", "read.single-uri"}},
	} {
		code, out, stderr := mcpaudit(append([]string{"-format", "json"}, c.args...)...)
		assert.Equal(t, c.code, code, "%s: %s", c.name, stderr)
		var v any
		require.NoError(t, json.Unmarshal([]byte(out), &v), out)
		assert.NoError(t, rs.Validate(v), "%s:\n%s", c.name, out)
		assert.Equal(t, float64(schemaVersion), v.(map[string]any)["schemaVersion"])
		// The schema can fail: another version, or an audit without its
		// server, is refused.
		v.(map[string]any)["schemaVersion"] = 2
		assert.Error(t, rs.Validate(v), c.name)
		v.(map[string]any)["schemaVersion"] = schemaVersion
		delete(v.(map[string]any)["audits"].([]any)[0].(map[string]any), "server")
		assert.Error(t, rs.Validate(v), c.name)
	}

	doc, err := os.ReadFile("../../docs/auditing.md")
	require.NoError(t, err)
	data, err := os.ReadFile("report.schema.json")
	require.NoError(t, err)
	var raw any
	require.NoError(t, json.Unmarshal(data, &raw))
	for _, name := range fieldNames(raw) {
		assert.True(t, strings.Contains(string(doc), "`"+name+"`"), "docs/auditing.md names the field %s", name)
	}
}

// fieldNames returns the names of the fields a JSON Schema describes:
// the keys of every "properties" in it, sorted, each once.
func fieldNames(schema any) []string {
	seen := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if props, ok := v["properties"].(map[string]any); ok {
				for name := range props {
					seen[name] = true
				}
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(schema)
	names := make([]string, 0, len(seen))
	for name := range seen {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// An audit that ends early (a change fails) reports the rules it did not
// reach as unchecked in the JSON and as skipped cases in JUnit, with the
// reason, never as passed; one that cannot begin skips every rule. Each
// suite and class names the server: -name, or the name from initialize.
func TestAbortedReports(t *testing.T) {
	t.Parallel()
	bin := mcptest.Build(t, "../../audit/testdata/broken")
	dir := t.TempDir()
	path := filepath.Join(dir, "ended.xml")
	code, out, _ := mcpaudit("-format", "json", "-junit", path, "-protocol", "2026-07-28",
		"-change", "tool:no-such-tool", "--", bin, "-break", "read.single-uri", "-tools")
	require.Equal(t, 2, code, out)
	var got struct {
		Audits []struct {
			Server string
			Report struct{ Unchecked map[string]string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	require.Len(t, got.Audits, 1)
	assert.Equal(t, "broken", got.Audits[0].Server)
	unreached := []string{"subscribe.delivers", "subscribe.unsubscribed-silent", "error.reserved-code"}
	for _, id := range unreached {
		assert.Contains(t, got.Audits[0].Report.Unchecked[id], "not reached", id)
	}
	f := readJUnit(t, path)
	require.Len(t, f.Suites, 1)
	s := f.Suites[0]
	assert.Equal(t, "broken stdio 2026-07-28", s.Name)
	assert.Len(t, s.Cases, 1+len(audit.Rules()), "the audit in error, and every rule")
	for _, c := range s.Cases {
		assert.Equal(t, "mcpaudit.broken.stdio.2026-07-28", c.Classname)
		switch {
		case c.Name == "audit":
			require.NotNil(t, c.Error)
			assert.Contains(t, c.Error.Text, "no-such-tool")
		case slices.Contains(unreached, c.Name):
			if assert.NotNil(t, c.Skipped, c.Name) {
				assert.Contains(t, c.Skipped.Message, "not reached: the audit ended first")
			}
		case c.Name == "read.single-uri":
			assert.True(t, c.Failure == nil && c.Skipped == nil, "an ADVICE finding passes at -fail-on must")
		}
	}

	path = filepath.Join(dir, "none.xml")
	code, _, _ = mcpaudit("-junit", path, "-name", "nothing.here", "--", "/nonexistent/mcp-server")
	require.Equal(t, 2, code)
	f = readJUnit(t, path)
	require.Len(t, f.Suites, 1)
	s = f.Suites[0]
	assert.Equal(t, "nothing.here stdio", s.Name)
	assert.Equal(t, len(audit.Rules()), s.Skipped, "every rule skipped")
	for _, c := range s.Cases {
		assert.Equal(t, "mcpaudit.nothing_here.stdio", c.Classname)
		if c.Name != "audit" && assert.NotNil(t, c.Skipped, c.Name) {
			assert.Contains(t, c.Skipped.Message, "not reached: the audit could not begin: connecting")
		}
	}
}

// -server-log starts each run of the server, one a transport and a
// version, with a line that names it, and appends across invocations.
func TestServerLogMarkers(t *testing.T) {
	t.Parallel()
	bin := mcptest.Build(t, "../../audit/testdata/broken")
	log := filepath.Join(t.TempDir(), "server.log")
	marker := regexp.MustCompile(`(?m)^=== mcpaudit [0-9T:Z-]+: stdio, protocol ([0-9-]+): ` + regexp.QuoteMeta(bin) + ` -break read.single-uri -chatty$`)
	for range 2 {
		code, out, stderr := mcpaudit("-protocol", "all", "-server-log", log, "--", bin, "-break", "read.single-uri", "-chatty")
		require.Equal(t, 0, code, "%s\n%s", out, stderr)
	}
	data, err := os.ReadFile(log)
	require.NoError(t, err)
	var versions []string
	for _, m := range marker.FindAllStringSubmatch(string(data), -1) {
		versions = append(versions, m[1])
	}
	assert.Equal(t, []string{"2025-06-18", "2025-11-25", "2026-07-28", "2025-06-18", "2025-11-25", "2026-07-28"}, versions)
	// Each run's own lines follow its marker.
	for _, run := range strings.Split(string(data), "=== mcpaudit ")[1:] {
		assert.Contains(t, run, "broken: received resources/list")
	}
}
