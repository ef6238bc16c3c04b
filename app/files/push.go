package files

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ansight-go/ansight/app"
)

type pushArgs struct {
	Root            *string `json:"root,omitzero" jsonschema:"the root's alias (default: the root that holds directoryPath, else the first)"`
	DirectoryPath   string  `json:"directoryPath" jsonschema:"the destination directory, relative to the root (. for the root itself)"`
	FileName        string  `json:"fileName" jsonschema:"the destination file name: one name, not a path"`
	ContentBase64   *string `json:"contentBase64,omitzero" jsonschema:"the content, standard base64; give exactly one of contentBase64 and text"`
	Text            *string `json:"text,omitzero" jsonschema:"the content as UTF-8 text; give exactly one of contentBase64 and text"`
	Overwrite       *bool   `json:"overwrite,omitzero" jsonschema:"replace an existing file (default false)"`
	CreateDirectory *bool   `json:"createDirectory,omitzero" jsonschema:"create the destination directory when missing (default true)"`
}

type pushResult struct {
	fileFields
	Operation        string    `json:"operation" jsonschema:"created or overwritten"`
	Overwritten      bool      `json:"overwritten"`
	CreatedDirectory bool      `json:"createdDirectory"`
	CapturedAtUtc    time.Time `json:"capturedAtUtc"`
}

// push runs files.push_file. The content is checked before anything is written; a new
// file is created exclusively, a replaced one is written aside and renamed over the old
// one, so a failed push never leaves a partial file under the destination name.
func (t *tree) push(ctx context.Context, c *app.Call, a pushArgs) (*pushResult, error) {
	dirArg := strings.TrimSpace(a.DirectoryPath)
	if dirArg == "" {
		dirArg = "." // the official host sends the remote directory it is given, possibly "."
	}
	g, err := t.resolve(str(a.Root), dirArg, isDir)
	if err != nil {
		return nil, toolFailure(CodePushFailed, g, err)
	}
	if g.root.ReadOnly {
		return nil, toolFailure(CodePushFailed, g, failure(reasonReadOnly, "root %q is read-only", g.root.Alias))
	}
	name, err := fileName(a.FileName)
	if err != nil {
		return nil, toolFailure(CodePushFailed, g, err)
	}
	content, err := t.content(a)
	if err != nil {
		return nil, toolFailure(CodePushFailed, g, err)
	}
	dest := target{g.root, filepath.Join(g.rel, name)}
	r, err := g.open()
	if err != nil {
		return nil, toolFailure(CodePushFailed, dest, fsFailure(dest, err))
	}
	defer r.Close()

	createdDir := false
	switch fi, err := r.Stat(g.rel); {
	case errors.Is(err, fs.ErrNotExist):
		if a.CreateDirectory != nil && !*a.CreateDirectory {
			return nil, toolFailure(CodePushFailed, g, failure(reasonNotFound, "directory %s does not exist in root %q (createDirectory is false)", g.slash(), g.root.Alias))
		}
		if err := r.MkdirAll(g.rel, 0o755); err != nil {
			return nil, toolFailure(CodePushFailed, g, fsFailure(g, err))
		}
		createdDir = true
	case err != nil:
		return nil, toolFailure(CodePushFailed, g, fsFailure(g, err))
	case !fi.IsDir():
		return nil, toolFailure(CodePushFailed, g, failure(reasonNotADirectory, "%s in root %q is not a directory", g.slash(), g.root.Alias))
	}

	overwritten := false
	if fi, err := r.Lstat(dest.rel); err == nil {
		switch {
		case !flag(a.Overwrite):
			return nil, toolFailure(CodePushFailed, dest, failure(reasonExists, "%s exists in root %q; set overwrite to replace it", dest.slash(), g.root.Alias))
		case !fi.Mode().IsRegular():
			return nil, toolFailure(CodePushFailed, dest, failure(reasonNotAFile, "%s in root %q is not a regular file", dest.slash(), g.root.Alias))
		}
		overwritten = true
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if overwritten {
		err = replace(r, dest.rel, bytes.NewReader(content))
	} else {
		err = create(r, dest.rel, bytes.NewReader(content))
	}
	if err != nil {
		return nil, toolFailure(CodePushFailed, dest, err)
	}
	fi, err := r.Stat(dest.rel)
	if err != nil {
		return nil, toolFailure(CodePushFailed, dest, fsFailure(dest, err))
	}
	op := "created"
	if overwritten {
		op = "overwritten"
	}
	return &pushResult{fileFields: t.describeFile(dest, fi), Operation: op, Overwritten: overwritten,
		CreatedDirectory: createdDir, CapturedAtUtc: c.Now().UTC()}, nil
}

// fileName checks that name is one plain file name, as the official SDKs require.
func fileName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") || !filepath.IsLocal(name) || len(name) > 255 {
		return "", failure(reasonInvalidFileName, "fileName %q must be a file name, not a path", name)
	}
	return name, nil
}

