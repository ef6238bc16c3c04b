//go:build !race

package mcpbridge

const raceEnabled = false
