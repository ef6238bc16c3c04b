package files_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app/apptest"
	"github.com/ansight-go/ansight/app/files"
	"github.com/ansight-go/ansight/wire"
)

// content is the part of a read_file or download_file result about the bytes.
type content struct {
	RelativePath string  `json:"relativePath"`
	SizeBytes    int64   `json:"sizeBytes"`
	Version      string  `json:"version"`
	BytesRead    int     `json:"bytesRead"`
	Truncated    bool    `json:"truncated"`
	ContentType  string  `json:"contentType"`
	Encoding     string  `json:"encoding"`
	Text         *string `json:"text"`
	Base64       *string `json:"base64"`
	HasMore      bool    `json:"hasMore"`
	NextOffset   *int64  `json:"nextOffsetBytes"`
	NextRequest  *struct {
		ToolID    string            `json:"toolId"`
		Arguments map[string]string `json:"arguments"`
	} `json:"nextRequest"`
}

func (c content) bytes(t *testing.T) []byte {
	t.Helper()
	switch {
	case c.Text != nil && c.Base64 == nil && c.ContentType == "text" && c.Encoding == "utf-8":
		return []byte(*c.Text)
	case c.Base64 != nil && c.Text == nil && c.ContentType == "binary" && c.Encoding == "base64":
		b, err := base64.StdEncoding.DecodeString(*c.Base64)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	t.Fatalf("content %+v is neither text nor base64", c)
	return nil
}

func decode(t *testing.T, v jsontext.Value) content {
	t.Helper()
	var c content
	if err := wire.Unmarshal(v, &c); err != nil {
		t.Fatalf("%v: %s", err, v)
	}
	return c
}

// writeFile writes a file under the sandbox's docs root.
func (s *sandbox) writeFile(t *testing.T, rel string, b []byte) {
	t.Helper()
	p := filepath.Join(s.docs, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.writeFile(t, "bin/blob.dat", []byte{0, 1, 2, 0xff})
	s.writeFile(t, "bin/ctl.dat", []byte("a\x01b"))
	s.writeFile(t, "bin/plain.dat", []byte("tab\tand\r\nlines"))
	s.writeFile(t, "data.json", []byte(`{"a":"\u0001"}`))
	h := s.harness(t, s.options())
	for _, tc := range []struct {
		name, args, want, contentType string
		truncated                     bool
	}{
		{"text by mime type", `{"root":"docs","path":"readme.md"}`, "# Notes\n", "text", false},
		{"binary by its bytes", `{"path":"bin/blob.dat"}`, "\x00\x01\x02\xff", "binary", false},
		{"a control byte in a file of no text type", `{"path":"bin/ctl.dat"}`, "a\x01b", "binary", false},
		{"tabs and line ends are text", `{"path":"bin/plain.dat"}`, "tab\tand\r\nlines", "text", false},
		{"forced base64", `{"path":"readme.md","encoding":"BASE64"}`, "# Notes\n", "binary", false},
		{"forced utf-8", `{"path":"bin/ctl.dat","encoding":"utf-8"}`, "a\x01b", "text", false},
		{"maxBytes as a number", `{"path":"readme.md","maxBytes":3}`, "# N", "text", true},
		{"maxBytes as a string (flattened)", `{"path":"readme.md","maxBytes":"3"}`, "# N", "text", true},
		{"maxBytes clamped up to 1", `{"path":"readme.md","maxBytes":-9}`, "#", "text", true},
		{"absolute path in a root", `{"path":"$DOCS/notes/a.txt"}`, "alpha", "text", false},
		{"names in any case", `{"Path":"readme.md","ROOT":"docs"}`, "# Notes\n", "text", false},
		{"a symbolic link inside the root", `{"path":"alias.md"}`, "# Notes\n", "text", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, _ := h.Call(files.ReadFileToolID, strings.ReplaceAll(tc.args, "$DOCS", s.docs))
			c := decode(t, v)
			if got := c.bytes(t); string(got) != tc.want || c.ContentType != tc.contentType || c.Truncated != tc.truncated || c.BytesRead != len(tc.want) {
				t.Errorf("read %q (%s, truncated %v, %d bytes read), want %q (%s, %v)", got, c.ContentType, c.Truncated, c.BytesRead, tc.want, tc.contentType, tc.truncated)
			}
		})
	}
	for _, tc := range []struct{ name, args, reason string }{
		{"no path", `{}`, "invalid_argument"},
		{"maxBytes not an integer", `{"path":"readme.md","maxBytes":"ten"}`, "invalid_argument"},
		{"maxBytes above 32 bits", `{"path":"readme.md","maxBytes":4294967296}`, "invalid_argument"},
		{"unknown encoding", `{"path":"readme.md","encoding":"latin1"}`, "invalid_argument"},
		{"utf8 forced on binary", `{"path":"bin/blob.dat","encoding":"utf8"}`, "not_text"},
		{"a directory", `{"root":"docs","path":"notes"}`, "not_a_file"},
		{"missing", `{"root":"docs","path":"nope.txt"}`, "not_found"},
		{"up the tree", `{"root":"docs","path":"../secret.txt"}`, "outside_root"},
		{"a link out of the root", `{"root":"docs","path":"up"}`, "outside_root"},
		{"through a directory link out of the root", `{"root":"docs","path":"escape/secret.txt"}`, "outside_root"},
		{"absolute outside", `{"path":"$DIR/secret.txt"}`, "outside_root"},
		{"ambiguous", `{"path":"notes/a.txt"}`, "ambiguous_path"},
		{"unknown root", `{"root":"cache","path":"a"}`, "root_unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := h.Fail(files.ReadFileToolID, strings.ReplaceAll(tc.args, "$DIR", s.dir))
			if e.Code != files.CodeReadFailed || reason(t, e) != tc.reason || strings.Contains(e.Message, "the app's secret") {
				t.Errorf("%s: %s %q %s, want %s (%s)", tc.args, e.Code, e.Message, e.Details, files.CodeReadFailed, tc.reason)
			}
		})
	}
}

