// Package durtext writes a duration the way people read it (25s, 1.5s, 250ms, 10m, 1h30m):
// the one spelling of the host's limits in its messages and the CLI's hints.
package durtext
