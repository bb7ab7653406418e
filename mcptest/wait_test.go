package mcptest_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpres/mcpres/mcptest"
)

// Await returns a value sent before WaitTimeout, and gives up exactly at
// WaitTimeout, on synctest's clock.
func TestAwait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := make(chan int, 1)
		go func() {
			time.Sleep(mcptest.WaitTimeout - time.Nanosecond) // fake clock
			c <- 7
		}()
		start := time.Now()
		if v, ok := mcptest.Await(c); !ok || v != 7 {
			t.Errorf("Await = %d, %v; want 7, true", v, ok)
		}
		if _, ok := mcptest.Await(c); ok {
			t.Error("Await of an empty channel reported a value")
		}
		if got, want := time.Since(start), 2*mcptest.WaitTimeout-time.Nanosecond; got != want {
			t.Errorf("waited %v; want %v", got, want)
		}
	})
}
