//go:build race

package catalog

// raceEnabled runs fewer of the heavier property checks: compression under the race
// detector is some thirty times slower.
const raceEnabled = true
