// Package bpool recycles byte buffers, so that a hot path does not allocate one each time.
// A writer gets a buffer, appends a message to it, hands it to a connection (whose Write does
// not keep it) and puts it back; a pool of one size (initial = max) serves fixed-size read
// chunks and frames the same way.
package bpool
