//go:build race

package resource_test

// raceEnabled reports whether the race detector is on: it makes sync.Pool
// drop items at random, so pooled buffers (the cursor codec's) are
// sometimes allocated anew and allocation counts are not meaningful.
const raceEnabled = true
