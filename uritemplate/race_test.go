//go:build race

package uritemplate_test

// raceEnabled reports whether the race detector is on. It slows the
// router's overlap checks, which TestRouterMany makes by the hundred
// thousand, about tenfold.
const raceEnabled = true
