package recording

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"crypto/aes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rawEntry is one entry written with the header it declares, true or not.
type rawEntry struct {
	name     string
	data     []byte // the content
	declared int64  // the size the header declares (-1: the true size)
	mode     fs.FileMode
	deflate  bool
}

// rawZip writes entries with the sizes and modes they declare: the malformed archives
// archive/zip's writer refuses to make.
func rawZip(t testing.TB, entries ...rawEntry) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, e := range entries {
		body := e.data
		h := &zip.FileHeader{Name: e.name, Method: zip.Store, CRC32: crc32.ChecksumIEEE(e.data), UncompressedSize64: uint64(len(e.data))}
		if e.deflate {
			var c bytes.Buffer
			fw, _ := flate.NewWriter(&c, flate.BestSpeed)
			fw.Write(e.data)
			fw.Close()
			body, h.Method = c.Bytes(), zip.Deflate
		}
		h.CompressedSize64 = uint64(len(body))
		if e.declared >= 0 {
			h.UncompressedSize64 = uint64(e.declared)
		}
		if e.mode != 0 {
			h.SetMode(e.mode)
		}
		w, err := zw.CreateRaw(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestBadArchivesRefusedWhole: every kind of bad archive is refused with a clear error,
// and nothing of it stays — no recording, no file in the recordings directory.
func TestBadArchivesRefusedWhole(t *testing.T) {
	t.Parallel()
	good := exportedArchive(t)
	goodZip, _ := zip.NewReader(bytes.NewReader(good), int64(len(good)))
	var goodEntries []rawEntry
	for _, f := range goodZip.File {
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		goodEntries = append(goodEntries, rawEntry{name: f.Name, data: b, declared: -1})
	}
	with := func(extra ...rawEntry) []byte {
		return rawZip(t, append(append([]rawEntry(nil), goodEntries...), extra...)...)
	}
	bomb := bytes.Repeat([]byte("a"), 4<<20)
	line := func(s string) []byte {
		return rawZip(t, rawEntry{name: ManifestName, data: []byte(testManifest), declared: -1}, rawEntry{name: RecordsName, data: []byte(s), declared: -1})
	}
	for _, tc := range []struct {
		name    string
		archive []byte
		want    string
	}{
		{"zip bomb: inflates past its declared size", rawZip(t, rawEntry{name: ManifestName, data: []byte(testManifest), declared: -1},
			rawEntry{name: RecordsName, data: []byte(`{"seq":1,"session":"x","kind":"frame","at":"2026-03-20T10:00:00Z","blob":"blobs/frame/9.jpg","size":1}`), declared: -1},
			rawEntry{name: "blobs/frame/9.jpg", data: bomb, declared: 1024, deflate: true}), "inflates past its declared size"},
		{"official: a frame that inflates past its size", rawZip(t, rawEntry{name: officialSessionName, declared: -1,
			data: []byte(`{"schema":"ansight.session-capture.v2","session":{"sessionId":"s","images":[{"frameId":"f","format":"jpeg"}]}}`)},
			rawEntry{name: "session-images/f.jpg", data: bomb, declared: 10, deflate: true}), "inflates past its declared size"},
		{"zip bomb: declares more than the budget", with(rawEntry{name: "blobs/x.bin", data: []byte("x"), declared: 1 << 40}), "more than the budget"},
		{"duplicate name", with(rawEntry{name: RecordsName, data: []byte("{}"), declared: -1}), "appears twice"},
		{"case variant", with(rawEntry{name: "Records.JSONL", data: []byte("{}"), declared: -1}), "differ only by case"},
		{"absolute name", with(rawEntry{name: "/etc/passwd", data: []byte("x"), declared: -1}), "is absolute"},
		{"dot-dot segment", with(rawEntry{name: "blobs/../../evil", data: []byte("x"), declared: -1}), `".." segment`},
		{"backslash", with(rawEntry{name: `blobs\..\evil`, data: []byte("x"), declared: -1}), "backslash"},
		{"drive letter", with(rawEntry{name: "C:evil", data: []byte("x"), declared: -1}), "drive letter"},
		{"control character", with(rawEntry{name: "blobs/a\x01b", data: []byte("x"), declared: -1}), "control character"},
		{"symbolic link", with(rawEntry{name: "blobs/link", data: []byte("/etc/passwd"), declared: -1, mode: fs.ModeSymlink | 0o777}), "symbolic link"},
		{"negative seq", line(`{"seq":-5,"session":"x","kind":"log","at":"2026-03-20T10:00:00Z","size":1}`), "seq -5 is out of range"},
		{"absurd size", line(`{"seq":1,"session":"x","kind":"log","at":"2026-03-20T10:00:00Z","size":1e30}`), "size"},
		{"negative blob size", line(`{"seq":1,"session":"x","kind":"log","at":"2026-03-20T10:00:00Z","size":1,"blobBytes":-1}`), "blobBytes -1 is out of range"},
		{"time out of range", line(`{"seq":1,"session":"x","kind":"log","at":"0001-01-01T00:00:00Z","size":1}`), "time"},
		{"channel out of range", line(`{"seq":1,"session":"x","kind":"metric","at":"2026-03-20T10:00:00Z","channel":300,"size":1}`), "channel 300"},
		{"duplicate member", line(`{"seq":1,"seq":2,"session":"x","kind":"log","at":"2026-03-20T10:00:00Z","size":1}`), "duplicate"},
		{"case-variant member", line(`{"seq":1,"Seq":2,"session":"x","kind":"log","at":"2026-03-20T10:00:00Z","size":1}`), "Seq"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			r := open(t, dir, func(o *Options) { o.MaxBytes = 64 << 20 })
			_, err := r.Import(context.Background(), bytes.NewReader(tc.archive), int64(len(tc.archive)), ImportOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Import = %v, want an error with %q", err, tc.want)
			}
			if list, _ := r.Sessions(context.Background()); len(list) != 0 {
				t.Errorf("a refused archive left %v", list)
			}
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() && !strings.HasPrefix(filepath.Base(p), DBName) {
					t.Errorf("a refused archive left %s", p)
				}
				return nil
			})
		})
	}
}

