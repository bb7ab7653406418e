package audit

import "fmt"

// rules holds every rule, in the order they were declared; rulesByID
// indexes them. Each rule is a package-level variable of the file whose
// checks use it, made with newRule.
var (
	rules     []Rule
	rulesByID map[string]Rule
)

// newRule declares a rule. Its Spec quotes the MCP specification
// (2025-06-18, 2025-11-25 and 2026-07-28 agree unless it says otherwise)
// or says what the rule follows from.
func newRule(id string, sev Severity, spec string) Rule {
	r := Rule{ID: id, Severity: sev, Spec: spec}
	rules = append(rules, r)
	return r
}

func init() {
	rulesByID = make(map[string]Rule, len(rules))
	for _, r := range rules {
		if _, dup := rulesByID[r.ID]; dup {
			panic(fmt.Sprintf("audit: rule %q declared twice", r.ID))
		}
		rulesByID[r.ID] = r
	}
}

// Rules returns every rule the audit checks, grouped by what they check
// (lists, not-found answers, reads, subscriptions, templates); a report
// lists its findings in the order it made them.
func Rules() []Rule { return append([]Rule(nil), rules...) }
