package wire

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"strings"
	"testing"
	"time"
)

const testTransferID = "0123456789abcdef0123456789abcdef"

func TestFrameRoundTrip(t *testing.T) {
	t.Parallel()
	for _, f := range []Frame{
		{Type: FrameChunk, TransferID: testTransferID, Sequence: 0, Offset: 0, Payload: []byte("hello")},
		{Type: FrameChunk, TransferID: testTransferID, Sequence: 7, Offset: 7 << 16, Payload: bytes.Repeat([]byte{0xff}, MaxChunkSize)},
		{Type: FrameComplete, TransferID: testTransferID, Sequence: 8, Offset: 1<<40 + 3},
		{Type: FrameError, TransferID: NewTransferID(), Sequence: 2, Offset: 10, Payload: []byte("disk full ✗")},
	} {
		msg, err := AppendFrame([]byte("x"), f)
		if err != nil {
			t.Fatal(err)
		}
		msg = msg[1:]
		if len(msg) != FrameHeaderSize+len(f.Payload) || !IsASFT(msg) || IsASJP(msg) {
			t.Fatalf("%v frame: %d bytes", f.Type, len(msg))
		}
		got, err := ParseFrame(msg)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Payload) == 0 {
			got.Payload = nil
		}
		if !reflect.DeepEqual(got, f) {
			t.Fatalf("round trip of %v frame: got %+v", f.Type, got)
		}
	}
}

func TestFrameLayout(t *testing.T) {
	t.Parallel()
	msg, err := AppendFrame(nil, Frame{Type: FrameChunk, TransferID: testTransferID, Sequence: 0x01020304, Offset: 0x0102030405060708, Payload: []byte{9}})
	if err != nil {
		t.Fatal(err)
	}
	want := []byte("ASFT\x01\x01\x00\x00" + testTransferID +
		"\x04\x03\x02\x01" + "\x08\x07\x06\x05\x04\x03\x02\x01" + "\x01\x00\x00\x00" + "\x09")
	if !bytes.Equal(msg, want) {
		t.Fatalf("got  %q\nwant %q", msg, want)
	}
}

func TestParseFrameErrors(t *testing.T) {
	t.Parallel()
	good, _ := AppendFrame(nil, Frame{Type: FrameChunk, TransferID: testTransferID, Sequence: 1, Offset: 2, Payload: []byte("abc")})
	mut := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	tests := []struct {
		name    string
		msg     []byte
		wantErr string
	}{
		{"short", good[:55], "shorter than the 56-byte header"},
		{"magic", mut(func(b []byte) []byte { b[3] = 'J'; return b }), "bad magic"},
		{"version", mut(func(b []byte) []byte { b[4] = 2; return b }), "version 2"},
		{"type 0", mut(func(b []byte) []byte { b[5] = 0; return b }), "frame type 0"},
		{"type 4", mut(func(b []byte) []byte { b[5] = 4; return b }), "frame type 4"},
		{"reserved", mut(func(b []byte) []byte { b[7] = 1; return b }), "reserved"},
		{"upper-case id", mut(func(b []byte) []byte { b[20] = 'A'; return b }), "transfer id"},
		{"non-hex id", mut(func(b []byte) []byte { b[8] = 'g'; return b }), "transfer id"},
		{"negative sequence", mut(func(b []byte) []byte { b[43] = 0x80; return b }), "negative ASFT sequence"},
		{"negative offset", mut(func(b []byte) []byte { b[51] = 0x80; return b }), "negative ASFT offset"},
		{"length too long", mut(func(b []byte) []byte { b[52] = 4; return b }), "does not match"},
		{"length too short", mut(func(b []byte) []byte { b[52] = 2; return b }), "does not match"},
		{"negative length", mut(func(b []byte) []byte { binary.LittleEndian.PutUint32(b[52:], 0xffffffff); return b }), "does not match"},
		{"trailing byte", append(bytes.Clone(good), 0), "does not match"},
		{"complete with payload", mut(func(b []byte) []byte { b[5] = byte(FrameComplete); return b }), "complete frame with a payload"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseFrame(tt.msg)
			checkErr(t, err, tt.wantErr)
		})
	}
}

func TestAppendFrameErrors(t *testing.T) {
	t.Parallel()
	for name, f := range map[string]Frame{
		"unknown type":          {Type: 9, TransferID: testTransferID},
		"short id":              {Type: FrameChunk, TransferID: "abc"},
		"upper-case id":         {Type: FrameChunk, TransferID: strings.ToUpper(testTransferID)},
		"negative sequence":     {Type: FrameChunk, TransferID: testTransferID, Sequence: -1},
		"negative offset":       {Type: FrameChunk, TransferID: testTransferID, Offset: -1},
		"complete with payload": {Type: FrameComplete, TransferID: testTransferID, Payload: []byte{1}},
		"chunk too large":       {Type: FrameChunk, TransferID: testTransferID, Payload: make([]byte, MaxChunkSize+1)},
	} {
		t.Run(name, func(t *testing.T) {
			if out, err := AppendFrame([]byte("keep"), f); err == nil || string(out) != "keep" {
				t.Errorf("got %d bytes, %v; want an error and dst unchanged", len(out), err)
			}
		})
	}
}

func TestNewTransferID(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 100 {
		id := NewTransferID()
		if !isTransferID(id) || seen[id] {
			t.Fatalf("NewTransferID = %q (seen before: %v)", id, seen[id])
		}
		seen[id] = true
	}
}

func TestFrameTypeString(t *testing.T) {
	t.Parallel()
	if FrameChunk.String() != "chunk" || FrameComplete.String() != "complete" || FrameError.String() != "error" || FrameType(9).String() != "FrameType(9)" {
		t.Fatal("FrameType.String")
	}
}

func TestASJP(t *testing.T) {
	t.Parallel()
	f := ASJPFrame{Format: ASJPFormatJPEG, Quality: 80, Flags: ASJPFlagKeyboardKnown | ASJPFlagKeyboardVisible,
		CapturedAt: time.UnixMilli(1_787_000_000_123).UTC(), Width: 1080, Height: 2400, JPEG: []byte{0xff, 0xd8, 0xff, 0xd9}}
	msg, err := AppendASJP(nil, f)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]byte("ASJP\x01\x01\x50\x03"), 0x7b, 0x0e, 0x80, 0x11, 0xa0, 0x01, 0, 0, 0x38, 0x04, 0, 0, 0x60, 0x09, 0, 0, 4, 0, 0, 0, 0xff, 0xd8, 0xff, 0xd9)
	if !bytes.Equal(msg, want) || !IsASJP(msg) || IsASFT(msg) {
		t.Fatalf("got  % x\nwant % x", msg, want)
	}
	got, err := ParseASJP(msg)
	if err != nil || !reflect.DeepEqual(got, f) {
		t.Fatalf("ParseASJP = %+v, %v", got, err)
	}
	if v, k := got.KeyboardVisible(); !v || !k {
		t.Fatal("keyboard flags")
	}

	for name, tt := range map[string]struct {
		msg     []byte
		wantErr string
	}{
		"short":          {msg[:27], "shorter"},
		"magic":          {append([]byte("ASFT"), msg[4:]...), "bad magic"},
		"version":        {append([]byte("ASJP\x02"), msg[5:]...), "version 2"},
		"length":         {msg[:len(msg)-1], "does not match"},
		"negative width": {append(append(bytes.Clone(msg[:16]), 0, 0, 0, 0x80), msg[20:]...), "negative"},
	} {
		_, err := ParseASJP(tt.msg)
		t.Run(name, func(t *testing.T) { checkErr(t, err, tt.wantErr) })
	}
}
