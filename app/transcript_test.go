package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

var update = flag.Bool("update", false, "rewrite the expected output of the transcripts in testdata/transcripts")

// Conformance transcripts (testdata/transcripts/*.txtar) replay a host→app message
// sequence against the fixture app and compare every app→host message byte for byte. The
// clock and the id source are pinned, so responses are reproducible.
//
// Sections, in order:
//
//	-- setup --   lines: "guard <disabled|readonly|readwrite|fullaccess|discovery-only>",
//	              "set <key>=<value>" (fixture state, e.g. map.loaded=false)
//	-- send --    one message, sent as written (it may span lines)
//	-- expect --  the app's messages, one per line: "text <json>" (a compressed payload is
//	              shown with its data elided, followed by "  payload <decoded json>"; a
//	              message over 2000 bytes by its head, length and SHA-256) or
//	              "binary ASFT <type> transfer=<id> seq=<n> offset=<n> len=<n> sha256=<…>"
//
// go test -run TestTranscripts -update rewrites the expect sections.
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/transcripts/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			ar := parseTxtar(data)
			var got []string
			// synctest: after.delayMilliseconds passes in fake time.
			synctest.Test(t, func(t *testing.T) { got = replay(t, ar) })
			if *update {
				out := ar.comment
				for i, sec := range ar.files {
					out = append(out, "-- "+sec.name+" --\n"...)
					if sec.name == "expect" {
						out = append(out, got[i]...)
					} else {
						out = append(out, sec.data...)
					}
				}
				if err := os.WriteFile(file, out, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			for i, sec := range ar.files {
				if sec.name == "expect" && string(sec.data) != got[i] {
					t.Errorf("section %d (expect) differs\n--- want\n%s--- got\n%s", i, sec.data, got[i])
				}
			}
		})
	}
}

// replay runs the transcript and returns, for each expect section (by index), the
// rendered messages of the send before it.
func replay(t *testing.T, ar txtar) []string {
	f := newFixture(t, Options{})
	got := make([]string, len(ar.files))
	var last []message
	for i, sec := range ar.files {
		switch sec.name {
		case "setup":
			for _, l := range lines(string(sec.data)) {
				setup(t, f, l)
			}
		case "send":
			r := &recorder{}
			ok, err := f.app.Handle(context.Background(), bytes.TrimSpace(sec.data), r)
			if err != nil {
				t.Fatalf("section %d: Handle: %v", i, err)
			}
			if !ok {
				r.msgs = append(r.msgs, message{typ: 0, data: []byte("(not a tool request)")})
			}
			last = r.take()
		case "expect":
			got[i] = render(t, last)
			last = nil
		default:
			t.Fatalf("unknown section %q", sec.name)
		}
	}
	return got
}

func setup(t *testing.T, f *fixture, line string) {
	verb, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	switch verb {
	case "guard":
		g, ok := map[string]catalog.Guard{
			"disabled":       catalog.GuardDisabled,
			"readonly":       catalog.GuardReadOnly,
			"readwrite":      catalog.GuardReadWrite,
			"fullaccess":     catalog.GuardFullAccess,
			"discovery-only": {DiscoveryEnabled: true, ExecutionEnabled: false, MaxPolicy: wire.PolicyCritical},
		}[arg]
		if !ok {
			t.Fatalf("unknown guard %q", arg)
		}
		if err := f.app.SetGuard(g); err != nil {
			t.Fatal(err)
		}
	case "set":
		k, v, _ := strings.Cut(arg, "=")
		f.set(k, v)
	default:
		t.Fatalf("unknown setup line %q", line)
	}
}