// TestLongLineRefused: a record line of 1 GiB (a zip of a few hundred KiB) is refused once
// the line bound is passed, without reading the rest of it.
func TestLongLineRefused(t *testing.T) {
	t.Parallel()
	// A deflate stream of 1 GiB of "a" without compressing 1 GiB: each flushed block after
	// the first refers only to the "a"s behind it, so the same block repeated 1023 times
	// goes on writing "a"s.
	var c bytes.Buffer
	fw, _ := flate.NewWriter(&c, flate.BestSpeed)
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	fw.Write([]byte(`{"seq":1,"text":"`))
	fw.Write(chunk)
	fw.Flush()
	head := bytes.Clone(c.Bytes())
	c.Reset()
	fw.Write(chunk)
	fw.Flush()
	block := bytes.Clone(c.Bytes())
	c.Reset()
	fw.Close()
	stream := append(append(head, bytes.Repeat(block, 1023)...), c.Bytes()...)
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, _ := zw.Create(ManifestName)
	w.Write([]byte(testManifest))
	// CRC 0: not checked; the line bound stops the reading long before the end.
	h := &zip.FileHeader{Name: RecordsName, Method: zip.Deflate, CompressedSize64: uint64(len(stream)), UncompressedSize64: 1<<30 + 17}
	w, _ = zw.CreateRaw(h)
	w.Write(stream)
	zw.Close()
	r := open(t, t.TempDir(), func(o *Options) { o.MaxBytes = 2 << 30 })
	_, err := r.Import(context.Background(), bytes.NewReader(b.Bytes()), int64(b.Len()), ImportOptions{})
	if err == nil || !strings.Contains(err.Error(), "a line is longer than") {
		t.Fatalf("Import = %v", err)
	}
}

