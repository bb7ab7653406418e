package audit_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpres/mcpres/audit"
	"github.com/stretchr/testify/assert"
)

// Each rule's severity at each version the audit quotes, as its clauses
// make it (Rule.Severity): a change of severity is a diff of this table.
// "-" is not a rule of that version. A rule whose clauses differ by
// method says so in perMethod.
func TestSeverities(t *testing.T) {
	t.Parallel()
	versions := []string{"2025-06-18", "2025-11-25", "2026-07-28"}
	want := map[string][3]string{
		"list.ends":                     {"SHOULD", "SHOULD", "MUST"},
		"list.no-repeats":               {"SHOULD", "SHOULD", "SHOULD"},
		"list.stable":                   {"SHOULD", "SHOULD", "SHOULD"},
		"list.uri":                      {"MUST", "MUST", "MUST"},
		"list.uri-credentials":          {"ADVICE", "ADVICE", "ADVICE"},
		"list.name":                     {"MUST", "MUST", "MUST"},
		"list.uri-template":             {"MUST", "MUST", "MUST"},
		"list.changed":                  {"SHOULD", "SHOULD", "SHOULD"},
		"cursor.invalid":                {"SHOULD", "SHOULD", "SHOULD"},
		"cursor.forgeable":              {"ADVICE", "ADVICE", "ADVICE"},
		"cursor.opaque":                 {"ADVICE", "ADVICE", "ADVICE"},
		"read.malformed-uri":            {"MUST", "MUST", "MUST"},
		"read.listed":                   {"ADVICE", "ADVICE", "ADVICE"},
		"read.contents":                 {"MUST", "MUST", "MUST"},
		"read.content-uri":              {"MUST", "MUST", "MUST"},
		"read.single-uri":               {"ADVICE", "ADVICE", "ADVICE"},
		"read.content-mime":             {"ADVICE", "ADVICE", "ADVICE"},
		"read.blob-encoding":            {"MUST", "MUST", "MUST"},
		"read.text-or-blob":             {"ADVICE", "ADVICE", "ADVICE"},
		"read.true-type":                {"ADVICE", "ADVICE", "ADVICE"},
		"read.text-as-text":             {"ADVICE", "ADVICE", "ADVICE"},
		"read.agrees-with-list":         {"ADVICE", "ADVICE", "ADVICE"},
		"notfound.error":                {"SHOULD", "SHOULD", "MUST"},
		"notfound.code":                 {"SHOULD", "SHOULD", "MUST"},
		"notfound.data":                 {"ADVICE", "ADVICE", "ADVICE"},
		"notfound.malformed-uri":        {"ADVICE", "ADVICE", "ADVICE"},
		"template.syntax":               {"ADVICE", "ADVICE", "ADVICE"},
		"complete.max-values":           {"MUST", "MUST", "MUST"},
		"complete.total":                {"ADVICE", "ADVICE", "ADVICE"},
		"complete.has-more":             {"ADVICE", "ADVICE", "ADVICE"},
		"complete.unknown-argument":     {"ADVICE", "ADVICE", "ADVICE"},
		"subscribe.delivers":            {"ADVICE", "ADVICE", "ADVICE"},
		"subscribe.unsubscribed-silent": {"ADVICE", "ADVICE", "MUST"},
		"cache.present":                 {"-", "-", "MUST"},
		"cache.hints":                   {"-", "-", "MUST"},
		"cache.same-scope":              {"-", "-", "MUST"},
		"error.reserved-code":           {"-", "-", "MUST"},
	}
	// perMethod are the rules with a clause for one method, and what it
	// makes of that method at a version, where the rest is less.
	perMethod := map[string]string{
		"list.ends": "2026-07-28 resources/list MUST",
	}
	got := map[string][3]string{}
	gotPerMethod := map[string]string{}
	for _, r := range audit.Rules() {
		var sevs [3]string
		for i, v := range versions {
			sevs[i] = "-"
			if sev := r.Severity(v); sev != 0 {
				sevs[i] = sev.String()
			}
		}
		got[r.ID] = sevs
		for _, cl := range r.Clauses {
			if cl.Method != "" {
				gotPerMethod[r.ID] = strings.Join(cl.Versions, ",") + " " + cl.Method + " " + cl.Severity.String()
			}
		}
	}
	assert.Equal(t, want, got)
	assert.Equal(t, perMethod, gotPerMethod)
}