// content decodes the pushed content: exactly one of contentBase64 and text, at most
// MaxPushBytes. The size is checked before decoding.
func (t *tree) content(a pushArgs) ([]byte, error) {
	max := t.opts.MaxPushBytes
	switch {
	case (a.ContentBase64 == nil) == (a.Text == nil):
		return nil, failure(reasonInvalidContent, "give exactly one of contentBase64 and text")
	case a.Text != nil:
		if n := int64(len(*a.Text)); n > max {
			return nil, failure(reasonTooLarge, "the text is %d bytes, more than the %d this app accepts", n, max)
		}
		return []byte(*a.Text), nil
	}
	enc := strings.TrimSpace(*a.ContentBase64)
	if n := int64(base64.StdEncoding.DecodedLen(len(enc))); n > max+2 { // DecodedLen counts padding
		return nil, failure(reasonTooLarge, "the content is about %d bytes, more than the %d this app accepts", n, max)
	}
	b, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return nil, failure(reasonInvalidContent, "contentBase64 is not standard base64: %v", err)
	}
	if int64(len(b)) > max {
		return nil, failure(reasonTooLarge, "the content is %d bytes, more than the %d this app accepts", len(b), max)
	}
	return b, nil
}

// create writes a new file from src, refusing to replace one created meanwhile. A failed
// write removes what it wrote.
func create(r *os.Root, rel string, src io.Reader) error {
	f, err := r.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return failure(reasonExists, "%s was created meanwhile; set overwrite to replace it", filepath.ToSlash(rel))
	}
	if err != nil {
		return failure(reasonIO, "creating %s: %v", filepath.ToSlash(rel), unwrapPath(err))
	}
	return finish(r, rel, f, src)
}

// replace writes src beside rel and renames it over rel: readers see the old file or the
// new one, never a mix. A symbolic link at rel is replaced, never written through.
func replace(r *os.Root, rel string, src io.Reader) error {
	var random [8]byte
	_, _ = rand.Read(random[:])
	tmp := filepath.Join(filepath.Dir(rel), ".ansight-write-"+hex.EncodeToString(random[:])+".tmp")
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return failure(reasonIO, "writing beside %s: %v", filepath.ToSlash(rel), unwrapPath(err))
	}
	if err := finish(r, tmp, f, src); err != nil {
		return err
	}
	if err := r.Rename(tmp, rel); err != nil {
		_ = r.Remove(tmp)
		return failure(reasonIO, "replacing %s: %v", filepath.ToSlash(rel), unwrapPath(err))
	}
	return nil
}

// finish writes src to f (the file rel) and closes it, removing it on failure.
func finish(r *os.Root, rel string, f *os.File, src io.Reader) error {
	_, err := io.Copy(f, src)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = r.Remove(rel)
		return failure(reasonIO, "writing %s: %v", filepath.ToSlash(rel), unwrapPath(err))
	}
	return nil
}
