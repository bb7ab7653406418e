// Package protocol spells the words of the Model Context Protocol that
// mcpres sends, reads and switches on: protocol versions, method and
// notification names, HTTP headers, and the error codes the library sends
// itself. Each is written here once; the rest of the repository names the
// constant.
//
// Each constant quotes the specification version that defines it. The
// constants are untyped: they go to go-sdk and to exported fields
// (resource.Call.Method) as they are.
package protocol

// Protocol versions, as a client names them in initialize or in the
// Mcp-Protocol-Version header. Versions are dates (YYYY-MM-DD), so two of
// them compare as strings: version >= Version20260728 is "2026-07-28 or
// later".
const (
	// Version20250618 is specification 2025-06-18.
	Version20250618 = "2025-06-18"
	// Version20251125 is specification 2025-11-25.
	Version20251125 = "2025-11-25"
	// Version20260728 is specification 2026-07-28.
	Version20260728 = "2026-07-28"
)

// The first versions of behaviours that depend on the version.
const (
	// SessionlessSince is the first version whose clients need no session
	// (2026-07-28, SEP-2575): a subscription is a subscriptions/listen
	// stream, and results carry caching hints (SEP-2549).
	SessionlessSince = Version20260728
	// NotFoundInvalidParamsSince is the first version that answers an
	// unknown resource with -32602 Invalid params rather than -32002
	// (2026-07-28, SEP-2164).
	NotFoundInvalidParamsSince = Version20260728
	// CancelByClosingSince is the first version whose client, over
	// streamable HTTP, cancels a request by closing its response stream:
	// "closing the SSE response stream is itself the cancellation signal
	// and no notifications/cancelled message is expected" (2026-07-28,
	// transports).
	CancelByClosingSince = Version20260728
)

// HTTP headers of the streamable HTTP transport.
const (
	// HeaderProtocolVersion carries the client's protocol version on every
	// request after initialize (2025-06-18, transports) and on every request
	// from 2026-07-28.
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	// HeaderMethod carries the JSON-RPC method of the request (2026-07-28,
	// transports).
	HeaderMethod = "Mcp-Method"
	// HeaderSessionID carries the session a stateful server assigned in
	// its answer to initialize, on every later request of that session
	// (2025-06-18 and 2025-11-25, transports, "Session Management").
	HeaderSessionID = "Mcp-Session-Id"
	// HeaderName carries params.name of tools/call and prompts/get, and
	// params.uri of resources/read, in Base64 as "=?base64?…?=" if it is
	// not plain ASCII (2026-07-28, transports).
	HeaderName = "Mcp-Name"
)

// JSON-RPC error codes the specification defines, that the library
// sends itself rather than leave to go-sdk.
const (
	// CodeHeaderMismatch is HeaderMismatch, answered with 400 Bad Request:
	// "The HTTP headers do not match the corresponding values in the
	// request body, or required headers are missing/malformed."
	// (2026-07-28, transports, Server Validation).
	CodeHeaderMismatch = -32020
)

// Request methods.
const (
	// MethodInitialize opens a session (lifecycle, before 2026-07-28).
	MethodInitialize = "initialize"
	// MethodListResources lists resources (resources, since 2024-11-05).
	MethodListResources = "resources/list"
	// MethodListTemplates lists resource templates (resources, since
	// 2024-11-05).
	MethodListTemplates = "resources/templates/list"
	// MethodRead reads a resource (resources, since 2024-11-05).
	MethodRead = "resources/read"
	// MethodSubscribe subscribes to a resource's updates (resources,
	// 2024-11-05 to 2025-11-25).
	MethodSubscribe = "resources/subscribe"
	// MethodUnsubscribe ends a resources/subscribe (resources, 2024-11-05
	// to 2025-11-25).
	MethodUnsubscribe = "resources/unsubscribe"
	// MethodListen opens a stream of the notifications a client subscribes
	// to; it replaces resources/subscribe from 2026-07-28.
	MethodListen = "subscriptions/listen"
	// MethodComplete asks for completions of a template's argument
	// (utilities, completion, since 2025-03-26).
	MethodComplete = "completion/complete"
)

// Notification methods.
const (
	// NotificationResourceUpdated tells a subscriber that a resource
	// changed (resources, since 2024-11-05).
	NotificationResourceUpdated = "notifications/resources/updated"
	// NotificationListChanged tells a client that the list of resources
	// changed (resources, since 2024-11-05).
	NotificationListChanged = "notifications/resources/list_changed"
	// NotificationSubscriptionsAcknowledged is the first message of a
	// subscriptions/listen stream (2026-07-28).
	NotificationSubscriptionsAcknowledged = "notifications/subscriptions/acknowledged"
	// NotificationCancelled cancels a request the sender made (utilities,
	// cancellation, since 2024-11-05). Over streamable HTTP from
	// 2026-07-28 a client sends none: see CancelByClosingSince.
	NotificationCancelled = "notifications/cancelled"
	// NotificationProgress reports a request's progress (utilities,
	// progress, since 2024-11-05).
	NotificationProgress = "notifications/progress"
)
