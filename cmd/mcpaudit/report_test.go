package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpres/mcpres/audit"
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

// schema returns report.schema.json, parsed.
func schema(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile("report.schema.json")
	require.NoError(t, err)
	var s map[string]any
	require.NoError(t, json.Unmarshal(data, &s))
	return s
}

// validate checks v, parsed JSON, against the JSON Schema s of root, as
// far as report.schema.json uses the keywords of JSON Schema 2020-12:
// $ref (to #/$defs), type, const, enum, pattern, minimum, required,
// properties, additionalProperties, items and minItems. It returns what
// does not hold, at path. (The module keeps no JSON Schema validator as
// a dependency of its own.)
func validate(root, s map[string]any, v any, path string) []string {
	if ref, ok := s["$ref"].(string); ok {
		name, ok := strings.CutPrefix(ref, "#/$defs/")
		def, found := root["$defs"].(map[string]any)[name].(map[string]any)
		if !ok || !found {
			return []string{path + ": unknown $ref " + ref}
		}
		return validate(root, def, v, path)
	}
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, path+": "+fmt.Sprintf(format, args...)) }
	if want, ok := s["const"]; ok && !reflect.DeepEqual(v, want) {
		fail("%v is not %v", v, want)
	}
	if enum, ok := s["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return reflect.DeepEqual(e, v) }) {
		fail("%v is none of %v", v, enum)
	}
	switch typ, _ := s["type"].(string); typ {
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			fail("not an object")
			return errs
		}
		required, _ := s["required"].([]any)
		for _, name := range required {
			if _, ok := obj[name.(string)]; !ok {
				fail("no %s", name)
			}
		}
		props, _ := s["properties"].(map[string]any)
		for name, x := range obj {
			if p, ok := props[name].(map[string]any); ok {
				errs = append(errs, validate(root, p, x, path+"."+name)...)
			} else if extra, ok := s["additionalProperties"].(map[string]any); ok {
				errs = append(errs, validate(root, extra, x, path+"."+name)...)
			}
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			fail("not an array")
			return errs
		}
		if n, ok := s["minItems"].(float64); ok && float64(len(arr)) < n {
			fail("%d items, fewer than %v", len(arr), n)
		}
		if items, ok := s["items"].(map[string]any); ok {
			for i, x := range arr {
				errs = append(errs, validate(root, items, x, fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
	case "string":
		str, ok := v.(string)
		if !ok {
			fail("not a string")
		} else if pat, ok := s["pattern"].(string); ok && !regexp.MustCompile(pat).MatchString(str) {
			fail("%q does not match %s", str, pat)
		}
	case "integer", "number":
		n, ok := v.(float64)
		switch {
		case !ok:
			fail("not a number")
		case typ == "integer" && n != float64(int64(n)):
			fail("%v is not an integer", n)
		case s["minimum"] != nil && n < s["minimum"].(float64):
			fail("%v is below %v", n, s["minimum"])
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			fail("not a boolean")
		}
	}
	return errs
}

// -format json's object holds to report.schema.json, whose version it
// names, whether the audits held, failed, ended early or never began;
// and docs/auditing.md names every field of it.
func TestJSONSchema(t *testing.T) {
	t.Parallel()
	rs := schema(t)
	valid := func(v any) []string { return validate(rs, rs, v, "$") }
	bin := broken
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
		assert.Empty(t, valid(v), "%s:\n%s", c.name, out)
		assert.Equal(t, float64(schemaVersion), v.(map[string]any)["schemaVersion"])
		// The check can fail: another version, a transport there is not,
		// or an audit without its server, is refused.
		v.(map[string]any)["schemaVersion"] = 2.0
		assert.NotEmpty(t, valid(v), c.name)
		v.(map[string]any)["schemaVersion"] = float64(schemaVersion)
		first := v.(map[string]any)["audits"].([]any)[0].(map[string]any)
		first["transport"] = "ftp"
		assert.NotEmpty(t, valid(v), c.name)
		first["transport"] = "stdio"
		require.Empty(t, valid(v), c.name)
		delete(first, "server")
		assert.NotEmpty(t, valid(v), c.name)
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
	bin := broken
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
	bin := broken
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
