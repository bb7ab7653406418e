// Package audit checks an MCP server's resources over the real protocol,
// as a host would meet them, against the rules of the MCP specification:
// that listing pages end and repeat nothing, that cursors are opaque and a
// forged one is refused, that every listed URI is a valid URI, that each
// read returns what its MIME type says, that an unknown resource is
// answered as the negotiated protocol version requires, that templates are
// valid RFC 6570 and their completions honest, that subscribed changes
// and list changes are told, that 2026-07-28's caching hints are given,
// in range and the same across the pages of a list, and that no error
// code is one the version reserves.
//
// A method the server does not implement (-32601) is no finding, unless
// a clause of the version requires it: the checks that need it are
// skipped, saying why. Over streamable HTTP, the go-sdk client of an
// audit should use HTTPTransport, so that at 2026-07-28 it ends a request
// by closing its stream alone, as that version's transport says.
//
// Every rule quotes the words of the specification it is judged by, per
// version (Rule.Clauses), and takes its severity from them: MUST where
// they say MUST (or the schema requires or bounds the field), SHOULD
// where they say SHOULD, ADVICE where they describe the protocol without
// requiring anything. A session is judged by the words of the version it
// negotiated (Report.JudgedBy).
//
// Run audits a server through a connected client session: a server in the
// same process (mcptest.Connect), a binary over stdio, or a URL over
// streamable HTTP. It works with a server written in any language. The
// Report lists every rule broken, with the URI, the rule, the clause it is
// judged by and what was seen; a rule may be waived with a reason.
// mcptest.Audit runs it in a test and fails the test on every MUST and
// SHOULD violation; the mcpaudit command runs it from a shell.
package audit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults and special values for Options.
const (
	// DefaultReads is how many listed resources Run reads when
	// Options.Reads is zero.
	DefaultReads = 100
	// AllReads as Options.Reads reads every listed resource.
	AllReads = math.MaxInt
	// DefaultWait is how long Run waits for a notification when
	// Options.Wait is zero.
	DefaultWait = 5 * time.Second
)

// Options configures Run. The zero value audits with every default: it
// reads the first DefaultReads listed resources, and checks the delivery
// of notifications only if Updates and Change (or ChangeList) are set.
type Options struct {
	// Reads is how many of the listed resources are read, in list order.
	// Zero means DefaultReads; AllReads reads them all. Negative is an
	// error.
	Reads int
	// Waive names rules (by Rule.ID) not to count as violations, each
	// with the reason: a waived finding is still reported, marked as such.
	// A name that is no rule's is an error (but one of Withdrawn, which
	// waives nothing).
	Waive map[string]string
	// Updates, if set, collects the notifications/resources/updated and
	// notifications/resources/list_changed the audited session receives
	// (set Updates.Handle as the client's ResourceUpdatedHandler and
	// Updates.HandleListChanged as its ResourceListChangedHandler). With
	// Change, it lets Run check that a subscribed change arrives and an
	// unsubscribed one does not; with ChangeList, that a change to the
	// list is told.
	Updates *Updates
	// Change, if set, makes the server change the resource at uri (by
	// whatever means the server offers: a write to its database, a file,
	// an admin call, a tool). Run calls it for the resource it subscribed
	// to (ChangeURI, or the first listed), again every 200 ms until the
	// update arrives or Wait has passed (a subscription may take effect a
	// moment after it is answered), and up to twice after unsubscribing:
	// so it should make a change each time it is called, and be safe to
	// call again. An error from it ends Run, which returns it with the
	// report so far.
	Change func(ctx context.Context, uri string) error
	// ChangeURI is the resource Change changes; empty means the first
	// listed resource.
	ChangeURI string
	// ChangeList, if set, makes the server change its list of resources
	// (add one, or remove one). Run calls it last, if the server
	// advertises listChanged, again every 200 ms until a
	// notifications/resources/list_changed arrives or Wait has passed. An
	// error from it ends Run, which returns it with the report so far.
	ChangeList func(ctx context.Context) error
	// Wait is how long Run waits for a notification after Change or
	// ChangeList, and for an answer to resources/subscribe. Zero means
	// DefaultWait. Negative is an error.
	Wait time.Duration
	// Subscribe is no longer used: it served the check that a
	// subscription to nothing is refused, which no version of the
	// specification asks for (see Withdrawn).
	//
	// Deprecated: Run ignores it.
	Subscribe func(ctx context.Context, uri string) error
}

// Run audits the server at the other end of cs, at the protocol version
// cs negotiated, and returns the report. It returns an error, and no
// report, for options it refuses; and an error with the report so far if
// the session fails (it cannot talk to the server at all), ctx ends, or
// Options.Change or Options.ChangeList fails: the rules it did not reach
// are then in Report.Unchecked, "not reached". Everything the server
// answers wrongly is a Finding in the report, not an error.
func Run(ctx context.Context, cs *mcp.ClientSession, opts *Options) (*Report, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	c := &checker{
		ctx:  ctx,
		cs:   cs,
		opts: o,
		report: &Report{
			Protocol:  cs.InitializeResult().ProtocolVersion,
			Server:    serverName(cs),
			Unchecked: map[string]string{},
			Findings:  []Finding{},
			Took:      map[string]time.Duration{},
		},
	}
	c.report.JudgedBy = judgedBy(c.report.Protocol)
	for _, r := range rules {
		if r.Severity(c.report.JudgedBy) == 0 {
			c.report.Unchecked[r.ID] = "not a rule of protocol " + c.report.JudgedBy
		}
	}
	for i, s := range steps {
		err := ctx.Err()
		if err == nil {
			start := time.Now()
			err = s.run(c)
			for _, r := range s.rules {
				c.report.Took[r.ID] += time.Since(start)
			}
		}
		if err != nil {
			c.unreached(steps[i:], err)
			return c.report, err
		}
	}
	return c.report, nil
}

// check refuses options Run would have to guess at, and fills in the
// defaults.
func (o *Options) check() error {
	var errs []error
	if o.Reads < 0 {
		errs = append(errs, fmt.Errorf("audit: negative Reads %d (AllReads reads every resource)", o.Reads))
	}
	if o.Wait < 0 {
		errs = append(errs, fmt.Errorf("audit: negative Wait %v", o.Wait))
	}
	for id, reason := range o.Waive {
		if _, ok := rulesByID[id]; !ok && withdrawn[id] == "" {
			errs = append(errs, fmt.Errorf("audit: Waive names no rule: %q", id))
		} else if reason == "" {
			errs = append(errs, fmt.Errorf("audit: Waive %q gives no reason", id))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if o.Reads == 0 {
		o.Reads = DefaultReads
	}
	if o.Wait == 0 {
		o.Wait = DefaultWait
	}
	return nil
}

func serverName(cs *mcp.ClientSession) string {
	if info := cs.InitializeResult().ServerInfo; info != nil {
		return info.Name
	}
	return ""
}
