package recording

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"unicode/utf8"
)

// Bounds of an archive opened for import.
const (
	// maxArchiveEntries bounds the entries of one archive: the central directory is read
	// into memory whole.
	maxArchiveEntries = 200_000
	// maxEntryName bounds an entry's name.
	maxEntryName = 1024
)

// zipArchive is an untrusted zip archive opened for reading: it is refused whole, before
// anything is extracted, when an entry name is unsafe (absolute, with a backslash, a "."
// or ".." segment, a control character, invalid UTF-8), repeated (also only by case), a
// symbolic link or another special file, or when the sizes it declares exceed the budget.
// Entries are then read through checkedReader, which holds every entry to its declared
// size and CRC-32 as it copies (a zip bomb inflates no further than it says), and the
// total actually read to the budget. Encrypted entries (WinZip AES) need the password.
type zipArchive struct {
	zr       *zip.Reader
	files    map[string]*zip.File // regular files by name
	names    []string             // their names, sorted
	password string
	budget   int64 // bytes the entries may unpack to, in all
	read     int64 // bytes read so far
	// encrypted reports whether any entry is encrypted.
	encrypted bool
}

// openZip opens an archive of size bytes, to unpack to at most budget bytes. An archive
// with encrypted entries needs password: without one the error is a *PasswordError of
// ReasonPasswordRequired, with a wrong one ReasonInvalidPassword (checked against the
// first encrypted entry before anything is read).
func openZip(ra io.ReaderAt, size, budget int64, password string) (*zipArchive, error) {
	if n, ok := centralDirectorySize(ra, size); ok && n > maxCentralDirectory {
		return nil, fmt.Errorf("the archive's directory is %d bytes, more than %d", n, maxCentralDirectory)
	}
	zr, err := zip.NewReader(ra, size)
	if err != nil {
		return nil, fmt.Errorf("not a zip archive: %w", err)
	}
	if len(zr.File) > maxArchiveEntries {
		return nil, fmt.Errorf("the archive has %d entries, more than %d", len(zr.File), maxArchiveEntries)
	}
	z := &zipArchive{zr: zr, files: map[string]*zip.File{}, password: password, budget: budget}
	folded := map[string]string{}
	var declared uint64
	var firstEncrypted *zip.File
	for _, f := range zr.File {
		if err := checkEntryName(f.Name); err != nil {
			return nil, err
		}
		dir := strings.HasSuffix(f.Name, "/")
		mode := f.Mode()
		switch {
		case mode&fs.ModeSymlink != 0:
			return nil, fmt.Errorf("entry %q is a symbolic link", f.Name)
		case !dir && !mode.IsRegular():
			return nil, fmt.Errorf("entry %q is not a regular file (%v)", f.Name, mode.Type())
		}
		key := strings.ToLower(strings.TrimSuffix(f.Name, "/"))
		if prev, ok := folded[key]; ok {
			if prev == f.Name {
				return nil, fmt.Errorf("entry %q appears twice", f.Name)
			}
			return nil, fmt.Errorf("entries %q and %q differ only by case", prev, f.Name)
		}
		folded[key] = f.Name
		if dir {
			continue
		}
		if f.UncompressedSize64 > uint64(budget) || f.CompressedSize64 > uint64(size) {
			return nil, fmt.Errorf("entry %q declares %d bytes, more than the budget of %d", f.Name, f.UncompressedSize64, budget)
		}
		declared += f.UncompressedSize64
		if declared > uint64(budget) {
			return nil, fmt.Errorf("the archive holds more than the recordings' budget of %d bytes", budget)
		}
		if f.Flags&0x1 != 0 {
			z.encrypted = true
			if firstEncrypted == nil {
				firstEncrypted = f
			}
		}
		z.files[f.Name] = f
		z.names = append(z.names, f.Name)
	}
	sort.Strings(z.names)
	if z.encrypted {
		if password == "" {
			return nil, &PasswordError{Reason: ReasonPasswordRequired}
		}
		if _, _, err := openAES(firstEncrypted, password); err != nil {
			return nil, err
		}
	}
	return z, nil
}