// Every quote of a rule's clause that cites a page of the specification
// appears word for word, in the excerpt of that page and version kept in
// testdata/spec (markdown emphasis, code marks, links and list markers
// aside), under the headings its section names. The quotes of pages no
// copy of which could be read are listed, each with why; the schema's,
// RFC 3986's and JSON-RPC's are not pages of the specification, and are
// checked by reading.
func TestClausesQuoteTheSpec(t *testing.T) {
	t.Parallel()
	// unverified are the clauses (version, section) whose page, at that
	// version, no copy of could be read.
	unverified := map[string]string{
		"2025-06-18 server/utilities/pagination, Implementation Guidelines":   "the index holds no 2025-06-18 pagination page",
		"2025-06-18 server/utilities/pagination, Error Handling":              "the index holds no 2025-06-18 pagination page",
		"2025-06-18 server/utilities/pagination, Pagination Model":            "the index holds no 2025-06-18 pagination page",
		"2026-07-28 server/resources, Common URI Schemes, Custom URI Schemes": "no extract of that 2026-07-28 section was found",
		"2026-07-28 server/resources, Data Types, Resource Contents":          "no extract of that 2026-07-28 section was found",
	}
	notPages := regexp.MustCompile(`^(schema, |RFC 3986 |JSON-RPC 2\.0, )`)
	seen := map[string]bool{}
	for _, r := range audit.Rules() {
		for _, cl := range r.Clauses {
			if notPages.MatchString(cl.Section) {
				continue
			}
			page, headings, ok := strings.Cut(cl.Section, ", ")
			if !assert.True(t, ok && (strings.HasPrefix(page, "server/") || strings.HasPrefix(page, "basic/")), "%s: section %q names no page", r.ID, cl.Section) {
				continue
			}
			headings, _, _ = strings.Cut(headings, " (")
			for _, v := range cl.Versions {
				key := v + " " + cl.Section
				seen[key] = true
				data, err := os.ReadFile(filepath.Join("testdata", "spec", v, page+".md"))
				var missing []string
				if err == nil {
					text := unmark(string(data))
					for _, h := range strings.Split(headings, ", ") {
						if !regexp.MustCompile(`(?m)^#+ ` + regexp.QuoteMeta(h) + `$`).Match(data) {
							missing = append(missing, "heading "+h)
						}
					}
					for _, part := range strings.Split(cl.Text, " … ") {
						if !strings.Contains(text, collapse(part)) {
							missing = append(missing, "words "+part)
						}
					}
				}
				switch why, listed := unverified[key]; {
				case listed && err == nil && len(missing) == 0:
					t.Errorf("%s: %s is listed as unverified (%s), and its excerpt holds it", r.ID, key, why)
				case listed:
				case err != nil:
					t.Errorf("%s: %s: no excerpt of the page: %v", r.ID, key, err)
				default:
					assert.Empty(t, missing, "%s: %s: the excerpt of the page lacks them", r.ID, key)
				}
			}
		}
	}
	for key := range unverified {
		assert.True(t, seen[key], "%s is listed as unverified, and no clause cites it", key)
	}
}

// unmark returns markdown as the words a reader sees: without emphasis,
// code marks, <b>, links' targets and list markers, its spaces
// collapsed.
func unmark(md string) string {
	md = regexp.MustCompile(`\[([^\]]*)\](\([^)]*\)|\[[^\]]*\])`).ReplaceAllString(md, "$1")
	md = regexp.MustCompile(`(?m)^\s*(?:[-*]|\d+\.)\s+`).ReplaceAllString(md, "")
	md = strings.NewReplacer("**", "", "`", "", "<b>", "", "</b>", "").Replace(md)
	return collapse(md)
}

// collapse replaces each run of white space in s by one space.
func collapse(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
