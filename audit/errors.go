package audit

import (
	"fmt"
	"slices"
	"strings"
)

// The rule of error codes.
var ruleReservedCode = newRule("error.reserved-code",
	`every error the server answered the audit with (to a list, a read, a completion, a subscription) has a code the version allows: at 2026-07-28 none of -32020 to -32099 but the codes defined there (-32020 HeaderMismatch, -32021 MissingRequiredClientCapability, -32022 UnsupportedProtocolVersion, which the audit's requests do not call for), and neither -32002 nor -32042. One finding per code`,
	clause(sinceListen, Must, "basic/index, Messages, Error Codes",
		"Implementations MUST NOT emit any code from this sub-range that is not defined by this specification and MUST use defined codes only with their specified meanings. … Implementations of this protocol version MUST NOT emit these codes: -32002 … -32042"))

// Codes of 2026-07-28.
const (
	reservedFirst, reservedLast = -32099, -32020 // the sub-range reserved for the specification
	codeURLElicitationRequired  = -32042         // 2025-11-25 only
)

// checkErrorCodes checks the code of every error the server answered the
// audit with against the codes the report's version allows.
func checkErrorCodes(c *checker) error {
	if c.report.Unchecked[ruleReservedCode.ID] != "" {
		return nil
	}
	var order []int64
	seen := map[int64][]string{}
	for _, a := range c.errors {
		if why := reserved(a.code); why != "" {
			if _, ok := seen[a.code]; !ok {
				order = append(order, a.code)
			}
			seen[a.code] = append(seen[a.code], fmt.Sprintf("%s %s (%s)", a.method, a.target, a.message))
		}
	}
	for _, code := range order {
		answers := slices.Compact(seen[code])
		const few = 3
		more := ""
		if len(answers) > few {
			more = fmt.Sprintf(" and %d more", len(answers)-few)
		}
		c.fail(ruleReservedCode, fmt.Sprint(code), "%s; answered to %s%s", reserved(code), strings.Join(answers[:min(len(answers), few)], "; "), more)
	}
	return nil
}

// reservedHere reports whether code is one the report's version
// forbids, which error.reserved-code reports rather than the rule of the
// request it answered: one behaviour, one finding.
func (c *checker) reservedHere(code int64) bool {
	return c.report.Unchecked[ruleReservedCode.ID] == "" && reserved(code) != ""
}

// reserved says why 2026-07-28 forbids code, or returns "".
func reserved(code int64) string {
	switch {
	case code == codeResourceNotFound:
		return "-32002 was resource not found up to 2025-11-25, and 2026-07-28 forbids it (a resource not found is -32602)"
	case code == codeURLElicitationRequired:
		return "-32042 was URL elicitation required at 2025-11-25 only, and 2026-07-28 forbids it"
	case code >= reservedFirst && code <= reservedLast && (code < -32022 || code > -32020):
		return fmt.Sprintf("%d is in -32020 to -32099, reserved for codes the specification defines, and it defines no %d", code, code)
	}
	return ""
}
