package files

import (
	"context"
	"io"
	"io/fs"
	"os"
	"strconv"
	"time"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/internal/flatargs"
	"github.com/ansight-go/ansight/wire"
)

// Bounds of the read tools (the official SDKs' numbers).
const (
	defaultReadBytes  = 64 << 10  // files.read_file's maxBytes default
	defaultChunkBytes = 256 << 10 // files.download_file's maxBytes default
	maxContentBytes   = 1 << 20   // both tools' maxBytes maximum
)

// openRegular resolves a request's root and path to a regular file and opens it through its
// root (so it cannot be outside it). The info is the open file's own, so that what the
// result says (size, version) is what was read.
func (t *tree) openRegular(rootArg, pathArg string) (target, *os.File, fs.FileInfo, error) {
	if pathArg == "" {
		return target{}, nil, nil, failure(reasonInvalidArgument, "The argument 'path' is required.")
	}
	g, err := t.resolve(rootArg, pathArg, isFile)
	if err != nil {
		return g, nil, nil, err
	}
	f, err := openFile(g)
	if err != nil {
		return g, nil, nil, err
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
		err = fsFailure(g, err)
	case !fi.Mode().IsRegular():
		err = failure(reasonNotAFile, "%s in root %q is not a regular file", g.slash(), g.root.Alias)
	}
	if err != nil {
		f.Close()
		return g, nil, nil, err
	}
	return g, f, fi, nil
}

// readAt reads up to n bytes of f from off.
func readAt(ctx context.Context, f *os.File, off int64, n int) ([]byte, error) {
	b := make([]byte, n)
	got, err := f.ReadAt(b, off)
	if err == io.EOF {
		err = nil
	}
	if err == nil {
		err = ctx.Err()
	}
	return b[:got], err
}

type readResult struct {
	fileFields
	BytesRead     int       `json:"bytesRead"`
	Truncated     bool      `json:"truncated" jsonschema:"the file is longer than what was read"`
	CapturedAtUtc time.Time `json:"capturedAtUtc"`
	content
}

// readFile runs files.read_file: the first maxBytes (64 KiB by default, at most 1 MiB) of a
// file, as text or base64.
func (t *tree) readFile(ctx context.Context, c *app.Call, in map[string]string) (*readResult, error) {
	fail := func(g target, err error) (*readResult, error) { return nil, toolFailure(CodeReadFailed, g, err) }
	a, err := flatargs.New(in)
	if err != nil {
		return fail(target{}, err)
	}
	max, err := a.Int("maxBytes", defaultReadBytes, 1, maxContentBytes)
	if err != nil {
		return fail(target{}, err)
	}
	enc, err := encoding(a)
	if err != nil {
		return fail(target{}, err)
	}
	g, f, fi, err := t.openRegular(a.Str("root"), a.Str("path"))
	if err != nil {
		return fail(g, err)
	}
	defer f.Close()
	b, err := readAt(ctx, f, 0, int(min(fi.Size(), int64(max))))
	if err != nil {
		return fail(g, fsFailure(g, err))
	}
	body, err := encode(b, mimeType(fi.Name()), enc)
	if err != nil {
		return fail(g, err)
	}
	return &readResult{fileFields: t.describeFile(g, fi), BytesRead: len(b), Truncated: fi.Size() > int64(len(b)),
		CapturedAtUtc: c.Now().UTC(), content: body}, nil
}

type chunkResult struct {
	fileFields
	OffsetBytes       int64     `json:"offsetBytes"`
	RequestedMaxBytes int       `json:"requestedMaxBytes"`
	BytesRead         int       `json:"bytesRead"`
	HasMore           bool      `json:"hasMore"`
	NextOffsetBytes   *int64    `json:"nextOffsetBytes" jsonschema:"where the next chunk starts, or null at the end"`
	CapturedAtUtc     time.Time `json:"capturedAtUtc"`
	content
	NextRequest *nextChunk `json:"nextRequest" jsonschema:"the call that reads the next chunk, or null at the end"`
}

// nextChunk is a ready files.download_file call for the next chunk. Its integers are
// strings, as the official SDKs write them: the tool takes either.
type nextChunk struct {
	ToolID    string `json:"toolId"`
	Arguments struct {
		Root            string `json:"root"`
		Path            string `json:"path" jsonschema:"relative to the root, with forward slashes"`
		OffsetBytes     string `json:"offsetBytes"`
		MaxBytes        string `json:"maxBytes"`
		Encoding        string `json:"encoding" jsonschema:"auto, utf8 or base64, as requested"`
		ExpectedVersion string `json:"expectedVersion" jsonschema:"the version the chunks so far were read from"`
	} `json:"arguments"`
}

// downloadFile runs files.download_file: one chunk of a file from offsetBytes, with the
// request for the next one. A caller that sends the version of the chunks before as
// expectedVersion is refused (filesystem_download_version_mismatch) when the file changed
// meanwhile, rather than given a chunk of another file.
func (t *tree) downloadFile(ctx context.Context, c *app.Call, in map[string]string) (*chunkResult, error) {
	fail := func(code wire.Code, g target, err error) (*chunkResult, error) { return nil, toolFailure(code, g, err) }
	a, err := flatargs.New(in)
	if err != nil {
		return fail(CodeDownloadChunkFailed, target{}, err)
	}
	g, f, fi, err := t.openRegular(a.Str("root"), a.Str("path"))
	if err != nil {
		return fail(CodeDownloadChunkFailed, g, err)
	}
	defer f.Close()
	v := version(fi)
	if want := a.Str("expectedVersion"); want != "" && want != v {
		return fail(CodeVersionMismatch, g, failure(reasonVersionMismatch,
			"The file version changed from '%s' to '%s'. Restart the download from offset 0.", want, v))
	}
	off, err := a.Int64("offsetBytes", 0, 0, 1<<63-1)
	if err != nil {
		return fail(CodeDownloadChunkFailed, g, err)
	}
	if off > fi.Size() {
		return fail(CodeOffsetInvalid, g, failure(reasonOffsetInvalid,
			"The offset '%d' is beyond the end of the file (%d bytes).", off, fi.Size()))
	}
	max, err := a.Int("maxBytes", defaultChunkBytes, 1, maxContentBytes)
	if err != nil {
		return fail(CodeDownloadChunkFailed, g, err)
	}
	enc, err := encoding(a)
	if err != nil {
		return fail(CodeDownloadChunkFailed, g, err)
	}
	b, err := readAt(ctx, f, off, int(min(fi.Size()-off, int64(max))))
	if err != nil {
		return fail(CodeDownloadChunkFailed, g, fsFailure(g, err))
	}
	body, err := encode(b, mimeType(fi.Name()), enc)
	if err != nil {
		return fail(CodeDownloadChunkFailed, g, err)
	}
	res := &chunkResult{fileFields: t.describeFile(g, fi), OffsetBytes: off, RequestedMaxBytes: max, BytesRead: len(b),
		CapturedAtUtc: c.Now().UTC(), content: body}
	if next := off + int64(len(b)); next < fi.Size() {
		res.HasMore, res.NextOffsetBytes = true, &next
		n := &nextChunk{ToolID: DownloadFileToolID}
		n.Arguments.Root, n.Arguments.Path = g.root.Alias, g.slash()
		n.Arguments.OffsetBytes, n.Arguments.MaxBytes = strconv.FormatInt(next, 10), strconv.Itoa(max)
		n.Arguments.Encoding, n.Arguments.ExpectedVersion = enc, v
		res.NextRequest = n
	}
	return res, nil
}
