package mcptest_test

import (
	"testing"
	"testing/synctest"

	"github.com/mcpres/mcpres/mcptest"
)

func TestBubbleGoroutines(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		base := mcptest.BubbleGoroutines(t)
		release := make(chan struct{})
		for range 3 {
			go func() { <-release }()
		}
		synctest.Wait()
		if got := mcptest.BubbleGoroutines(t); got != base+3 {
			t.Errorf("with 3 more goroutines: %d, want %d", got, base+3)
		}
		close(release)
		synctest.Wait()
		if got := mcptest.BubbleGoroutines(t); got != base {
			t.Errorf("after they end: %d, want %d", got, base)
		}
	})
}
