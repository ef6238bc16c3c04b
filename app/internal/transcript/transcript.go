package transcript

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
	"sync"
	"testing"
	"testing/synctest"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
)

// Archive is a parsed txtar archive.
type Archive struct {
	Comment []byte
	Files   []File
}

// File is one section of an archive.
type File struct {
	Name string
	Data []byte
}

// Parse reads a txtar archive. It never fails: text before the first marker is the
// comment.
func Parse(data []byte) Archive {
	var ar Archive
	cur := &ar.Comment
	for len(data) > 0 {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		data = rest
		if name, ok := marker(line); ok {
			ar.Files = append(ar.Files, File{Name: name})
			cur = &ar.Files[len(ar.Files)-1].Data
			continue
		}
		*cur = append(*cur, line...)
		*cur = append(*cur, '\n')
	}
	return ar
}

func marker(line []byte) (string, bool) {
	s := string(bytes.TrimRight(line, "\r"))
	if !strings.HasPrefix(s, "-- ") || !strings.HasSuffix(s, " --") || len(s) < 7 {
		return "", false
	}
	return strings.TrimSpace(s[3 : len(s)-3]), true
}

// update is the -update flag of every test binary that runs transcripts.
var update = flag.Bool("update", false, "rewrite the expect sections of the transcripts instead of comparing them")

// Replay runs one archive and returns, for each section index holding an "expect"
// section, the rendered answers to the sends before it.
type Replay func(t *testing.T, ar Archive) []string

// Check replays every archive matching pattern (a filepath.Glob pattern) in a subtest
// named after the file, and compares each expect section with what replay rendered; with
// -update it rewrites the expect sections instead. replay runs in a synctest bubble: the
// delays an app takes (after.delayMilliseconds, ui.wait's polls) pass in fake time, so
// elapsed times in answers are exact.
func Check(t *testing.T, pattern string, replay Replay) {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts match %s: %v", pattern, err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			ar := Parse(data)
			var got []string
			synctest.Test(t, func(t *testing.T) { got = replay(t, ar) })
			if len(got) != len(ar.Files) {
				t.Fatalf("replay rendered %d sections for %d", len(got), len(ar.Files))
			}
			if *update {
				out := ar.Comment
				for i, sec := range ar.Files {
					out = append(out, "-- "+sec.Name+" --\n"...)
					if sec.Name == "expect" {
						out = append(out, got[i]...)
					} else {
						out = append(out, sec.Data...)
					}
				}
				if err := os.WriteFile(file, out, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			for i, sec := range ar.Files {
				if sec.Name == "expect" && string(sec.Data) != got[i] {
					t.Errorf("section %d (expect) differs\n--- want\n%s--- got\n%s", i, sec.Data, got[i])
				}
			}
		})
	}
}

// Message is one message an app wrote.
type Message struct {
	Type transport.MessageType
	Data []byte
}

// Render writes messages the way expect sections hold them. A message that is neither
// text nor binary is written as it is (callers use it for notes such as "(not a tool
// request)").
func Render(t testing.TB, msgs []Message) string {
	t.Helper()
	var b strings.Builder
	for _, m := range msgs {
		switch m.Type {
		case transport.MessageText:
			b.WriteString(renderText(t, m.Data))
		case transport.MessageBinary:
			b.WriteString(renderFrame(m.Data))
		default:
			b.Write(m.Data)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// maxShown is the longest text message written out in full.
const maxShown = 16000

func renderText(t testing.TB, data []byte) string {
	t.Helper()
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
		Original int `json:"originalByteCount"`
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
	if len(data) < wire.FrameHeaderSize || string(data[:4]) != "ASFT" {
		return fmt.Sprintf("binary (not ASFT, %d bytes)\n", len(data))
	}
	kind := map[byte]string{1: "chunk", 2: "complete", 3: "error"}[data[5]]
	seq := int32(binary.LittleEndian.Uint32(data[40:44]))
	off := int64(binary.LittleEndian.Uint64(data[44:52]))
	n := int(binary.LittleEndian.Uint32(data[52:56]))
	payload := data[wire.FrameHeaderSize:]
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

// Lines splits a setup section into its non-blank lines.
func Lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// Recorder is an app.MessageWriter that keeps every message written to it.
type Recorder struct {
	mu   sync.Mutex
	msgs []Message
}

// Write records a copy of data.
func (r *Recorder) Write(_ context.Context, typ transport.MessageType, data []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, Message{Type: typ, Data: bytes.Clone(data)})
	return nil
}

// Take returns the messages recorded since the last Take.
func (r *Recorder) Take() []Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.msgs
	r.msgs = nil
	return m
}

// CountingIDs returns an id source (app.Options.IDs, ui.Options.IDs) that counts in 32
// hex digits, 00…01, 00…02, …: transcripts stay reproducible.
func CountingIDs() func() string {
	var mu sync.Mutex
	n := 0
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf("%032x", n)
	}
}

// Replayer replays an archive's sections against an app under test.
type Replayer struct {
	// Handle passes one sent message (trimmed) to the app, whose answers go to rec; it
	// reports whether the app claimed the message (app.App.Handle's contract).
	Handle func(msg []byte, rec *Recorder) (claimed bool, err error)
	// Setup runs one line of a setup section; nil refuses setup sections.
	Setup func(line string)
	// Fix rewrites a rendered expect section (machine-specific paths, times); nil keeps it.
	Fix func(rendered string) string
}

// Replay runs the sections of ar in order and returns, for each expect section (by
// index), the rendered answers to the send before it. A message the app does not claim is
// rendered "(not a tool request)".
func (r Replayer) Replay(t testing.TB, ar Archive) []string {
	t.Helper()
	got := make([]string, len(ar.Files))
	var last []Message
	for i, sec := range ar.Files {
		switch {
		case sec.Name == "setup" && r.Setup != nil:
			for _, l := range Lines(string(sec.Data)) {
				r.Setup(l)
			}
		case sec.Name == "send":
			var rec Recorder
			claimed, err := r.Handle(bytes.TrimSpace(sec.Data), &rec)
			if err != nil {
				t.Fatalf("section %d: Handle: %v", i, err)
			}
			last = rec.Take()
			if !claimed {
				last = append(last, Message{Data: []byte("(not a tool request)")})
			}
		case sec.Name == "expect":
			got[i] = Render(t, last)
			if r.Fix != nil {
				got[i] = r.Fix(got[i])
			}
			last = nil
		default:
			t.Fatalf("unknown section %q", sec.Name)
		}
	}
	return got
}
