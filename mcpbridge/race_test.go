//go:build race

package mcpbridge

// raceEnabled skips allocation counts, which the race detector inflates.
const raceEnabled = true
