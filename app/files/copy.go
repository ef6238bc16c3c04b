package files

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/internal/flatargs"
)

// DefaultMaxCopyBytes bounds the files files.copy_file copies (and files.move_file moves
// across roots, which is a copy) unless Options.MaxCopyBytes says otherwise.
const DefaultMaxCopyBytes = 4 << 30

// transferResult is the result of files.copy_file and files.move_file: the destination
// file, what happened, and both ends.
type transferResult struct {
	fileFields
	Operation               string    `json:"operation" jsonschema:"copied or moved"`
	Overwritten             bool      `json:"overwritten"`
	CreatedDirectory        bool      `json:"createdDirectory"`
	CapturedAtUtc           time.Time `json:"capturedAtUtc"`
	SourceRootAlias         string    `json:"sourceRootAlias"`
	SourceRootPath          string    `json:"sourceRootPath"`
	SourceFilePath          string    `json:"sourceFilePath"`
	SourceRelativePath      string    `json:"sourceRelativePath"`
	DestinationRootAlias    string    `json:"destinationRootAlias"`
	DestinationRootPath     string    `json:"destinationRootPath"`
	DestinationFilePath     string    `json:"destinationFilePath"`
	DestinationRelativePath string    `json:"destinationRelativePath"`
}

func (t *tree) copyFile(ctx context.Context, c *app.Call, in map[string]string) (*transferResult, error) {
	return t.transfer(ctx, c, in, false)
}

func (t *tree) moveFile(ctx context.Context, c *app.Call, in map[string]string) (*transferResult, error) {
	return t.transfer(ctx, c, in, true)
}

// transfer copies or moves a file: sourcePath under root (the source's root) to
// destinationPath under destinationRoot, which defaults to the source's root for a
// relative destination (an absolute one names its root by lying inside it). It refuses a
// destination that is the source, an existing directory, an existing file unless
// overwrite, a missing directory unless createDirectory (true by default), and a
// read-only root for the destination (and, when moving, the source). A new file is
// created exclusively; a replaced one is written aside and renamed over, never written
// through a symbolic link. A move within one root is a rename; across roots, a copy and
// the removal of the source.
func (t *tree) transfer(ctx context.Context, c *app.Call, in map[string]string, move bool) (*transferResult, error) {
	code, op := CodeCopyFailed, "copied"
	if move {
		code, op = CodeMoveFailed, "moved"
	}
	a, err := flatargs.New(in)
	if err != nil {
		return nil, toolFailure(code, target{}, err)
	}
	res, g, err := t.doTransfer(ctx, c, a, move)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		return nil, toolFailure(code, g, err)
	}
	res.Operation = op
	return res, nil
}

// doTransfer does transfer's work; a failure comes with the target it is about.
func (t *tree) doTransfer(ctx context.Context, c *app.Call, a flatargs.Args, move bool) (_ *transferResult, at target, _ error) {
	srcPath, err := a.Required("sourcePath")
	if err != nil {
		return nil, target{}, err
	}
	dstPath, err := a.Required("destinationPath")
	if err != nil {
		return nil, target{}, err
	}
	overwrite, err := a.Bool("overwrite", false)
	if err != nil {
		return nil, target{}, err
	}
	mkdir, err := a.Bool("createDirectory", true)
	if err != nil {
		return nil, target{}, err
	}
	src, f, fi, err := t.openRegular(a.Str("root"), srcPath)
	if err != nil {
		return nil, src, (err)
	}
	defer f.Close()
	if move && src.root.ReadOnly {
		return nil, src, (failure(reasonReadOnly, "root %q is read-only: its files are not moved", src.root.Alias))
	}
	if size := fi.Size(); size > t.opts.MaxCopyBytes {
		return nil, src, (failure(reasonTooLarge, "%s is %d bytes, more than the %d this app copies", src.slash(), size, t.opts.MaxCopyBytes))
	}
	dstRoot := a.Str("destinationRoot")
	if dstRoot == "" && !filepath.IsAbs(dstPath) && !strings.HasPrefix(dstPath, "/") {
		dstRoot = src.root.Alias
	}
	dst, err := t.resolve(dstRoot, dstPath, isFile)
	if err != nil {
		return nil, dst, (err)
	}
	switch {
	case dst.rel == ".":
		return nil, dst, (failure(reasonNotAFile, "the destination is the root %q itself", dst.root.Alias))
	case dst.root == src.root && dst.rel == src.rel:
		return nil, dst, (failure(reasonSamePath, "The source and destination file paths must be different."))
	case dst.root.ReadOnly:
		return nil, dst, (failure(reasonReadOnly, "root %q is read-only", dst.root.Alias))
	}
	r, err := dst.open()
	if err != nil {
		return nil, dst, (fsFailure(dst, err))
	}
	defer r.Close()

	overwritten := false
	if dfi, err := r.Lstat(dst.rel); err == nil {
		switch {
		case dfi.IsDir():
			return nil, dst, (failure(reasonNotAFile, "The destination %s in root %q is an existing directory.", dst.slash(), dst.root.Alias))
		case sameFile(r, dst.rel, fi):
			// Another name of the source (roots that nest, a link): replacing it and then
			// removing the source would lose the file.
			return nil, dst, (failure(reasonSamePath, "The destination %s in root %q is the source file itself, by another name.", dst.slash(), dst.root.Alias))
		case !overwrite:
			return nil, dst, (failure(reasonExists, "The destination file %s in root %q already exists. Set 'overwrite' to true to replace it.", dst.slash(), dst.root.Alias))
		}
		overwritten = true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, dst, (fsFailure(dst, err))
	}
	createdDir, err := parentDir(r, dst, mkdir)
	if err != nil {
		return nil, dst, (err)
	}
	if err := ctx.Err(); err != nil {
		return nil, target{}, err
	}

	switch {
	case move && dst.root == src.root:
		f.Close()
		if err := r.Rename(src.rel, dst.rel); err != nil {
			return nil, dst, (failure(reasonIO, "moving %s to %s: %v", src.slash(), dst.slash(), unwrapPath(err)))
		}
	default:
		body := ctxReader{ctx, io.LimitReader(f, t.opts.MaxCopyBytes)}
		if overwritten {
			err = replace(r, dst.rel, body)
		} else {
			err = create(r, dst.rel, body)
		}
		if err != nil {
			return nil, dst, (err)
		}
		if move {
			f.Close()
			if err := removeFile(src); err != nil {
				return nil, src, (err)
			}
		}
	}
	dfi, err := r.Stat(dst.rel)
	if err != nil {
		return nil, dst, (fsFailure(dst, err))
	}
	return &transferResult{fileFields: t.describeFile(dst, dfi), Overwritten: overwritten, CreatedDirectory: createdDir,
		CapturedAtUtc:   c.Now().UTC(),
		SourceRootAlias: src.root.Alias, SourceRootPath: src.root.Path, SourceFilePath: src.abs(), SourceRelativePath: src.slash(),
		DestinationRootAlias: dst.root.Alias, DestinationRootPath: dst.root.Path, DestinationFilePath: dst.abs(),
		DestinationRelativePath: dst.slash()}, dst, nil
}

