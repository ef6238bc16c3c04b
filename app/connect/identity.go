package connect

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/ansight-go/ansight/pairing"
)

// State files inside the per-app state directory. Plain one-line files, like the .NET SDK's
// device-identities/<appId>.txt and .token, so that an operator can inspect or delete them.
const (
	deviceIDFile   = "device-id"
	localTokenFile = "local-token"
	maxStateFile   = 1 << 10 // both values are well under 100 bytes
)

// identity is what a process presents in every ENROLLMENT_CONNECT: the installation's
// deviceId and, in local mode, the token the host trusted on first use. Both survive restarts
// so that the host finds the same grant again.
type identity struct {
	DeviceID   string
	LocalToken string
}

// processSessionID identifies this OS process to hosts: a reconnect that presents the same
// value resumes the same host session. It lives as long as the process, like the official
// SDKs' ProcessSessionIdentity.
var processSessionID = sync.OnceValue(func() string { return "go." + randomHex(16) })

// ProcessSessionID returns the id this process presents as processSessionId in every
// enrollment. It is random, fixed for the life of the process, and shared by every [Run] in
// it: a host resumes the same session when the same app reconnects with it.
func ProcessSessionID() string { return processSessionID() }

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("connect: crypto/rand failed: %v", err))
	}
	return hex.EncodeToString(b)
}

// defaultStateDir returns <user config dir>/ansight/<appId>.
func defaultStateDir(appID string) (string, error) {
	base, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("connect: no user config directory for the state files (set Options.StateDir): %w", err)
	}
	return filepath.Join(base, "ansight", stateDirName(appID)), nil
}

// stateDirName maps an app id to one safe path element: letters, digits, '.', '-' and '_'
// stay, every other byte becomes %XX, so that ids never collide and "a/../b" cannot climb out
// of the state root. Names made only of dots are prefixed for the same reason.
func stateDirName(appID string) string {
	var b strings.Builder
	for i := 0; i < len(appID); i++ {
		c := appID[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-', c == '_':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	s := b.String()
	if strings.Trim(s, ".") == "" {
		s = "%" + s
	}
	return s
}

// loadIdentity reads the identity stored in dir, creating the missing parts. A value another
// process created first wins (files are published with a hard link, which fails when the name
// exists), so two processes of one app started together agree on one identity. A damaged file
// is an error rather than silently replaced: a new token would no longer match the host's grant.
func loadIdentity(dir string, log *slog.Logger) (identity, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return identity{}, fmt.Errorf("connect: state directory: %w", err)
	}
	deviceID, err := loadOrCreate(dir, deviceIDFile, func() string { return "go." + randomHex(16) }, checkDeviceID, log)
	if err != nil {
		return identity{}, err
	}
	token, err := loadOrCreate(dir, localTokenFile, func() string { return pairing.NewToken(pairing.AccessTokenBytes) }, checkLocalToken, log)
	if err != nil {
		return identity{}, err
	}
	return identity{DeviceID: deviceID, LocalToken: token}, nil
}

func checkDeviceID(s string) error {
	if s == "" || len(s) > 128 {
		return errors.New("empty or longer than 128 bytes")
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return errors.New("contains a control, space or non-ASCII byte")
		}
	}
	return nil
}

func checkLocalToken(s string) error {
	_, err := pairing.DecodeAccessToken(s)
	return err
}

func loadOrCreate(dir, name string, create func() string, check func(string) error, log *slog.Logger) (string, error) {
	path := filepath.Join(dir, name)
	for range 2 { // a second round only after losing a creation race to a broken writer
		v, err := readStateFile(path, log)
		if err == nil {
			if cerr := check(v); cerr != nil {
				return "", fmt.Errorf("connect: state file %s is damaged (%v); delete the directory %s to enroll as a new device", path, cerr, dir)
			}
			return v, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		v = create()
		err = publishStateFile(dir, name, v)
		if err == nil {
			return v, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("connect: state file %s keeps changing", path)
}

func readStateFile(path string, log *slog.Logger) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("connect: state file: %w", err)
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Errorf("connect: state file %s is not a regular file", path)
	}
	if info.Size() > maxStateFile {
		return "", fmt.Errorf("connect: state file %s is too large (%d bytes)", path, info.Size())
	}
	// Secrets must stay private to the user; repair a file that others can read.
	if runtime.GOOS != "windows" && info.Mode().Perm()&0o077 != 0 {
		if err := f.Chmod(0o600); err != nil {
			return "", fmt.Errorf("connect: state file %s is readable by others and cannot be fixed: %w", path, err)
		}
		log.Warn("ansight: state file was readable by other users; restricted it to mode 0600", "path", path)
	}
	b := make([]byte, info.Size())
	n, err := f.ReadAt(b, 0)
	if err != nil && n != len(b) {
		return "", fmt.Errorf("connect: state file: %w", err)
	}
	return strings.TrimSpace(string(b[:n])), nil
}

// publishStateFile writes value to a private temporary file and links it to its final name,
// so that readers never see a partial file and an existing file is never overwritten.
func publishStateFile(dir, name, value string) error {
	tmp, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return fmt.Errorf("connect: state file: %w", err)
	}
	defer os.Remove(tmp.Name())
	// CreateTemp already uses 0600; Chmod documents and enforces it whatever the umask.
	if err := tmp.Chmod(0o600); err != nil && runtime.GOOS != "windows" {
		tmp.Close()
		return fmt.Errorf("connect: state file: %w", err)
	}
	if _, err := tmp.WriteString(value + "\n"); err != nil {
		tmp.Close()
		return fmt.Errorf("connect: state file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("connect: state file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("connect: state file: %w", err)
	}
	if err := os.Link(tmp.Name(), filepath.Join(dir, name)); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return err
		}
		return fmt.Errorf("connect: state file: %w", err)
	}
	return nil
}