// TestDownloadFilePaged reads a file chunk by chunk, each time sending the nextRequest of
// the chunk before as it is (its integers are strings), until there is none.
func TestDownloadFilePaged(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	data := bytes.Repeat([]byte("0123456789abcdef\x00"), 3000) // 51 000 bytes, binary
	s.writeFile(t, "big.bin", data)
	h := s.harness(t, s.options())
	for _, enc := range []string{"auto", "base64"} {
		t.Run(enc, func(t *testing.T) {
			var got []byte
			req := fmt.Sprintf(`{"toolId":%q,"arguments":{"path":"big.bin","maxBytes":20000,"encoding":%q}}`, files.DownloadFileToolID, enc)
			chunks := 0
			for {
				chunks++
				r := h.Send(wire.TypeCall, req)
				if r.Err != nil {
					t.Fatalf("chunk %d: %v", chunks, r.Err)
				}
				c := decode(t, r.Result.Result)
				got = append(got, c.bytes(t)...)
				if !c.HasMore {
					if c.NextRequest != nil || c.NextOffset != nil {
						t.Errorf("last chunk: nextRequest %v, nextOffsetBytes %v", c.NextRequest, c.NextOffset)
					}
					break
				}
				args := c.NextRequest.Arguments
				if c.NextRequest.ToolID != files.DownloadFileToolID || args["root"] != "docs" || args["path"] != "big.bin" ||
					args["offsetBytes"] != fmt.Sprint(*c.NextOffset) || args["maxBytes"] != "20000" || args["encoding"] != enc ||
					args["expectedVersion"] != c.Version {
					t.Fatalf("nextRequest = %+v (offset %d, version %s)", c.NextRequest, *c.NextOffset, c.Version)
				}
				b, _ := wire.Marshal(c.NextRequest)
				req = string(b)
			}
			if !bytes.Equal(got, data) || chunks != 3 {
				t.Errorf("%d bytes in %d chunks, want %d in 3", len(got), chunks, len(data))
			}
		})
	}

	// The file changes between chunks: the next one is refused with the version it had.
	c := decode(t, first(h.Call(files.DownloadFileToolID, `{"path":"big.bin","maxBytes":"100"}`)))
	s.writeFile(t, "big.bin", append(data, 'x'))
	if err := os.Chtimes(filepath.Join(s.docs, "big.bin"), pinnedNow, time.Now()); err != nil {
		t.Fatal(err)
	}
	next, _ := wire.Marshal(c.NextRequest.Arguments)
	e := h.Fail(files.DownloadFileToolID, string(next))
	if e.Code != files.CodeVersionMismatch || !strings.Contains(e.Message, "Restart the download from offset 0.") || !strings.Contains(e.Message, c.Version) {
		t.Errorf("changed file: %v", e)
	}
	// An offset at the end is an empty last chunk; past it, refused.
	size := len(data) + 1
	end := decode(t, first(h.Call(files.DownloadFileToolID, fmt.Sprintf(`{"path":"big.bin","offsetBytes":%d}`, size))))
	if end.BytesRead != 0 || end.HasMore {
		t.Errorf("at the end: %+v", end)
	}
	if e := h.Fail(files.DownloadFileToolID, fmt.Sprintf(`{"path":"big.bin","offsetBytes":"%d"}`, size+1)); e.Code != files.CodeOffsetInvalid {
		t.Errorf("past the end: %v", e)
	}
	for _, args := range []string{`{"path":"big.bin","offsetBytes":"-"}`, `{"path":"big.bin","maxBytes":1.5}`, `{"root":"docs","path":"up"}`} {
		if e := h.Fail(files.DownloadFileToolID, args); e.Code != files.CodeDownloadChunkFailed {
			t.Errorf("%s: %v", args, e)
		}
	}
}

