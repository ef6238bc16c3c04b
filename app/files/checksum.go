package files

import (
	"context"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"hash"
	"hash/crc32"
	"io"
	"strings"
	"time"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/internal/flatargs"
)

// The checksum algorithms, in the order "all" lists them.
var checksumAlgorithms = []string{"md5", "sha1", "sha256", "sha384", "sha512", "crc32"}

// newHash returns the hash of a checksum algorithm. crc32 is IEEE's, written as 8 hex digits.
func newHash(algorithm string) hash.Hash {
	switch algorithm {
	case "md5":
		return md5.New()
	case "sha1":
		return sha1.New()
	case "sha384":
		return sha512.New384()
	case "sha512":
		return sha512.New()
	case "crc32":
		return crc32.NewIEEE()
	}
	return sha256.New()
}

// algorithms reads the algorithms argument: names separated by commas, semicolons or white
// space, in any case, '-' and '_' ignored ("SHA-256", "sha2_256"), "crc" for crc32, "all"
// for every one; sha256 by default. They are computed in the order given, each once.
func algorithms(a flatargs.Args) ([]string, error) {
	v := a.Str("algorithms")
	if v == "" {
		return []string{"sha256"}, nil
	}
	var out []string
	for _, tok := range strings.FieldsFunc(v, func(r rune) bool { return strings.ContainsRune(",; \t\r\n", r) }) {
		name := strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(tok))
		switch name {
		case "all":
			return checksumAlgorithms, nil
		case "crc":
			name = "crc32"
		case "sha2256", "sha2384", "sha2512":
			name = "sha" + name[4:]
		}
		known := false
		for _, k := range checksumAlgorithms {
			known = known || k == name
		}
		if !known {
			return nil, failure(reasonInvalidArgument, "Unsupported checksum algorithm '%s'. Supported algorithms: %s.", tok, strings.Join(checksumAlgorithms, ", "))
		}
		dup := false
		for _, o := range out {
			dup = dup || o == name
		}
		if !dup {
			out = append(out, name)
		}
	}
	if len(out) == 0 {
		return nil, failure(reasonInvalidArgument, "At least one checksum algorithm must be requested.")
	}
	return out, nil
}

type checksum struct {
	Algorithm string `json:"algorithm"`
	Checksum  string `json:"checksum" jsonschema:"lower-case hex"`
	Encoding  string `json:"encoding" jsonschema:"hex"`
}

type checksumResult struct {
	fileFields
	Checksums     []checksum `json:"checksums" jsonschema:"in the order requested"`
	CapturedAtUtc time.Time  `json:"capturedAtUtc"`
}

// checksum runs files.get_file_checksum: the digests of a file, read once for all of them,
// without returning its content. A long file is read until the caller goes away.
func (t *tree) checksum(ctx context.Context, c *app.Call, in map[string]string) (*checksumResult, error) {
	a, err := flatargs.New(in)
	if err != nil {
		return nil, toolFailure(CodeChecksumFailed, target{}, err)
	}
	names, err := algorithms(a)
	if err != nil {
		return nil, toolFailure(CodeChecksumFailed, target{}, err)
	}
	g, f, fi, err := t.openRegular(a.Str("root"), a.Str("path"))
	if err != nil {
		return nil, toolFailure(CodeChecksumFailed, g, err)
	}
	defer f.Close()
	hashes := make([]hash.Hash, len(names))
	writers := make([]io.Writer, len(names))
	for i, n := range names {
		hashes[i] = newHash(n)
		writers[i] = hashes[i]
	}
	if _, err := io.Copy(io.MultiWriter(writers...), ctxReader{ctx, f}); err != nil {
		return nil, toolFailure(CodeChecksumFailed, g, fsFailure(g, err))
	}
	res := &checksumResult{fileFields: t.describeFile(g, fi), CapturedAtUtc: c.Now().UTC()}
	for i, n := range names {
		res.Checksums = append(res.Checksums, checksum{Algorithm: n, Checksum: hex.EncodeToString(hashes[i].Sum(nil)), Encoding: "hex"})
	}
	return res, nil
}

// ctxReader stops reading once ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (r ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}
