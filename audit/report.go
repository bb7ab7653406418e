package audit

import (
	"cmp"
	"fmt"
	"io"
	"strings"
)

// A Severity says how strongly the specification asks for a rule.
type Severity int

const (
	// Should is a rule the specification states with SHOULD, or one that
	// follows from its intent: a host copes when it is broken, but worse.
	Should Severity = iota + 1
	// Must is a rule the specification states with MUST, or one without
	// which a host cannot use the resource at all.
	Must
)

func (s Severity) String() string {
	switch s {
	case Must:
		return "MUST"
	case Should:
		return "SHOULD"
	}
	return fmt.Sprintf("Severity(%d)", int(s))
}

// MarshalText returns the severity's name, as String does.
func (s Severity) MarshalText() ([]byte, error) {
	if s < Should || s > Must {
		return nil, fmt.Errorf("audit: no severity %d", int(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText sets s to the severity named by text ("must" or
// "should", in any case).
func (s *Severity) UnmarshalText(text []byte) error {
	for _, v := range []Severity{Must, Should} {
		if strings.EqualFold(string(text), v.String()) {
			*s = v
			return nil
		}
	}
	return fmt.Errorf("audit: no severity %q (want must or should)", text)
}

// A Rule is one thing the audit checks.
type Rule struct {
	// ID names the rule, as "area.what" (such as "list.no-repeats"):
	// Options.Waive and the mcpaudit command's -waive take it.
	ID       string
	Severity Severity
	// Spec is what the rule comes from: the words of the specification
	// where it states the rule, or what it follows from.
	Spec string
}

// A Finding is one violation of a rule.
type Finding struct {
	Rule Rule
	// Target is what broke the rule: a resource's URI, a template, or a
	// method such as "resources/list".
	Target string
	// Seen is what the audit saw.
	Seen string
	// Waived is the reason the rule is waived (Options.Waive); empty if
	// it is not.
	Waived string
}

// A Report is what Run found.
type Report struct {
	Protocol string // the protocol version the session negotiated
	Server   string // the server's name, as it gave it
	// Counts of what was examined.
	Resources, Templates, Reads int
	// Skipped names the checks not made, with the reason (such as
	// "subscriptions: the server does not advertise subscribe").
	Skipped  []string
	Findings []Finding
}

// Failed reports whether r holds a violation of a Must rule that is not
// waived: FailedAt(Must).
func (r *Report) Failed() bool { return r.FailedAt(Must) }

// FailedAt reports whether r holds a finding that is not waived, of
// severity sev or higher: FailedAt(Should) fails on SHOULD violations as
// well as MUST ones.
func (r *Report) FailedAt(sev Severity) bool { return len(r.Violations(sev)) > 0 }

// Violations returns the findings that are not waived, of severity sev or
// higher.
func (r *Report) Violations(sev Severity) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Waived == "" && f.Rule.Severity >= sev {
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
// "SEVERITY rule-id target: seen", followed by the rule's source indented,
// waived findings last.
func (r *Report) WriteTo(w io.Writer) (int64, error) {
	var b strings.Builder
	must, should := len(r.Violations(Must)), len(r.Violations(Should))-len(r.Violations(Must))
	fmt.Fprintf(&b, "%s at protocol %s: %d resources, %d templates, %d reads; %d MUST and %d SHOULD violations\n",
		cmp.Or(r.Server, "server"), r.Protocol, r.Resources, r.Templates, r.Reads, must, should)
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "skipped: %s\n", s)
	}
	write := func(f Finding) {
		fmt.Fprintf(&b, "%s %s %s: %s\n", f.Rule.Severity, f.Rule.ID, f.Target, f.Seen)
		if f.Rule.Spec != "" {
			fmt.Fprintf(&b, "    %s\n", f.Rule.Spec)
		}
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
