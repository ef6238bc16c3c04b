//go:build !linux

package recording

// lowerWriterPriority leaves the writer's priority as it is: only Linux gives a thread
// its own nice value (see priority_linux.go).
func lowerWriterPriority() {}
