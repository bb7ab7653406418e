package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode"

	"github.com/mcpres/mcpres/audit"
)

// schemaVersion is the version of the shape of -format json's object
// (docs/auditing.md, report.schema.json): it changes when a field is
// removed, renamed or means something else, not when one is added.
const schemaVersion = 1

// writeReports writes the results to w in cfg.format: text, each report
// after a line naming the transport and the server, and its warnings; or
// one JSON object.
func writeReports(w io.Writer, cfg *config, results []*result, code int) error {
	if cfg.format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			SchemaVersion int            `json:"schemaVersion"`
			FailOn        audit.Severity `json:"failOn"`
			ExitCode      int            `json:"exitCode"`
			Audits        []*result      `json:"audits"`
		}{schemaVersion, cfg.failOn, code, results})
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
	// junitSuites has no skipped attribute: junit-10.xsd gives
	// testsuites none (each testsuite has one).
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Time     string       `xml:"time,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name       string          `xml:"name,attr"`
		Tests      int             `xml:"tests,attr"`
		Failures   int             `xml:"failures,attr"`
		Errors     int             `xml:"errors,attr"`
		Skipped    int             `xml:"skipped,attr"`
		Time       string          `xml:"time,attr"`
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
		Time      string        `xml:"time,attr"`
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
// server, a transport and a version: "server transport version"), a test
// case per rule, of class "mcpaudit.server.transport.version". A case
// fails if the rule has a finding at or above failOn that is not waived,
// is skipped if the rule was not checked (not reached, when the audit
// ended early or could not begin), and passes otherwise; the findings
// below failOn, and the waived ones, are its system-out. Its time is that
// of the checks that judged it. An audit that could not be made has a
// case "audit" in error besides.
func junit(results []*result, failOn audit.Severity) *junitSuites {
	all := &junitSuites{Name: "mcpaudit"}
	var total float64
	for _, r := range results {
		version := r.Asked
		if r.Report != nil && r.Report.Protocol != "" {
			version = r.Report.Protocol
		}
		s := junitSuite{Name: strings.Join(strings.Fields(r.Server+" "+r.Transport+" "+version), " "), Time: seconds(r.Seconds)}
		class := "mcpaudit." + classPart(r.Server) + "." + r.Transport
		if version != "" {
			class += "." + version
		}
		s.Properties = append(s.Properties, junitProperty{"server", r.Server}, junitProperty{"target", r.Target})
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
			s.Cases = append(s.Cases, junitCase{Name: "audit", Classname: class, Time: seconds(r.Seconds),
				Error: &junitMessage{Message: "the audit could not be made", Text: r.Error}})
			s.Errors++
		}
		report := r.Report
		if report == nil {
			// Not one rule was reached.
			report = &audit.Report{Unchecked: map[string]string{}}
			for _, rule := range audit.Rules() {
				report.Unchecked[rule.ID] = "not reached: the audit could not begin: " + r.Error
			}
		}
		for _, rule := range audit.Rules() {
			c := ruleCase(report, rule, failOn)
			c.Classname = class
			switch {
			case c.Failure != nil:
				s.Failures++
			case c.Skipped != nil:
				s.Skipped++
			}
			s.Cases = append(s.Cases, c)
		}
		s.Tests = len(s.Cases)
		all.Tests += s.Tests
		all.Failures += s.Failures
		all.Errors += s.Errors
		total += r.Seconds
		all.Suites = append(all.Suites, s)
	}
	all.Time = seconds(total)
	return all
}

// seconds writes a duration in seconds as JUnit's time attribute does.
func seconds(s float64) string { return strconv.FormatFloat(s, 'f', 3, 64) }

// classPart returns name as one part of a dotted class name: its dots
// and white space are underscores.
func classPart(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' || unicode.IsSpace(r) {
			return '_'
		}
		return r
	}, name)
}

// ruleCase returns the test case of rule in report.
func ruleCase(report *audit.Report, rule audit.Rule, failOn audit.Severity) junitCase {
	c := junitCase{Name: rule.ID, Time: seconds(report.Took[rule.ID].Seconds())}
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
