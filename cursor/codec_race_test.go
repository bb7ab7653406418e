//go:build race

package cursor

// raceEnabled reports whether the race detector is on: it makes sync.Pool
// drop items at random, so that allocation counts are not meaningful, and
// slows TestMutations down tenfold.
const raceEnabled = true
