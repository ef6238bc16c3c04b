//go:build !(linux || darwin)

package host

// raiseFileLimit knows no limit here.
func raiseFileLimit(uint64) FileLimit { return FileLimit{} }