// maxCentralDirectory bounds the archive's central directory, which archive/zip reads into
// memory whole, entry comments and extra fields included (up to 64 KiB each): without it an
// archive as large as the budget could be almost all directory. 64 MiB holds the
// maxArchiveEntries entries with names of 300 bytes. A variable for the tests.
var maxCentralDirectory int64 = 64 << 20

// centralDirectorySize reads the size of the central directory from the end of the archive
// (its end record, or the ZIP64 one it points at); ok is false when there is none to read,
// and archive/zip then says what is wrong.
func centralDirectorySize(ra io.ReaderAt, size int64) (n int64, ok bool) {
	const eocdLen, maxComment = 22, 65535
	tail := min(size, eocdLen+maxComment)
	buf := make([]byte, tail)
	if _, err := ra.ReadAt(buf, size-tail); err != nil && err != io.EOF {
		return 0, false
	}
	i := bytes.LastIndex(buf, []byte("PK\x05\x06"))
	if i < 0 || len(buf)-i < eocdLen {
		return 0, false
	}
	n = int64(binary.LittleEndian.Uint32(buf[i+12:]))
	if n != 0xffffffff || i < 20 || string(buf[i-20:i-16]) != "PK\x06\x07" {
		return n, true
	}
	// ZIP64: the locator before the end record gives the ZIP64 end record's offset.
	off := int64(binary.LittleEndian.Uint64(buf[i-20+8:]))
	var z64 [56]byte
	if off < 0 || off > size-56 {
		return 0, false
	}
	if _, err := ra.ReadAt(z64[:], off); err != nil || string(z64[:4]) != "PK\x06\x06" {
		return 0, false
	}
	n64 := binary.LittleEndian.Uint64(z64[40:])
	if n64 > uint64(size) {
		return size + 1, true
	}
	return int64(n64), true
}