// render writes messages the way expect sections hold them.
func render(t *testing.T, msgs []message) string {
	var b strings.Builder
	for _, m := range msgs {
		switch m.typ {
		case transport.MessageText:
			b.WriteString(renderText(t, m.data))
		case transport.MessageBinary:
			b.WriteString(renderFrame(m.data))
		default:
			b.Write(m.data)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

const maxShown = 16000

func renderText(t *testing.T, data []byte) string {
	env, err := wire.DecodeEnvelope(data)
	if err != nil {
		t.Fatalf("the app wrote an invalid envelope: %v\n%s", err, data)
	}
	if !env.Payload.IsValid() {
		t.Fatalf("invalid payload")
	}
	var probe struct {
		Encoding string `json:"$ansightEncoding"`
	}
	if env.Payload.Kind() == '{' {
		_ = wire.Unmarshal(env.Payload, &probe)
	}
	if probe.Encoding == "" {
		return "text " + abbreviate(data) + "\n"
	}
	decoded, err := wire.DecodePayload(env.Payload, wire.DefaultMaxInflatedBytes)
	if err != nil {
		t.Fatalf("compressed payload does not decode: %v", err)
	}
	var w struct {
		Original   int `json:"originalByteCount"`
		Compressed int `json:"compressedByteCount"`
	}
	if err := wire.Unmarshal(env.Payload, &w); err != nil {
		t.Fatal(err)
	}
	if w.Original != len(decoded) {
		t.Fatalf("originalByteCount %d, decoded %d bytes", w.Original, len(decoded))
	}
	// gzip bytes depend on the compressor: show the envelope with the data elided.
	elided := env
	elided.Payload = jsontext.Value(fmt.Sprintf(`{"$ansightEncoding":%q,"originalByteCount":%d,"data":"…"}`, probe.Encoding, w.Original))
	out, err := wire.AppendEnvelope(nil, &elided)
	if err != nil {
		t.Fatal(err)
	}
	if len(env.Payload) >= len(decoded) {
		t.Fatalf("the wrapped payload (%d bytes) is not smaller than the original (%d)", len(env.Payload), len(decoded))
	}
	return "text " + string(out) + "\n  payload " + abbreviate(decoded) + "\n"
}

func abbreviate(data []byte) string {
	if len(data) <= maxShown {
		return string(data)
	}
	sum := sha256.Sum256(data)
	return fmt.Sprintf("%s… (%d bytes, sha256 %s)", data[:200], len(data), hex.EncodeToString(sum[:8]))
}

func renderFrame(data []byte) string {
	if len(data) < frameHeaderSize || string(data[:4]) != "ASFT" {
		return fmt.Sprintf("binary (not ASFT, %d bytes)\n", len(data))
	}
	kind := map[byte]string{1: "chunk", 2: "complete", 3: "error"}[data[5]]
	seq := int32(binary.LittleEndian.Uint32(data[40:44]))
	off := int64(binary.LittleEndian.Uint64(data[44:52]))
	n := int(binary.LittleEndian.Uint32(data[52:56]))
	payload := data[frameHeaderSize:]
	line := fmt.Sprintf("binary ASFT %s transfer=%s seq=%d offset=%d len=%d", kind, data[8:40], seq, off, n)
	switch {
	case n != len(payload):
		line += fmt.Sprintf(" (BAD: %d payload bytes)", len(payload))
	case data[5] == 3:
		line += fmt.Sprintf(" message=%q", payload)
	case n > 0:
		sum := sha256.Sum256(payload)
		line += " sha256=" + hex.EncodeToString(sum[:8])
	}
	return line + "\n"
}

// txtar is a parsed txtar archive (golang.org/x/tools/txtar's format: a comment, then
// files introduced by "-- name --" lines). Names may repeat.
type txtar struct {
	comment []byte
	files   []txtarFile
}

type txtarFile struct {
	name string
	data []byte
}

func parseTxtar(data []byte) txtar {
	var ar txtar
	cur := &ar.comment
	for len(data) > 0 {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		data = rest
		if name, ok := txtarMarker(line); ok {
			ar.files = append(ar.files, txtarFile{name: name})
			cur = &ar.files[len(ar.files)-1].data
			continue
		}
		*cur = append(*cur, line...)
		*cur = append(*cur, '\n')
	}
	return ar
}

func txtarMarker(line []byte) (string, bool) {
	s := string(bytes.TrimRight(line, "\r"))
	if !strings.HasPrefix(s, "-- ") || !strings.HasSuffix(s, " --") || len(s) < 7 {
		return "", false
	}
	return strings.TrimSpace(s[3 : len(s)-3]), true
}

func TestParseTxtar(t *testing.T) {
	ar := parseTxtar([]byte("about\n-- send --\n{\"a\":1}\n-- expect --\ntext x\n-- send --\nmore\n"))
	if string(ar.comment) != "about\n" || len(ar.files) != 3 || ar.files[0].name != "send" ||
		string(ar.files[0].data) != "{\"a\":1}\n" || ar.files[2].name != "send" || string(ar.files[2].data) != "more\n" {
		t.Fatalf("parsed %+v", ar)
	}
}
