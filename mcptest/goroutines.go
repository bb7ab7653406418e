package mcptest

import (
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// BubbleGoroutines returns the number of goroutines in the caller's
// testing/synctest bubble, the caller included, for a test that checks
// its server leaves nothing running: take it at the start of the bubble
// and again once everything is closed and synctest.Wait has returned.
// Goroutines outside the bubble (other tests', the testing package's)
// are not counted: they come and go as they please, which makes
// runtime.NumGoroutine unfit for an exact count. It fails t if the
// caller is not in a bubble.
//
// It reads the headers of a dump of every goroutine's stack, in which the
// runtime names a goroutine's bubble: "goroutine 7 [chan receive
// (durable), synctest bubble 1]:".
func BubbleGoroutines(t testing.TB) int {
	t.Helper()
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	bubbleOf := func(header string) string {
		m := bubbleHeader.FindStringSubmatch(header)
		if m == nil {
			return ""
		}
		return m[1]
	}
	headers := strings.Split(string(buf), "\n\n") // the caller's first
	own := bubbleOf(headers[0])
	if own == "" {
		t.Fatalf("mcptest.BubbleGoroutines: not in a synctest bubble: %q", strings.SplitN(headers[0], "\n", 2)[0])
	}
	n := 0
	for _, h := range headers {
		if bubbleOf(h) == own {
			n++
		}
	}
	return n
}

// bubbleHeader matches the header of a goroutine's stack dump and takes
// its bubble's id.
var bubbleHeader = regexp.MustCompile(`\Agoroutine \d+ \[[^\n]*, synctest bubble (\d+)\b`)
