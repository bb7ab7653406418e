package natsbus_test

import (
	"os"
	"testing"

	"github.com/mcpres/mcpres/natsbus/natstest"
)

// TestMain runs the tests, or, when natstest starts the test binary as
// one, a NATS server (process_test.go).
func TestMain(m *testing.M) {
	natstest.ServeIfAsked()
	os.Exit(m.Run())
}
