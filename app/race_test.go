//go:build race

package app

// raceEnabled skips allocation counts, which the race detector inflates.
const raceEnabled = true
