//go:build race

package schema

// raceEnabled skips allocation counts, which the race detector inflates.
const raceEnabled = true
