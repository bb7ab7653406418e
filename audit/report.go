package audit

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// A Severity says how strongly the specification asks for a rule.
type Severity int

const (
	// Advice is a rule the specification describes without requiring
	// it (no MUST or SHOULD): a host copes when it is broken, but worse.
	// It fails nothing unless asked (Report.FailedAt(Advice)).
	Advice Severity = iota + 1
	// Should is a rule the specification states with SHOULD or
	// RECOMMENDED.
	Should
	// Must is a rule the specification states with MUST, MUST NOT or
	// REQUIRED, or that the schema states as a constraint of a field (it
	// is required, or bounded).
	Must
)

func (s Severity) String() string {
	switch s {
	case Must:
		return "MUST"
	case Should:
		return "SHOULD"
	case Advice:
		return "ADVICE"
	}
	return fmt.Sprintf("Severity(%d)", int(s))
}

// MarshalText returns the severity's name, as String does.
func (s Severity) MarshalText() ([]byte, error) {
	if s < Advice || s > Must {
		return nil, fmt.Errorf("audit: no severity %d", int(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText sets s to the severity named by text ("must", "should"
// or "advice", in any case).
func (s *Severity) UnmarshalText(text []byte) error {
	for _, v := range []Severity{Must, Should, Advice} {
		if strings.EqualFold(string(text), v.String()) {
			*s = v
			return nil
		}
	}
	return fmt.Errorf("audit: no severity %q (want must, should or advice)", text)
}

// A Finding is one violation of a rule.
type Finding struct {
	Rule Rule
	// Severity is the rule's severity at the version the report is
	// judged by: Clause's.
	Severity Severity
	// Clause is the words the finding is judged by.
	Clause Clause
	// Target is what broke the rule: a resource's URI, a template, or a
	// method such as "resources/list".
	Target string
	// Seen is what the audit saw.
	Seen string
	// Waived is the reason the rule is waived (Options.Waive); empty if
	// it is not.
	Waived string
}

// MarshalJSON writes f as an object naming its rule by ID.
func (f Finding) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Rule     string   `json:"rule"`
		Severity Severity `json:"severity"`
		Target   string   `json:"target"`
		Seen     string   `json:"seen"`
		Clause   Clause   `json:"clause"`
		Waived   string   `json:"waived,omitempty"`
	}{f.Rule.ID, f.Severity, f.Target, f.Seen, f.Clause, f.Waived})
}

// A Report is what Run found.
type Report struct {
	Server string `json:"server"` // the server's name, as it gave it
	// Protocol is the protocol version the session negotiated; JudgedBy
	// the version of the specification whose words judge it: the same,
	// unless the audit quotes no text of that version (see Rules).
	Protocol string `json:"protocol"`
	JudgedBy string `json:"judgedBy"`
	// Counts of what was examined.
	Resources int `json:"resources"`
	Templates int `json:"templates"`
	Reads     int `json:"reads"`
	// Skipped names the checks not made, with the reason (such as
	// "subscriptions: the server does not advertise subscribe").
	Skipped []string `json:"skipped,omitempty"`
	// Unchecked maps the ID of each rule that was not checked to why
	// (not a rule of this version, nothing to check it on, an option not
	// given, not reached before the audit ended). A rule neither here nor
	// in Findings was checked, and held.
	Unchecked map[string]string `json:"unchecked,omitempty"`
	Findings  []Finding         `json:"findings"`
	// Took is how long the checks of each rule took: the time of the
	// step of the audit that made them, which rules checked together
	// share. A rule not reached took nothing.
	Took map[string]time.Duration `json:"-"`
}

// Failed reports whether r holds a violation of a Must rule that is not
// waived: FailedAt(Must).
func (r *Report) Failed() bool { return r.FailedAt(Must) }

// FailedAt reports whether r holds a finding that is not waived, of
// severity sev or higher: FailedAt(Should) fails on SHOULD violations as
// well as MUST ones, FailedAt(Advice) on every finding.
func (r *Report) FailedAt(sev Severity) bool { return len(r.Violations(sev)) > 0 }

// Violations returns the findings that are not waived, of severity sev or
// higher.
func (r *Report) Violations(sev Severity) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Waived == "" && f.Severity >= sev {
			out = append(out, f)
		}
	}
	return out
}

// String returns the report as text, one finding a line after a summary
// line (see WriteTo).
func (r *Report) String() string {
	var b strings.Builder
	r.WriteTo(&b)
	return b.String()
}

// WriteTo writes r to w as text: a summary line, then each finding as
// "SEVERITY rule-id target: seen", followed, indented, by the clause it
// is judged by; waived findings last.
func (r *Report) WriteTo(w io.Writer) (int64, error) {
	var b strings.Builder
	count := func(sev Severity) int {
		n := 0
		for _, f := range r.Findings {
			if f.Waived == "" && f.Severity == sev {
				n++
			}
		}
		return n
	}
	fmt.Fprintf(&b, "%s at protocol %s: %d resources, %d templates, %d reads; %d MUST, %d SHOULD and %d ADVICE findings\n",
		cmp.Or(r.Server, "server"), r.Protocol, r.Resources, r.Templates, r.Reads, count(Must), count(Should), count(Advice))
	if r.JudgedBy != "" && r.JudgedBy != r.Protocol {
		fmt.Fprintf(&b, "judged by the words of %s: the audit quotes no text of %s\n", r.JudgedBy, r.Protocol)
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "skipped: %s\n", s)
	}
	write := func(f Finding) {
		fmt.Fprintf(&b, "%s %s %s: %s\n", f.Severity, f.Rule.ID, f.Target, f.Seen)
		fmt.Fprintf(&b, "    %s\n", f.Clause)
		if f.Waived != "" {
			fmt.Fprintf(&b, "    waived: %s\n", f.Waived)
		}
	}
	for _, f := range r.Findings {
		if f.Waived == "" {
			write(f)
		}
	}
	for _, f := range r.Findings {
		if f.Waived != "" {
			write(f)
		}
	}
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}
