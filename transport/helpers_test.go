package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
)

func mustWrite(t *testing.T, c Conn, typ MessageType, data []byte) {
	t.Helper()
	if err := c.Write(context.Background(), typ, data); err != nil {
		t.Fatalf("Write(%v, %d bytes): %v", typ, len(data), err)
	}
}

func mustRead(t *testing.T, c Conn, wantType MessageType, want []byte) {
	t.Helper()
	typ, got, err := c.Read(context.Background())
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if typ != wantType || !bytes.Equal(got, want) {
		t.Fatalf("Read = %v %q, want %v %q", typ, abbrev(got), wantType, abbrev(want))
	}
}

func abbrev(b []byte) string {
	if len(b) > 40 {
		return fmt.Sprintf("%s…(%d bytes)", b[:40], len(b))
	}
	return string(b)
}

// wantClose reads from c until an error and checks it is a *CloseError with code (and reason,
// when reason is not "*").
func wantClose(t *testing.T, c Conn, code StatusCode, reason string) {
	t.Helper()
	_, _, err := c.Read(context.Background())
	checkCloseError(t, err, code, reason)
}

func checkCloseError(t *testing.T, err error, code StatusCode, reason string) {
	t.Helper()
	ce, ok := errors.AsType[*CloseError](err)
	if !ok {
		t.Fatalf("error = %v, want *CloseError %d", err, code)
	}
	if ce.Code != code || (reason != "*" && ce.Reason != reason) {
		t.Fatalf("error = %+v, want code %d reason %q", ce, code, reason)
	}
}

// writeAsync writes in the background; the returned channel yields Write's error.
func writeAsync(c Conn, typ MessageType, data []byte) <-chan error {
	errc := make(chan error, 1)
	go func() { errc <- c.Write(context.Background(), typ, data) }()
	return errc
}
