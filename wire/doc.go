// Package wire holds the Ansight Remote Tool Protocol on the wire: the envelope, every
// request and response payload, the error codes and the [Error] type, the strict JSON
// codec that all protocol input goes through, the gzip-base64-json payload wrapper and the
// ASFT binary frame codec.
//
// The package has no goroutines and no I/O beyond byte slices; transports, the SDK and the
// host build on it.
package wire