func first(v jsontext.Value, _ apptest.Response) jsontext.Value { return v }

func TestChecksum(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	h := s.harness(t, s.options())
	sum := sha256.Sum256([]byte("# Notes\n"))
	for _, tc := range []struct{ args, want string }{
		{`{"path":"readme.md"}`, "sha256=" + hex.EncodeToString(sum[:])},
		{`{"path":"readme.md","algorithms":"crc32"}`, "crc32=bdd0f5eb"},
		{`{"path":"readme.md","algorithms":"SHA-256;crc md5,\tsha1 md5"}`, "sha256=" + hex.EncodeToString(sum[:]) +
			" crc32=bdd0f5eb md5=2eda88c1773ff53e8169b1f56f066d5e sha1=3029c96dd0b8ecd69fc7c41c3f44460dcb298b9f"},
		{`{"path":"readme.md","algorithms":"sha2_512"}`, "sha512="},
		{`{"path":"readme.md","algorithms":"md5 all"}`, "md5= sha1= sha256= sha384= sha512= crc32="},
	} {
		v, _ := h.Call(files.GetFileChecksumToolID, tc.args)
		var res struct {
			Checksums []struct {
				Algorithm string `json:"algorithm"`
				Checksum  string `json:"checksum"`
				Encoding  string `json:"encoding"`
			} `json:"checksums"`
		}
		if err := wire.Unmarshal(v, &res); err != nil {
			t.Fatal(err)
		}
		var got []string
		for i, c := range res.Checksums {
			want := strings.Fields(tc.want)[i]
			name, digest, _ := strings.Cut(want, "=")
			if c.Algorithm != name || c.Encoding != "hex" || (digest != "" && c.Checksum != digest) {
				t.Errorf("%s: checksum %d = %+v, want %s", tc.args, i, c, want)
			}
			got = append(got, c.Algorithm)
		}
		if len(got) != len(strings.Fields(tc.want)) {
			t.Errorf("%s: algorithms %v, want %s", tc.args, got, tc.want)
		}
	}
	for _, args := range []string{`{"path":"readme.md","algorithms":"sha3"}`, `{"path":"readme.md","algorithms":",;"}`, `{"root":"docs","path":"up"}`} {
		if e := h.Fail(files.GetFileChecksumToolID, args); e.Code != files.CodeChecksumFailed {
			t.Errorf("%s: %v", args, e)
		}
	}
}
