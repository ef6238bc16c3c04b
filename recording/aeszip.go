package recording

import (
	"archive/zip"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
)

// WinZip AES (the "AE-1"/"AE-2" format that SharpZipLib writes for the official SDKs'
// password-protected offline captures), read with the standard library alone: no
// maintained Go module reads it (the forks of archive/zip that did are years without a
// release), and the format is small. An encrypted entry has compression method 99 and an
// extra field 0x9901 naming the real method and the key size; its data is
//
//	salt (8, 12 or 16 bytes) | password verifier (2) | AES-CTR ciphertext | HMAC-SHA1 (10)
//
// with the keys derived by PBKDF2-HMAC-SHA1 (1000 rounds) from the password and the salt,
// and a little-endian block counter starting at 1. The HMAC covers the ciphertext; AE-1
// entries also keep the plain data's CRC-32, AE-2 entries leave it 0.

// methodWinZipAES is the compression method of a WinZip AES entry.
const methodWinZipAES = 99

// aesExtraID is the extra field that describes a WinZip AES entry.
const aesExtraID = 0x9901

// aesRounds is WinZip AES's PBKDF2 iteration count.
const aesRounds = 1000

// aesMACBytes is the length of the authentication code after the ciphertext.
const aesMACBytes = 10

// aesEntry is what an encrypted entry's extra field says.
type aesEntry struct {
	version  uint16 // 1 (AE-1: CRC kept) or 2 (AE-2: CRC 0)
	keyBytes int    // 16, 24 or 32
	method   uint16 // the compression method under the encryption
}

// saltBytes is the salt's length for the key size.
func (a aesEntry) saltBytes() int { return a.keyBytes / 2 }

// errNotAES: an encrypted entry of another scheme (the old PKWARE "ZipCrypto").
var errNotAES = errors.New("the entry is encrypted with a scheme other than WinZip AES (only AES is read)")

// parseAESExtra finds the WinZip AES field among an entry's extra fields.
func parseAESExtra(extra []byte) (aesEntry, error) {
	for len(extra) >= 4 {
		id := binary.LittleEndian.Uint16(extra)
		n := int(binary.LittleEndian.Uint16(extra[2:]))
		if len(extra) < 4+n {
			break
		}
		body := extra[4 : 4+n]
		extra = extra[4+n:]
		if id != aesExtraID {
			continue
		}
		if n < 7 || body[2] != 'A' || body[3] != 'E' {
			return aesEntry{}, errors.New("malformed WinZip AES field")
		}
		a := aesEntry{version: binary.LittleEndian.Uint16(body), method: binary.LittleEndian.Uint16(body[5:])}
		switch body[4] {
		case 1:
			a.keyBytes = 16
		case 2:
			a.keyBytes = 24
		case 3:
			a.keyBytes = 32
		default:
			return aesEntry{}, fmt.Errorf("WinZip AES key strength %d is not 1, 2 or 3", body[4])
		}
		if a.version != 1 && a.version != 2 {
			return aesEntry{}, fmt.Errorf("WinZip AES version %d is not 1 or 2", a.version)
		}
		return a, nil
	}
	return aesEntry{}, errNotAES
}

// aesKeys derives an entry's encryption key, MAC key and password verifier.
func aesKeys(password string, salt []byte, keyBytes int) (key, macKey, verifier []byte, err error) {
	dk, err := pbkdf2.Key(sha1.New, password, salt, aesRounds, 2*keyBytes+2)
	if err != nil {
		return nil, nil, nil, err
	}
	return dk[:keyBytes], dk[keyBytes : 2*keyBytes], dk[2*keyBytes:], nil
}

// openAES returns a reader of an encrypted entry's plain (still compressed) data, having
// checked the password verifier. The authentication code is checked when the data ends:
// the last Read before io.EOF fails with a *PasswordError of ReasonInvalidPassword when it
// does not match (a wrong password that passed the 16-bit verifier, or damaged data).
func openAES(f *zip.File, password string) (*aesReader, aesEntry, error) {
	a, err := parseAESExtra(f.Extra)
	if err != nil {
		return nil, a, err
	}
	raw, err := f.OpenRaw()
	if err != nil {
		return nil, a, err
	}
	overhead := uint64(a.saltBytes() + 2 + aesMACBytes)
	if f.CompressedSize64 < overhead {
		return nil, a, errors.New("encrypted entry is shorter than its salt and authentication code")
	}
	head := make([]byte, a.saltBytes()+2)
	if _, err := io.ReadFull(raw, head); err != nil {
		return nil, a, err
	}
	key, macKey, verifier, err := aesKeys(password, head[:a.saltBytes()], a.keyBytes)
	if err != nil {
		return nil, a, err
	}
	if subtle.ConstantTimeCompare(verifier, head[a.saltBytes():]) != 1 {
		return nil, a, &PasswordError{Reason: ReasonInvalidPassword}
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, a, err
	}
	return &aesReader{src: raw, left: int64(f.CompressedSize64 - overhead), block: block,
		mac: hmac.New(sha1.New, macKey), counter: 1}, a, nil
}

// aesReader decrypts WinZip AES's CTR stream and checks its HMAC at the end.
type aesReader struct {
	src     io.Reader
	left    int64 // ciphertext bytes not read yet
	block   cipher.Block
	mac     hash.Hash
	counter uint64
	stream  [aes.BlockSize]byte // the current key stream block
	used    int                 // bytes of stream used
	done    bool
}

func (r *aesReader) Read(p []byte) (int, error) {
	if r.left == 0 {
		if !r.done {
			r.done = true
			want := make([]byte, aesMACBytes)
			if _, err := io.ReadFull(r.src, want); err != nil {
				return 0, &PasswordError{Reason: ReasonInvalidPassword}
			}
			if !hmac.Equal(r.mac.Sum(nil)[:aesMACBytes], want) {
				return 0, &PasswordError{Reason: ReasonInvalidPassword}
			}
		}
		return 0, io.EOF
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.src.Read(p)
	r.mac.Write(p[:n])
	for i := range n {
		if r.used == 0 || r.used == aes.BlockSize {
			var ctr [aes.BlockSize]byte
			binary.LittleEndian.PutUint64(ctr[:], r.counter)
			r.counter++
			r.block.Encrypt(r.stream[:], ctr[:])
			r.used = 0
		}
		p[i] ^= r.stream[r.used]
		r.used++
	}
	r.left -= int64(n)
	if err == io.EOF && r.left > 0 {
		err = io.ErrUnexpectedEOF
	} else if err == io.EOF {
		err = nil
	}
	return n, err
}

// Official reasons of a refused password (the official host's SessionImportFailureReason).
const (
	ReasonPasswordRequired = "PasswordRequired"
	ReasonInvalidPassword  = "InvalidPassword"
)

// PasswordError refuses an encrypted archive: Reason is ReasonPasswordRequired (no
// password given) or ReasonInvalidPassword (a wrong one, or damaged encrypted data). Its
// messages are the official host's words.
type PasswordError struct{ Reason string }

func (e *PasswordError) Error() string {
	if e.Reason == ReasonPasswordRequired {
		return "This recording is password protected."
	}
	return "The recording password is incorrect, or the encrypted archive is damaged."
}
