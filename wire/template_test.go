package wire

import (
	"bytes"
	stdgzip "compress/gzip"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// templateParts splits a big catalog like a catalog answer: a head, a time in the middle,
// a short tail.
func templateParts(n int) (head, tail []byte) {
	body := bigCatalog(n)
	return append(body[:len(body)-1:len(body)-1], `,"evaluatedAtUtc":`...), []byte(`,"totalCount":3,"categories":{"app":3}}`)
}

// randomText is n letters that do not compress much.
func randomText(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + r.IntN(26))
	}
	return b
}

func stamp(i int) []byte { return fmt.Appendf(nil, `"2026-12-01T15:03:%02d.%dZ"`, i%60, i) }

// inflateStd reads a payload's gzip data with the standard library's reader, not the one
// this package uses.
func inflateStd(t testing.TB, payload []byte) []byte {
	t.Helper()
	w, err := readWrapper(payload)
	if err != nil || w == nil {
		t.Fatalf("not a wrapper (%v): %.100s", err, payload)
	}
	gz, err := base64.StdEncoding.DecodeString(string(w.data))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := stdgzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestTemplate(t *testing.T) {
	for _, n := range []int{100, CompressionThreshold - 200, CompressionThreshold, 300_000} {
		head, tail := templateParts(n)
		tpl, err := NewTemplate(head, tail)
		if err != nil {
			t.Fatal(err)
		}
		clear(head) // the template keeps a copy, or the compressed head
		head, _ = templateParts(n)
		// The last middle makes even the largest head's wrapper larger than the JSON: the
		// head must be sent as it is, inflated back when it was kept compressed only.
		for i, middle := range [][]byte{stamp(1), stamp(123456789), []byte("null"), []byte(`"` + strings.Repeat(" ", 70_000) + `"`),
			[]byte(`"` + string(randomText(1_100_000)) + `"`)} {
			want := appendPlain(nil, head, middle, tail)
			got, err := tpl.AppendPayload([]byte("x"), middle)
			if err != nil {
				t.Fatal(err)
			}
			if got[0] != 'x' {
				t.Fatal("dst not kept")
			}
			got = got[1:]
			// The same rule decides, on the template's own wrapper: with a short middle, the
			// same way.
			if i == 4 && bytes.HasPrefix(got, []byte(wrapperHead)) {
				t.Fatalf("%d bytes: a wrapper larger than the JSON", len(want))
			}
			enc, _ := EncodePayload(want)
			if wrapped := bytes.HasPrefix(got, []byte(wrapperHead)); len(middle) < 100 && wrapped != bytes.HasPrefix(enc, []byte(wrapperHead)) {
				t.Fatalf("%d bytes, middle %d: wrapped %t, EncodePayload disagrees", len(want), i, wrapped)
			}
			dec, err := DecodePayload(got, 0)
			if err != nil || !bytes.Equal(dec, want) {
				t.Fatalf("%d bytes, middle %d: round trip: %v", len(want), i, err)
			}
			if !bytes.HasPrefix(got, []byte(wrapperHead)) {
				continue
			}
			if std := inflateStd(t, got); !bytes.Equal(std, want) {
				t.Fatalf("%d bytes, middle %d: compress/gzip reads something else", len(want), i)
			}
			// The head is compressed; the stored bytes add only the middle and the tail.
			if plain, _ := EncodePayload(want); len(got) > len(plain)+4*(len(middle)+len(tail))/3+64 {
				t.Errorf("%d bytes: template payload %d bytes, EncodePayload's %d", len(want), len(got), len(plain))
			}
		}
	}
}

func TestSharedPrefix(t *testing.T) {
	head, tail := templateParts(300_000)
	tpl, _ := NewTemplate(head, tail)
	first, _ := tpl.AppendPayload(nil, stamp(1))
	json1, err := DecodePayload(first, 0)
	if err != nil {
		t.Fatal(err)
	}
	p := PrefixOf(first, json1)
	if p == nil {
		t.Fatal("no prefix found in a template's payload")
	}
	if p.Len() != len(head) {
		t.Fatalf("prefix of %d bytes, head of %d", p.Len(), len(head))
	}
	for i := range 3 {
		middle := stamp(1000 + i)
		next, _ := tpl.AppendPayload(nil, middle)
		got, ok := p.Tail(next, 0)
		if want := appendPlain(nil, middle, tail); !ok || !bytes.Equal(got, want) {
			t.Fatalf("Tail = %q, %t; want %q", got, ok, want)
		}
	}

	// Anything else is decoded in full.
	otherTpl, _ := NewTemplate(append(bytes.Clone(head[:len(head)-30]), strings.Repeat("x", 30)...), tail)
	other, _ := otherTpl.AppendPayload(nil, stamp(2))
	plain, _ := EncodePayload(json1)
	next, _ := tpl.AppendPayload(nil, stamp(3))
	corrupt := bytes.Clone(next)
	corrupt[len(corrupt)-10] ^= 1 // in the trailer's base64
	for name, raw := range map[string][]byte{
		"another head":  other,
		"EncodePayload": plain,
		"not wrapped":   json1,
		"corrupt":       corrupt,
		"truncated":     next[:len(next)-6],
	} {
		t.Run(name, func(t *testing.T) {
			if tail, ok := p.Tail(raw, 0); ok {
				t.Errorf("Tail = %q", tail)
			}
		})
	}
	if _, ok := p.Tail(next, int64(len(json1)-1)); ok {
		t.Error("Tail ignores the inflated size limit")
	}
	if PrefixOf(plain, json1) != nil || PrefixOf(json1, json1) != nil {
		t.Error("a prefix in a payload no template wrote")
	}
	if PrefixOf(first, append(bytes.Clone(json1[:len(json1)-1]), ' ')) != nil {
		t.Error("a prefix although the stored bytes are not the JSON's end")
	}
}

// FuzzSharedPrefix holds Tail against full decoding: whenever Tail takes a payload, its
// JSON is the prefix's followed by the tail.
func FuzzSharedPrefix(f *testing.F) {
	head, tail := templateParts(40_000)
	tpl, _ := NewTemplate(head, tail)
	first, _ := tpl.AppendPayload(nil, stamp(1))
	json1, err := DecodePayload(first, 0)
	if err != nil {
		f.Fatal(err)
	}
	p := PrefixOf(first, json1)
	if p == nil {
		f.Fatal("no prefix")
	}
	f.Add([]byte(`"2026-12-01T15:03:04Z"`), 0, byte(0))
	f.Add([]byte(`"x"`), 40, byte(1))
	f.Add([]byte{}, -3, byte(0x80))
	f.Fuzz(func(t *testing.T, middle []byte, at int, flip byte) {
		raw, err := tpl.AppendPayload(nil, middle)
		if err != nil {
			t.Fatal(err)
		}
		if at < 0 { // in the last bytes: base64 of the stored block and the trailer
			at += len(raw) - 2
		} else { // anywhere
			at %= len(raw)
		}
		if at >= 0 && at < len(raw) {
			raw[at] ^= flip
		}
		got, ok := p.Tail(raw, 0)
		full, err := DecodePayload(raw, 0)
		if !ok {
			if flip == 0 && err == nil && bytes.HasPrefix(raw, []byte(wrapperHead)) {
				t.Fatalf("Tail refused an intact template payload")
			}
			return
		}
		if err != nil {
			// DecodePayload also checks the JSON, which Tail leaves to its caller.
			if _, ok := err.(*DecodeError); !ok || scanStrict(appendPlain(nil, json1[:p.Len()], got), nil) == nil {
				t.Fatalf("Tail took what DecodePayload refuses: %v", err)
			}
			return
		}
		if !bytes.Equal(full, appendPlain(nil, json1[:p.Len()], got)) {
			t.Fatalf("Tail = %q, the payload holds %q", got, full[p.Len():])
		}
	})
}