// aesZip encrypts files as WinZip AES-256 (version 1 keeps the CRC, 2 does not): the
// writer side of aeszip.go, for the tests that tamper with what it writes.
func aesZip(t testing.TB, password string, version uint16, files ...[2]string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, f := range files {
		salt := make([]byte, 16)
		rand.Read(salt)
		key, macKey, verifier, err := aesKeys(password, salt, 32)
		if err != nil {
			t.Fatal(err)
		}
		var c bytes.Buffer
		fw, _ := flate.NewWriter(&c, flate.BestSpeed)
		fw.Write([]byte(f[1]))
		fw.Close()
		plain := c.Bytes()
		block, _ := aes.NewCipher(key)
		ct := make([]byte, len(plain))
		var stream [16]byte
		for i := range plain {
			if i%16 == 0 {
				var ctr [16]byte
				binary.LittleEndian.PutUint64(ctr[:], uint64(i/16+1))
				block.Encrypt(stream[:], ctr[:])
			}
			ct[i] = plain[i] ^ stream[i%16]
		}
		mac := hmac.New(sha1.New, macKey)
		mac.Write(ct)
		body := append(append(append(append([]byte{}, salt...), verifier...), ct...), mac.Sum(nil)[:10]...)
		extra := []byte{0x01, 0x99, 7, 0, byte(version), 0, 'A', 'E', 3, 8, 0}
		h := &zip.FileHeader{Name: f[0], Method: methodWinZipAES, Flags: 0x1, Extra: extra, CompressedSize64: uint64(len(body)),
			UncompressedSize64: uint64(len(f[1]))}
		if version == 1 {
			h.CRC32 = crc32.ChecksumIEEE([]byte(f[1]))
		}
		w, err := zw.CreateRaw(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(body)
	}
	zw.Close()
	return b.Bytes()
}

// TestAESEntries: AE-1 and AE-2 entries read back; a wrong password, a changed byte of
// ciphertext (the HMAC) and, for AE-1, a wrong CRC are refused.
func TestAESEntries(t *testing.T) {
	t.Parallel()
	const content = `{"hello":"world","n":[1,2,3]}`
	for _, version := range []uint16{1, 2} {
		archive := aesZip(t, "pw", version, [2]string{"a.json", content})
		z, err := openZip(bytes.NewReader(archive), int64(len(archive)), 1<<20, "pw")
		if err != nil {
			t.Fatalf("AE-%d: %v", version, err)
		}
		if b, err := z.readAll("a.json", 1<<20); err != nil || string(b) != content {
			t.Errorf("AE-%d: %q, %v", version, b, err)
		}
		if _, err := openZip(bytes.NewReader(archive), int64(len(archive)), 1<<20, "nope"); err == nil {
			t.Errorf("AE-%d: a wrong password opened it", version)
		}
		// Flip one byte of the ciphertext (past the 16-byte salt and 2-byte verifier).
		bad := bytes.Clone(archive)
		i := bytes.Index(bad, []byte("a.json")) + len("a.json") + 11 + 16 + 2 + 3
		bad[i] ^= 0x40
		z, err = openZip(bytes.NewReader(bad), int64(len(bad)), 1<<20, "pw")
		if err == nil {
			_, err = z.readAll("a.json", 1<<20)
		}
		if err == nil {
			t.Errorf("AE-%d: tampered ciphertext read", version)
		}
	}
}

// TestHeldMemoryBounded: the official archive and the offline capture are sorted in memory
// before they are stored, so what their records hold there is bounded (maxHeldBytes,
// lowered here): a small archive of highly compressible JSON is refused instead of taking
// gigabytes, while visual trees, however large, are written to their files as they are
// read and never held. Not parallel: it lowers the bound for its run.
func TestHeldMemoryBounded(t *testing.T) {
	defer func(n int64) { maxHeldBytes = n }(maxHeldBytes)
	maxHeldBytes = 1 << 20
	const session = `{"schema":"ansight.session-capture.v2","session":{"sessionId":"held","appId":"a","createdUtc":"2026-03-20T10:00:00Z"},"visualTreeSnapshotIndex":[%s]}`
	trees := func(n int, payload, source string) []rawEntry {
		var index []string
		var out []rawEntry
		for i := range n {
			name := fmt.Sprintf("visual-trees/20260320100000000000%d-%06d-t%d.json", i, i, i)
			index = append(index, fmt.Sprintf(`{"entryPath":%q,"header":{"snapshotId":"t%d"}}`, name, i))
			out = append(out, rawEntry{name: name, declared: -1, deflate: true, data: fmt.Appendf(nil,
				`{"schema":"ansight.session-visual-tree-snapshot.v2","snapshot":{"snapshotId":"t%d","capturedAtUtc":"2026-03-20T10:00:0%dZ","source":%q,"payload":{"text":%q}}}`,
				i, i, source, payload)})
		}
		return append([]rawEntry{{name: officialSessionName, declared: -1, data: fmt.Appendf(nil, session, strings.Join(index, ","))}}, out...)
	}
	big := strings.Repeat("a", 768<<10)
	capture := ".ansight/sessions/0198c1d2e3f4a5b6c7d8e9f0a1b2c3d4/"
	var events strings.Builder
	for i := range 4000 {
		fmt.Fprintf(&events, `{"id":"e%d","t":1774000801500,"c":0,"k":0,"l":%q}`+"\n", i, strings.Repeat("x", 400))
	}
	for _, tc := range []struct {
		name    string
		archive []byte
		want    string // "" for an import that succeeds
	}{
		{"large trees are not held", rawZip(t, trees(6, big, "native")...), ""},
		{"trees whose descriptions inflate", rawZip(t, trees(6, "", big)...), "MiB of memory"},
		{"an offline capture of many lines", rawZip(t,
			rawEntry{name: capture + ManifestName, declared: -1, data: []byte(`{"sessionId":"0198c1d2e3f4a5b6c7d8e9f0a1b2c3d4","appId":"a","startedAtUtc":"2026-03-20T10:00:00Z"}`)},
			rawEntry{name: capture + "telemetry/events/e-20260320T100000Z.jsonl", declared: -1, deflate: true, data: []byte(events.String())}), "MiB of memory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			r := open(t, dir, nil)
			sum, err := r.Import(context.Background(), bytes.NewReader(tc.archive), int64(len(tc.archive)), ImportOptions{})
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if k := byKind(all(t, r, Query{Session: sum.ID})); len(k[KindTree]) != 6 || len(blobOf(t, r, k[KindTree][5])) < len(big) {
					t.Errorf("%d trees imported, want 6 with their payloads", len(k[KindTree]))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Import = %v, want an error with %q", err, tc.want)
			}
			if list, _ := r.Sessions(context.Background()); len(list) != 0 {
				t.Errorf("a refused archive left %v", list)
			}
		})
	}
}

