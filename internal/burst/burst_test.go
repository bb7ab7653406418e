package burst_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpres/mcpres/internal/burst"
	"github.com/stretchr/testify/assert"
)

func TestOneLinePerBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c burst.Counter
		begins := 0
		var unreported []int
		refuse := func(kind string) {
			if ok, n := c.Refused(kind, time.Now()); ok {
				begins++
				unreported = append(unreported, n)
			}
		}
		// A burst of 100 refusals a second apart: one line.
		for range 100 {
			refuse("sessions")
			time.Sleep(time.Second)
		}
		assert.Equal(t, 1, begins)
		// Another kind begins its own burst.
		refuse("listens")
		assert.Equal(t, 2, begins)
		// A spell of exactly DefaultQuiet ends the burst; the next line
		// counts the 99 not reported.
		time.Sleep(burst.DefaultQuiet - time.Second)
		refuse("sessions")
		assert.Equal(t, 3, begins)
		assert.Equal(t, []int{0, 0, 99}, unreported)
		// Just under the quiet spell stays in the burst.
		time.Sleep(burst.DefaultQuiet - time.Nanosecond)
		refuse("sessions")
		assert.Equal(t, 3, begins)
	})
}

func TestQuiet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := burst.Counter{Quiet: time.Minute}
		c.Refused("k", time.Now())
		time.Sleep(59 * time.Second)
		ok, _ := c.Refused("k", time.Now())
		assert.False(t, ok)
		time.Sleep(time.Minute)
		ok, n := c.Refused("k", time.Now())
		assert.True(t, ok)
		assert.Equal(t, 1, n)
	})
}
