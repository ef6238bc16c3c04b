// Package apptest drives an app's tools in tests the way a host would, without a
// connection: requests go through App.Handle, and responses are decoded with the strict
// codec, compressed payloads inflated and ASFT frames checked and reassembled.
//
// It is for testing tools: the SDK's own UI toolkit and the demo app use it, and so can
// any app that registers tools.
package apptest
