package recording

import (
	"archive/zip"
	"bytes"
	"io"
	"strings"
	"testing"
)

// exportLabelled exports session sess of r in format, after giving it label.
func exportLabelled(t *testing.T, r *Recorder, sess, label, format string, opts ExportOptions) []byte {
	t.Helper()
	if err := r.Rename(t.Context(), sess, label); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	opts.Format = format
	if err := r.Export(t.Context(), sess, &b, opts); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// importInto imports archive into a new store and returns its summary.
func importInto(t *testing.T, archive []byte) Summary {
	t.Helper()
	r := open(t, t.TempDir(), nil)
	sum, err := r.Import(t.Context(), bytes.NewReader(archive), int64(len(archive)), ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := r.Session(t.Context(), sum.ID); err != nil || got.Label != sum.Label {
		t.Fatalf("Session after Import = %+v, %v; Import said label %q", got, err, sum.Label)
	}
	return sum
}

// officialNameIn is session.name in an official archive's session.json ("" when absent).
func officialNameIn(t *testing.T, archive []byte) string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
	if err != nil {
		t.Fatal(err)
	}
	f, err := zr.Open(officialSessionName)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	doc, err := parseObject(b)
	if err != nil {
		t.Fatal(err)
	}
	s, err := members(doc.get("session"))
	if err != nil {
		t.Fatal(err)
	}
	name, _ := str(s.get("name"))
	return name
}

// A session's label travels with its recording: our archive's manifest carries it
// (session.label), the official one's session.json as the session's name, and an import
// of either restores it.
func TestLabelRoundTrip(t *testing.T) {
	t.Parallel()
	r := open(t, t.TempDir(), nil)
	sess := liveRecording(t, r)
	const label = "checkout on the Pixel — café ✓"
	for _, format := range []string{FormatAnsight, FormatOfficial} {
		archive := exportLabelled(t, r, sess, label, format, ExportOptions{})
		if format == FormatOfficial {
			if got := officialNameIn(t, archive); got != label {
				t.Errorf("official session.json name = %q, want %q", got, label)
			}
		}
		sum := importInto(t, archive)
		if sum.Label != label || sum.Import.Skipped["label"] != 0 {
			t.Errorf("%s: imported label %q (skipped %v), want %q", format, sum.Label, sum.Import.Skipped, label)
		}
	}
	// The sanitize policy reaches the label as every other string.
	archive := exportLabelled(t, r, sess, "call gopher@example.com", FormatAnsight, ExportOptions{Sanitize: true})
	if sum := importInto(t, archive); strings.Contains(sum.Label, "gopher@example.com") || sum.Label == "" {
		t.Errorf("sanitized export: label %q", sum.Label)
	}
	archive = exportLabelled(t, r, sess, "call gopher@example.com", FormatOfficial, ExportOptions{Sanitize: true})
	if name := officialNameIn(t, archive); strings.Contains(name, "gopher@example.com") || name == "" {
		t.Errorf("sanitized official export: name %q", name)
	}
}

// An archive's label is outside input: one CheckLabel refuses (terminal escapes, bidi
// overrides, lines, over MaxLabel bytes) is left out and reported as skipped, and the
// recording is imported without it, from either format. An older archive, without a
// label, imports as it did.
func TestImportHostileLabel(t *testing.T) {
	t.Parallel()
	const records = `{"seq":1,"session":"x","kind":"log","at":"2026-03-20T10:00:00Z","text":"hi","size":1}`
	withLabel := func(label string) []byte {
		m := strings.Replace(testManifest, `"origin":"live"`, `"origin":"live","label":`+string(quoted(label)), 1)
		return zipOf(t, [2]string{"manifest.json", m}, [2]string{"records.jsonl", records})
	}
	for _, label := range []string{"\x1b[2Jfine", "invoice\u202egnp.exe", "two\nlines", "zero\u200bwidth", strings.Repeat("x", MaxLabel+1)} {
		sum := importInto(t, withLabel(label))
		if sum.Label != "" || sum.Import.Skipped["label"] != 1 || sum.Records != 1 {
			t.Errorf("label %q: imported label %q, skipped %v, %d records", label, sum.Label, sum.Import.Skipped, sum.Records)
		}
	}
	if sum := importInto(t, withLabel("  spaced  ")); sum.Label != "spaced" {
		t.Errorf("a label with spaces around it: %q", sum.Label)
	}
	old := importInto(t, zipOf(t, [2]string{"manifest.json", testManifest}, [2]string{"records.jsonl", records}))
	if old.Label != "" || old.Import.Skipped != nil || old.Records != 1 {
		t.Errorf("an archive without a label: %+v", old)
	}

	// Rename takes any label short enough (the API checks the rest): an archive of one
	// that CheckLabel refuses stands for a hostile sender's, in the official format too.
	r := open(t, t.TempDir(), nil)
	sess := liveRecording(t, r)
	for _, format := range []string{FormatAnsight, FormatOfficial} {
		sum := importInto(t, exportLabelled(t, r, sess, "pay\u202etxt.exe", format, ExportOptions{}))
		if sum.Label != "" || sum.Import.Skipped["label"] != 1 {
			t.Errorf("%s: imported label %q, skipped %v", format, sum.Label, sum.Import.Skipped)
		}
	}
}
