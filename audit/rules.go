package audit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpres/mcpres/internal/protocol"
)

// The versions of the specification whose words the rules quote, oldest
// first. A session of another version is judged by the newest of them
// that is not later than it, or, if it is older than them all, by the
// oldest (see Report.JudgedBy).
var quoted = []string{protocol.Version20250618, protocol.Version20251125, protocol.Version20260728}

// Sets of versions, for clauses.
var (
	everyVersion = quoted
	beforeListen = []string{protocol.Version20250618, protocol.Version20251125}
	sinceListen  = []string{protocol.Version20260728}
	only20250618 = []string{protocol.Version20250618}
	only20251125 = []string{protocol.Version20251125}
)

// judgedBy returns the version of the specification a session of version
// v is judged by: the newest quoted version not later than v, or the
// oldest if v is older than them all. Versions are dates, and sort as
// strings.
func judgedBy(v string) string {
	by := quoted[0]
	for _, q := range quoted {
		if q <= v {
			by = q
		}
	}
	return by
}

// A Clause is the words of the specification that a rule is judged by,
// in some of its versions.
type Clause struct {
	// Versions are the protocol versions whose text this is.
	Versions []string `json:"versions"`
	// Severity is what the words make of the rule: Must where they say
	// MUST, MUST NOT or REQUIRED, or the schema requires or bounds the
	// field; Should where they say SHOULD or RECOMMENDED; Advice where
	// they describe the protocol without requiring anything.
	Severity Severity `json:"severity"`
	// Section is where the words are: a page of the specification and
	// its heading (such as "server/utilities/pagination, Error Handling"),
	// or a type of the schema and its field.
	Section string `json:"section"`
	// Text quotes the words.
	Text string `json:"text"`
	// Method, if set, limits the clause to findings whose target is that
	// method (such as "resources/list"); the rule's other clauses judge
	// the rest.
	Method string `json:"method,omitempty"`
}

// String returns the clause as "versions section: "text"".
func (cl Clause) String() string {
	return fmt.Sprintf("%s %s: %q", strings.Join(cl.Versions, ", "), cl.Section, cl.Text)
}

// A Rule is one thing the audit checks.
type Rule struct {
	// ID names the rule, as "area.what" (such as "list.no-repeats"):
	// Options.Waive and the mcpaudit command's -waive take it.
	ID string `json:"id"`
	// Check says what the audit does, and how that follows from the
	// clauses.
	Check string `json:"check"`
	// Clauses are the words the rule is judged by, by version. A rule no
	// clause of a version names is not checked at that version.
	Clauses []Clause `json:"clauses"`
}

// Severity returns how strongly the specification of version asks for
// r: the highest severity of its clauses of that version (see judgedBy);
// zero if r is not a rule of that version.
func (r Rule) Severity(version string) Severity {
	var sev Severity
	v := judgedBy(version)
	for _, cl := range r.Clauses {
		if slices.Contains(cl.Versions, v) {
			sev = max(sev, cl.Severity)
		}
	}
	return sev
}

// clause returns the clause that judges a finding of r about target at
// version: the one of that version for target's method if there is one,
// else the one of that version for any target.
func (r Rule) clause(version, target string) (Clause, bool) {
	v := judgedBy(version)
	var found Clause
	ok := false
	for _, cl := range r.Clauses {
		switch {
		case !slices.Contains(cl.Versions, v):
		case cl.Method == target:
			return cl, true
		case cl.Method == "" && !ok:
			found, ok = cl, true
		}
	}
	return found, ok
}

// rules holds every rule, in the order they were declared; rulesByID
// indexes them. Each rule is a package-level variable of the file whose
// checks use it, made with newRule.
var (
	rules     []Rule
	rulesByID map[string]Rule
)

// withdrawn are the IDs of rules the audit no longer checks, with why:
// Options.Waive accepts them, and waives nothing.
var withdrawn = map[string]string{
	"subscribe.missing": "no version of the specification says a subscription to a URI that names nothing must be refused: a server may accept one for a resource to come",
}

// newRule declares a rule.
func newRule(id, check string, clauses ...Clause) Rule {
	r := Rule{ID: id, Check: check, Clauses: clauses}
	rules = append(rules, r)
	return r
}

// clause returns a Clause for newRule.
func clause(versions []string, sev Severity, section, text string) Clause {
	return Clause{Versions: versions, Severity: sev, Section: section, Text: text}
}

// forMethod returns cl limited to findings about method.
func (cl Clause) forMethod(method string) Clause {
	cl.Method = method
	return cl
}

// areas orders the rules by what they check, for Rules.
var areas = []string{"list", "cursor", "read", "notfound", "template", "complete", "subscribe", "cache", "error"}

func init() {
	slices.SortStableFunc(rules, func(a, b Rule) int {
		area := func(r Rule) int {
			before, _, _ := strings.Cut(r.ID, ".")
			if i := slices.Index(areas, before); i >= 0 {
				return i
			}
			return len(areas)
		}
		return area(a) - area(b)
	})
	rulesByID = make(map[string]Rule, len(rules))
	for _, r := range rules {
		if _, dup := rulesByID[r.ID]; dup {
			panic(fmt.Sprintf("audit: rule %q declared twice", r.ID))
		}
		rulesByID[r.ID] = r
	}
}

// Rules returns every rule the audit checks, grouped by what they check
// (lists, cursors, reads, not-found answers, templates, completions,
// subscriptions, caching hints, error codes); a report lists its findings
// in the order it made them.
func Rules() []Rule { return append([]Rule(nil), rules...) }

// Withdrawn returns the IDs of rules the audit once checked and no
// longer does, each with the reason. Options.Waive accepts them, to no
// effect.
func Withdrawn() map[string]string {
	out := make(map[string]string, len(withdrawn))
	for id, why := range withdrawn {
		out[id] = why
	}
	return out
}
