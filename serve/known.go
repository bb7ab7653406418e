package serve

// This file holds what the body check asks of the session gate: whether
// a session ID is one it holds.

// known reports whether the gate holds session id: one the handler
// opened through the edge, and that has not ended since.
func (g *sessionGate) known(id string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.sessions[id]
	return ok
}
