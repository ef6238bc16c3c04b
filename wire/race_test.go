//go:build race

package wire

// raceEnabled skips allocation counts, which the race detector inflates.
const raceEnabled = true