// TestImportedIDLowerCased: an archive's session id is lower-cased on import, so that it
// never names the directory of another recording's files on a case-insensitive file system
// (where deleting the one would delete the other's files): a case variant of a recorded id
// is imported beside it, not into it.
func TestImportedIDLowerCased(t *testing.T) {
	t.Parallel()
	r := open(t, t.TempDir(), nil)
	archive := func(id string) []byte {
		return rawZip(t, rawEntry{name: officialSessionName, declared: -1,
			data: []byte(`{"schema":"ansight.session-capture.v2","session":{"sessionId":"` + id + `","appId":"a","createdUtc":"2026-03-20T10:00:00Z"}}`)})
	}
	first := importBytes(t, r, archive("com-example-app-001"), ImportOptions{})
	second := importBytes(t, r, archive("Com-Example-App-001"), ImportOptions{})
	if first.ID != "com-example-app-001" || second.ID != "com-example-app-001-import-1" {
		t.Errorf("imported as %q and %q", first.ID, second.ID)
	}
	if strings.EqualFold(sessionDir(first.ID), sessionDir(second.ID)) {
		t.Errorf("both recordings' files in %q", sessionDir(first.ID))
	}
}

// TestCentralDirectoryBounded: an archive whose central directory (read into memory whole
// by archive/zip, entry comments included) is larger than maxCentralDirectory, lowered
// here, is refused before it is read — through the end record, and through the ZIP64 one
// an archive of more than 65,535 entries has. Not parallel: it lowers the bound.
func TestCentralDirectoryBounded(t *testing.T) {
	defer func(n int64) { maxCentralDirectory = n }(maxCentralDirectory)
	maxCentralDirectory = 1 << 20
	build := func(entries int, comment string) []byte {
		var b bytes.Buffer
		zw := zip.NewWriter(&b)
		for i := range entries {
			w, err := zw.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf("blobs/%d", i), Comment: comment, Method: zip.Store})
			if err != nil {
				t.Fatal(err)
			}
			w.Write([]byte("x"))
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	for _, tc := range []struct {
		name    string
		archive []byte
		refused bool
	}{
		{"small", build(10, "c"), false},
		{"comments", build(100, strings.Repeat("c", 16<<10)), true},
		{"zip64", build(70_000, ""), true},
	} {
		n, ok := centralDirectorySize(bytes.NewReader(tc.archive), int64(len(tc.archive)))
		_, err := openZip(bytes.NewReader(tc.archive), int64(len(tc.archive)), 1<<30, "")
		if !ok || n <= 0 || n >= int64(len(tc.archive)) || (err != nil && strings.Contains(err.Error(), "directory")) != tc.refused {
			t.Errorf("%s: directory of %d bytes (%v): %v", tc.name, n, ok, err)
		}
	}
}