// checkEntryName refuses a name that could point outside where it is extracted or that
// different systems would read differently.
func checkEntryName(name string) error {
	switch {
	case name == "" || name == "/":
		return errors.New("an entry has no name")
	case len(name) > maxEntryName:
		return fmt.Errorf("an entry name is longer than %d bytes", maxEntryName)
	case !utf8.ValidString(name):
		return fmt.Errorf("entry name %q is not valid UTF-8", name)
	case strings.HasPrefix(name, "/"):
		return fmt.Errorf("entry name %q is absolute", name)
	case strings.Contains(name, `\`):
		return fmt.Errorf("entry name %q has a backslash", name)
	case len(name) >= 2 && name[1] == ':':
		return fmt.Errorf("entry name %q starts with a drive letter", name)
	}
	for _, c := range name {
		if c < 0x20 || c == 0x7f {
			return fmt.Errorf("entry name %q has a control character", name)
		}
	}
	for _, seg := range strings.Split(strings.TrimSuffix(name, "/"), "/") {
		switch seg {
		case "":
			return fmt.Errorf("entry name %q has an empty segment", name)
		case ".", "..":
			return fmt.Errorf("entry name %q has a %q segment", name, seg)
		}
	}
	return nil
}

// has reports whether the archive holds a regular file of that name.
func (z *zipArchive) has(name string) bool { return z.files[name] != nil }

// size is an entry's declared size.
func (z *zipArchive) size(name string) int64 { return int64(z.files[name].UncompressedSize64) }

// open returns a reader of an entry's content, held to its declared size, its CRC-32 (or,
// encrypted, its authentication code) and the archive's budget.
func (z *zipArchive) open(name string) (io.ReadCloser, error) {
	f := z.files[name]
	if f == nil {
		return nil, fmt.Errorf("%w: %s", fs.ErrNotExist, name)
	}
	if f.Flags&0x1 == 0 {
		if f.Method != zip.Store && f.Method != zip.Deflate {
			return nil, fmt.Errorf("entry %q uses compression method %d (only stored and deflated entries are read)", name, f.Method)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		return &checkedReader{z: z, r: rc, c: rc, name: name, want: f.UncompressedSize64, crc: f.CRC32, hash: crc32.NewIEEE()}, nil
	}
	if f.Method != methodWinZipAES {
		return nil, fmt.Errorf("entry %q: %w", name, errNotAES)
	}
	plain, a, err := openAES(f, z.password)
	if err != nil {
		return nil, err
	}
	cr := &checkedReader{z: z, name: name, want: f.UncompressedSize64, hash: crc32.NewIEEE(), aes: plain}
	if a.version == 1 {
		cr.crc = f.CRC32
	}
	switch a.method {
	case zip.Store:
		cr.r = plain
	case zip.Deflate:
		fr := flate.NewReader(plain)
		cr.r, cr.c = fr, fr
	default:
		return nil, fmt.Errorf("entry %q uses compression method %d under its encryption", name, a.method)
	}
	return cr, nil
}

// readAll reads an entry of at most max bytes.
func (z *zipArchive) readAll(name string, max int64) ([]byte, error) {
	if n := z.size(name); n > max {
		return nil, fmt.Errorf("%s is %d bytes, more than %d", name, n, max)
	}
	rc, err := z.open(name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return b, nil
}

// extract copies an entry to a new file at dst (0600) and returns its size; a failed copy
// leaves no file.
func (z *zipArchive) extract(name, dst string) (int64, error) {
	rc, err := z.open(name)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, rc)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return n, nil
}

// under lists the regular files whose names start with prefix, sorted.
func (z *zipArchive) under(prefix string) []string {
	i := sort.SearchStrings(z.names, prefix)
	var out []string
	for ; i < len(z.names) && strings.HasPrefix(z.names[i], prefix); i++ {
		out = append(out, z.names[i])
	}
	return out
}

// checkedReader reads an entry no further than its declared size, fails when it ends
// short of it, checks its CRC-32 at the end (when crc is not 0) and counts what it read
// against the archive's budget.
type checkedReader struct {
	z    *zipArchive
	r    io.Reader
	c    io.Closer
	name string
	want uint64
	got  uint64
	crc  uint32
	hash hash.Hash32
	// aes is an encrypted entry's decryption, drained at the end so that its
	// authentication code is checked even when the inflater stopped reading early.
	aes *aesReader
}

// errInflates: an entry produced more than it declared, as a zip bomb does.
var errInflates = errors.New("the entry inflates past its declared size")

func (cr *checkedReader) Read(p []byte) (int, error) {
	if left := cr.want - cr.got; uint64(len(p)) > left+1 {
		p = p[:left+1] // one byte more than declared is enough to tell
	}
	n, err := cr.r.Read(p)
	cr.got += uint64(n)
	cr.z.read += int64(n)
	cr.hash.Write(p[:n])
	switch {
	case cr.got > cr.want:
		return 0, errInflates
	case cr.z.read > cr.z.budget:
		return 0, fmt.Errorf("the archive unpacks to more than the recordings' budget of %d bytes", cr.z.budget)
	case err == io.EOF && cr.got < cr.want:
		return n, fmt.Errorf("the entry ends after %d of its %d bytes", cr.got, cr.want)
	case err == io.EOF && cr.crc != 0 && cr.hash.Sum32() != cr.crc:
		return n, errors.New("the entry's CRC-32 does not match its content")
	case err == io.EOF && cr.aes != nil:
		if _, derr := io.Copy(io.Discard, cr.aes); derr != nil {
			return n, derr
		}
	case errors.Is(err, zip.ErrFormat):
		return 0, fmt.Errorf("%w, or its data is malformed", errInflates) // archive/zip's own check
	}
	return n, err
}

func (cr *checkedReader) Close() error {
	if cr.c != nil {
		return cr.c.Close()
	}
	return nil
}

// isJSONName reports whether an entry name ends in .json.
func isJSONName(name string) bool { return strings.EqualFold(path.Ext(name), ".json") }