// sameFile reports whether rel in r, its links followed, is the file fi describes.
func sameFile(r *os.Root, rel string, fi fs.FileInfo) bool {
	dfi, err := r.Stat(rel)
	return err == nil && os.SameFile(dfi, fi)
}

// parentDir makes sure the directory of g exists in r: created when mkdir (reporting that
// it was), else a failure.
func parentDir(r *os.Root, g target, mkdir bool) (created bool, _ error) {
	dir := target{g.root, filepath.Dir(g.rel)}
	switch fi, err := r.Stat(dir.rel); {
	case errors.Is(err, fs.ErrNotExist):
		if !mkdir {
			return false, failure(reasonNotFound, "The destination directory %s does not exist in root %q (createDirectory is false).", dir.slash(), g.root.Alias)
		}
		if err := r.MkdirAll(dir.rel, 0o755); err != nil {
			return false, fsFailure(dir, err)
		}
		return true, nil
	case err != nil:
		return false, fsFailure(dir, err)
	case !fi.IsDir():
		return false, failure(reasonNotADirectory, "%s in root %q is not a directory", dir.slash(), g.root.Alias)
	}
	return false, nil
}

// removeFile removes the file g through its root.
func removeFile(g target) error {
	r, err := g.open()
	if err != nil {
		return fsFailure(g, err)
	}
	defer r.Close()
	if err := r.Remove(g.rel); err != nil {
		return fsFailure(g, err)
	}
	return nil
}

type deleteResult struct {
	fileFields
	Deleted       bool      `json:"deleted"`
	CapturedAtUtc time.Time `json:"capturedAtUtc"`
}

// deleteFile runs files.delete_file (critical): a regular file, described as it was before.
// Directories are not deleted, nor files of a read-only root.
func (t *tree) deleteFile(_ context.Context, c *app.Call, in map[string]string) (*deleteResult, error) {
	a, err := flatargs.New(in)
	if err != nil {
		return nil, toolFailure(CodeDeleteFailed, target{}, err)
	}
	g, f, fi, err := t.openRegular(a.Str("root"), a.Str("path"))
	if err != nil {
		return nil, toolFailure(CodeDeleteFailed, g, err)
	}
	f.Close()
	if g.root.ReadOnly {
		return nil, toolFailure(CodeDeleteFailed, g, failure(reasonReadOnly, "root %q is read-only", g.root.Alias))
	}
	desc := t.describeFile(g, fi)
	if err := removeFile(g); err != nil {
		return nil, toolFailure(CodeDeleteFailed, g, err)
	}
	return &deleteResult{fileFields: desc, Deleted: true, CapturedAtUtc: c.Now().UTC()}, nil
}
