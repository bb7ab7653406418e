package mcptest

import (
	"testing"
	"time"
)

// Await waits for a value from c, the event a test waits for (a
// notification, an acknowledgment, a handler's return), and returns it.
// It reports false if none came within WaitTimeout: that is a bound that
// only a broken server reaches, so that its test fails rather than hangs,
// not a time anything is expected to take. It may be called from any
// goroutine.
func Await[T any](c <-chan T) (v T, ok bool) {
	timer := time.NewTimer(WaitTimeout)
	defer timer.Stop()
	select {
	case v = <-c:
		return v, true
	case <-timer.C:
		return v, false
	}
}

// Receive is Await for the test's own goroutine: it fails t, naming what
// it waited for, if no value came within WaitTimeout.
func Receive[T any](t testing.TB, c <-chan T, what string) T {
	t.Helper()
	v, ok := Await(c)
	if !ok {
		t.Fatalf("mcptest: no %s within %v", what, WaitTimeout)
	}
	return v
}
