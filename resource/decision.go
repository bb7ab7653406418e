package resource

// A Decision is what came of a call the registry answered. The access log
// writes it as the attribute "decision" (see AccessLogOptions), and the
// Observer is told it in Call.Decision. Its values are the constants below;
// as strings they are the words the records carry.
type Decision string

// The decisions of a call.
const (
	// DecisionAllowed: the call was answered.
	DecisionAllowed Decision = "allowed"
	// DecisionFiltered: a list or completion was answered without the
	// entries the Authorizer withheld.
	DecisionFiltered Decision = "filtered"
	// DecisionNotFound: the URI or template names nothing.
	DecisionNotFound Decision = "not_found"
	// DecisionDenied: the Authorizer said no. The client is answered as
	// for DecisionNotFound.
	DecisionDenied Decision = "denied"
	// DecisionInvalid: the client got the request wrong (a malformed URI,
	// or a subscription over the session's limit).
	DecisionInvalid Decision = "invalid"
	// DecisionLimited: the caller is over its Options.RateLimits budget.
	DecisionLimited Decision = "limited"
	// DecisionFailed: the server's own code failed.
	DecisionFailed Decision = "failed"
	// DecisionTooLarge: a read's result is over its cap (MaxReadBytes).
	DecisionTooLarge Decision = "too_large"
	// DecisionClosed: the registry is closed.
	DecisionClosed Decision = "closed"
)

// refused reports whether d is a refusal the access log writes at
// AccessLogOptions.DeniedLevel.
func (d Decision) refused() bool {
	return d == DecisionDenied || d == DecisionFiltered || d == DecisionLimited
}
