package mcpgo

import (
	"context"
	"errors"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// A session is an mcp-go client session, or a 2026-07-28 listen stream on
// one, as the registry sees it (resource.Session): it sends
// resources/updated on the session's notification channel, which mcp-go's
// transport writes to the client (mcp-go behaviour 9).
type session struct {
	cs     server.ClientSession
	done   <-chan struct{}
	end    func() // closes done, once; nil for a listen stream
	listen any    // the listen request's ID; nil for a session

	mu      sync.Mutex
	version string // as initialize negotiated it; "" if unknown
}

// errEnded is the error of a notification to a session that has ended.
var errEnded = errors.New("mcpgo: session ended")

func newSession(cs server.ClientSession) *session {
	done := make(chan struct{})
	return &session{cs: cs, done: done, end: sync.OnceFunc(func() { close(done) })}
}

// ID is the mcp-go session's ID.
func (s *session) ID() string { return s.cs.SessionID() }

// Done is closed when mcp-go unregisters the session, or the listen
// request ends.
func (s *session) Done() <-chan struct{} { return s.done }

// Updated sends notifications/resources/updated of uri, with the listen's
// subscription ID for a listen stream. It waits for room on the session's
// channel until ctx ends or the session does.
func (s *session) Updated(ctx context.Context, uri string) error {
	n := mcp.JSONRPCNotification{
		JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{
			Method: mcp.MethodNotificationResourceUpdated,
			Params: mcp.NotificationParams{AdditionalFields: map[string]any{"uri": uri}},
		},
	}
	if s.listen != nil {
		n.Params.Meta = map[string]any{mcp.MetaKeySubscriptionID: s.listen}
	}
	if up, ok := s.cs.(server.SessionWithStreamableHTTPConfig); ok {
		up.UpgradeToSSEWhenReceiveNotification()
	}
	select {
	case s.cs.NotificationChannel() <- n:
		return nil
	case <-s.done:
		return errEnded
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *session) protocolVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

// registered records a session mcp-go registered: one it can send
// notifications to, until it unregisters it (mcp-go behaviour 10).
func (a *adapter) registered(_ context.Context, cs server.ClientSession) {
	a.sessions.LoadOrStore(cs, newSession(cs))
}

// unregistered ends the session: the registry forgets its subscriptions.
func (a *adapter) unregistered(_ context.Context, cs server.ClientSession) {
	if v, ok := a.sessions.LoadAndDelete(cs); ok {
		v.(*session).end()
	}
}

// initialized records the protocol version a registered session
// negotiated (stdio registers its session before initialize).
func (a *adapter) initialized(ctx context.Context, _ any, _ *mcp.InitializeRequest, res *mcp.InitializeResult) {
	cs := server.ClientSessionFromContext(ctx)
	if cs == nil || res == nil {
		return
	}
	if v, ok := a.sessions.Load(cs); ok {
		s := v.(*session)
		s.mu.Lock()
		s.version = res.ProtocolVersion
		s.mu.Unlock()
	}
}
