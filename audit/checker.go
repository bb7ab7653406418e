package audit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A checker is one audit under way: the session, what the listing found
// for later steps, and the report.
type checker struct {
	ctx    context.Context
	cs     *mcp.ClientSession
	opts   Options
	report *Report

	resources []*mcp.Resource         // every resource listed, in list order
	templates []*mcp.ResourceTemplate // every template listed
	badURIs   map[string]bool         // listed URIs that are not URIs (list.uri)
	errors    []answered              // every error the server answered
	once      map[string]bool         // the rules and targets failOnce has recorded
}

// An answered is an error the server answered with.
type answered struct {
	code           int64
	message        string
	method, target string
}

// A step is one group of checks, and the rules whose checks it
// completes. Its run records what the server does wrong with c.fail, and
// returns an error only if the session itself fails (or an option's
// change does): the rules of that step and the later ones are then not
// reached.
type step struct {
	run   func(c *checker) error
	rules []Rule
}

// steps are run in order: the listings first, since later steps use what
// they found. Every rule is a rule of one step.
var steps = []step{
	{checkLists, []Rule{ruleListEnds, ruleListNoRepeats, ruleListStable, ruleListURI, ruleListURICredentials, ruleListName, ruleListURITemplate,
		ruleCursorInvalid, ruleCursorForgeable, ruleCursorOpaque, ruleCacheSameScope}},
	// The caching hints of the lists and of the reads.
	{checkReads, []Rule{ruleReadListed, ruleReadContents, ruleReadContentURI, ruleReadSingleURI, ruleReadContentType, ruleReadBlobEncoding,
		ruleReadOneOf, ruleReadTrueType, ruleReadTextAsText, ruleReadAgrees, ruleCachePresent, ruleCacheHints}},
	{checkNotFound, []Rule{ruleNotFoundError, ruleNotFoundCode, ruleNotFoundData, ruleReadMalformed, ruleMalformedURI}},
	{checkTemplates, []Rule{ruleTemplateSyntax, ruleCompleteMax, ruleCompleteTotal, ruleCompleteHasMore, ruleCompleteUnknown}},
	// Before the subscriptions: when any subscriptions/listen of a
	// 2026-07-28 session ends (as the check of delivery ends its own),
	// go-sdk v1.8's server forgets the session's listen for list
	// changes too.
	{checkListChanged, []Rule{ruleListChanged}},
	{checkSubscriptions, []Rule{ruleSubscribeDelivers, ruleSubscribeSilent}},
	{checkErrorCodes, []Rule{ruleReservedCode}},
}

// unreached records, after the audit ended with err before the steps
// left, that their rules were not checked: each rule of theirs that is
// neither unchecked already nor broken is unchecked, "not reached".
func (c *checker) unreached(left []step, err error) {
	reason := "not reached: the audit ended first: " + err.Error()
	c.report.Skipped = append(c.report.Skipped, reason)
	for _, s := range left {
		for _, r := range s.rules {
			_, unchecked := c.report.Unchecked[r.ID]
			if !unchecked && !slices.ContainsFunc(c.report.Findings, func(f Finding) bool { return f.Rule.ID == r.ID }) {
				c.report.Unchecked[r.ID] = reason
			}
		}
	}
}

// fail records that the server broke rule at target (a URI, a template or
// a method), having seen what format says, judged by the rule's clause
// for the report's version and target. A rule that is not a rule of that
// version records nothing.
func (c *checker) fail(rule Rule, target, format string, args ...any) {
	cl, ok := rule.clause(c.report.JudgedBy, target)
	if !ok {
		return
	}
	f := Finding{Rule: rule, Severity: cl.Severity, Clause: cl, Target: target, Seen: fmt.Sprintf(format, args...)}
	if reason, ok := c.opts.Waive[rule.ID]; ok {
		f.Waived = reason
	}
	c.report.Findings = append(c.report.Findings, f)
}

// skip records that a check was not made, and why: the reason in
// Report.Skipped, and against each rule it would have checked (that is
// not already unchecked) in Report.Unchecked.
func (c *checker) skip(reason string, rules ...Rule) {
	c.report.Skipped = append(c.report.Skipped, reason)
	for _, r := range rules {
		if _, ok := c.report.Unchecked[r.ID]; !ok {
			c.report.Unchecked[r.ID] = reason
		}
	}
}

// answer returns err's JSON-RPC error, if it is one (an answer from the
// server, not a failure of the session), and notes its code for the
// check of error codes (checkErrorCodes), as the answer to method about
// target.
func (c *checker) answer(err error, method, target string) (*jsonrpc.Error, bool) {
	e, ok := rpcError(err)
	if ok {
		c.errors = append(c.errors, answered{code: e.Code, message: e.Message, method: method, target: target})
	}
	return e, ok
}

// capabilities returns the server's resource capabilities; nil if it
// advertises none.
func (c *checker) capabilities() *mcp.ResourceCapabilities {
	caps := c.cs.InitializeResult().Capabilities
	if caps == nil {
		return nil
	}
	return caps.Resources
}

// protocolAtLeast reports whether the negotiated version is v or later
// (versions are dates, and sort as strings).
func (c *checker) protocolAtLeast(v string) bool { return c.report.Protocol >= v }

// judgedAt reports whether the report is judged by the words of version v.
func (c *checker) judgedAt(v string) bool { return c.report.JudgedBy == v }

// rpcError returns err's JSON-RPC error, if it is one (an answer from the
// server, not a failure of the session).
func rpcError(err error) (*jsonrpc.Error, bool) {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// sessionFailed reports whether err means the session cannot go on (the
// connection closed, the context ended), rather than an error answer.
func (c *checker) sessionFailed(err error) bool {
	if err == nil {
		return false
	}
	if _, ok := rpcError(err); ok {
		return false
	}
	// go-sdk gives a call in flight when its connection dies the reader's
	// own error: io.EOF over stdio, ErrSessionMissing over HTTP.
	return c.ctx.Err() != nil || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionMissing) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// mediaType returns the type/subtype of a MIME type, lower case, without
// parameters.
func mediaType(t string) string {
	t, _, _ = strings.Cut(t, ";")
	return strings.ToLower(strings.TrimSpace(t))
}
