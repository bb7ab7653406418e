package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcpres/mcpres/audit"
)

// writeReports writes the results to w in cfg.format: text, each report
// after a line naming the transport and the server, and its warnings; or
// one JSON object.
func writeReports(w io.Writer, cfg *config, results []*result, code int) error {
	if cfg.format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			FailOn   audit.Severity `json:"failOn"`
			ExitCode int            `json:"exitCode"`
			Audits   []*result      `json:"audits"`
		}{cfg.failOn, code, results})
	}
	var b strings.Builder
	for i, r := range results {
		if i > 0 {
			b.WriteString("\n")
		}
		if len(results) > 1 {
			fmt.Fprintf(&b, "== %s: %s\n", r.Transport, r.Target)
		}
		for _, w := range r.Warnings {
			fmt.Fprintf(&b, "warning: %s\n", w)
		}
		if r.Report != nil {
			r.Report.WriteTo(&b)
		}
		if r.Error != "" {
			fmt.Fprintf(&b, "error: the audit could not be made: %s\n", r.Error)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// JUnit XML, as CI systems read it.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Skipped  int          `xml:"skipped,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name       string          `xml:"name,attr"`
		Tests      int             `xml:"tests,attr"`
		Failures   int             `xml:"failures,attr"`
		Errors     int             `xml:"errors,attr"`
		Skipped    int             `xml:"skipped,attr"`
		Properties []junitProperty `xml:"properties>property,omitempty"`
		Cases      []junitCase     `xml:"testcase"`
	}
	junitProperty struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Failure   *junitMessage `xml:"failure,omitempty"`
		Error     *junitMessage `xml:"error,omitempty"`
		Skipped   *junitMessage `xml:"skipped,omitempty"`
		SystemOut string        `xml:"system-out,omitempty"`
	}
	junitMessage struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr,omitempty"`
		Text    string `xml:",chardata"`
	}
)

// junit returns the results as JUnit XML: a test suite per audit (a
// transport and a version), a test case per rule. A case fails if the
// rule has a finding at or above failOn that is not waived, is skipped if
// the rule was not checked, and passes otherwise; the findings below
// failOn, and the waived ones, are its system-out. An audit that could
// not be made is a suite of one case, "audit", in error.
func junit(results []*result, failOn audit.Severity) *junitSuites {
	all := &junitSuites{Name: "mcpaudit"}
	for _, r := range results {
		version := r.Asked
		if r.Report != nil && r.Report.Protocol != "" {
			version = r.Report.Protocol
		}
		s := junitSuite{Name: strings.TrimSpace(r.Transport + " " + version)}
		class := "mcpaudit." + r.Transport
		if version != "" {
			class += "." + version
		}
		s.Properties = append(s.Properties, junitProperty{"target", r.Target})
		if r.Asked != "" {
			s.Properties = append(s.Properties, junitProperty{"asked", r.Asked})
		}
		if r.Report != nil {
			s.Properties = append(s.Properties, junitProperty{"protocol", r.Report.Protocol}, junitProperty{"judgedBy", r.Report.JudgedBy})
		}
		for _, w := range r.Warnings {
			s.Properties = append(s.Properties, junitProperty{"warning", w})
		}
		if r.Error != "" {
			s.Cases = append(s.Cases, junitCase{Name: "audit", Classname: class, Error: &junitMessage{Message: "the audit could not be made", Text: r.Error}})
			s.Errors++
		}
		if r.Report != nil {
			for _, rule := range audit.Rules() {
				c := ruleCase(r.Report, rule, failOn)
				c.Classname = class
				switch {
				case c.Failure != nil:
					s.Failures++
				case c.Skipped != nil:
					s.Skipped++
				}
				s.Cases = append(s.Cases, c)
			}
		}
		s.Tests = len(s.Cases)
		all.Tests += s.Tests
		all.Failures += s.Failures
		all.Errors += s.Errors
		all.Skipped += s.Skipped
		all.Suites = append(all.Suites, s)
	}
	return all
}

// ruleCase returns the test case of rule in report.
func ruleCase(report *audit.Report, rule audit.Rule, failOn audit.Severity) junitCase {
	c := junitCase{Name: rule.ID}
	var failing, other []string
	var worst audit.Severity
	for _, f := range report.Findings {
		if f.Rule.ID != rule.ID {
			continue
		}
		line := fmt.Sprintf("%s %s: %s\n    %s", f.Severity, f.Target, f.Seen, f.Clause)
		if f.Waived != "" {
			other = append(other, line+"\n    waived: "+f.Waived)
		} else if f.Severity >= failOn {
			failing = append(failing, line)
			worst = max(worst, f.Severity)
		} else {
			other = append(other, line)
		}
	}
	switch why, unchecked := report.Unchecked[rule.ID]; {
	case len(failing) > 0:
		c.Failure = &junitMessage{
			Message: fmt.Sprintf("%d %s finding(s) of %s", len(failing), worst, rule.ID),
			Type:    worst.String(),
			Text:    strings.Join(failing, "\n"),
		}
	case unchecked && len(other) == 0:
		c.Skipped = &junitMessage{Message: why}
	}
	c.SystemOut = strings.Join(other, "\n")
	return c
}

// writeJUnitFile writes the results as JUnit XML to the file at path.
func writeJUnitFile(path string, results []*result, failOn audit.Severity) error {
	out, err := xml.MarshalIndent(junit(results, failOn), "", "  ")
	if err != nil {
		return err
	}
	data := append([]byte(xml.Header), out...)
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("-junit: %w", err)
	}
	return nil
}
