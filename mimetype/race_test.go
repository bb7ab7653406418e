//go:build race

package mimetype

// raceEnabled reports whether the race detector is on: it makes sync.Pool
// drop items at random, so pooled buffers (encoding/json's scanner) are
// sometimes allocated anew and allocation counts are not meaningful.
const raceEnabled = true
