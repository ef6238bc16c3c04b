// Package notestest helps tests and tools that drive the demo notes app (package notes):
// the scenario that tells the conformance suite how to exercise the app's optional
// behaviours. It is a package of its own so that the app, and every program embedding it,
// links no conformance suite.
package notestest
