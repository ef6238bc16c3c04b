package connect

import (
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/ansight-go/ansight/pairing"
)

var discard = slog.New(slog.DiscardHandler)

func TestIdentityCreatedPrivateAndStable(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "ansight", "com.example.app")
	first, err := loadIdentity(dir, discard)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first.DeviceID, "go.") || len(first.DeviceID) != 35 {
		t.Errorf("deviceId %q is not go.<32 hex>", first.DeviceID)
	}
	if _, err := pairing.DecodeAccessToken(first.LocalToken); err != nil {
		t.Errorf("local token: %v", err)
	}
	again, err := loadIdentity(dir, discard)
	if err != nil {
		t.Fatal(err)
	}
	if again != first {
		t.Errorf("reload = %+v, want %+v", again, first)
	}
	if runtime.GOOS == "windows" {
		return
	}
	checkMode(t, dir, 0o700)
	checkMode(t, filepath.Join(dir, deviceIDFile), 0o600)
	checkMode(t, filepath.Join(dir, localTokenFile), 0o600)
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("state dir holds %d entries, want 2 (temporary files left behind?)", len(entries))
	}
}

func checkMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode().Perm(); got != want {
		t.Errorf("%s: mode %v, want %v", filepath.Base(path), got, want)
	}
}

func TestIdentityConcurrentFirstUseAgrees(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const n = 8
	ids := make([]identity, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			id, err := loadIdentity(dir, discard)
			if err != nil {
				t.Error(err)
			}
			ids[i] = id
		})
	}
	wg.Wait()
	for i := 1; i < n; i++ {
		if ids[i] != ids[0] {
			t.Fatalf("process %d got %+v, process 0 got %+v", i, ids[i], ids[0])
		}
	}
}

func TestIdentityDamagedFileIsAnError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file, content string
	}{
		{"short token", localTokenFile, "abc"},
		{"token not base64url", localTokenFile, strings.Repeat("*", 43)},
		{"blank device id", deviceIDFile, "   "},
		{"device id with space", deviceIDFile, "go. 1234"},
		{"oversized", deviceIDFile, strings.Repeat("a", maxStateFile+1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, tt.file), []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := loadIdentity(dir, discard)
			if err == nil {
				t.Fatal("loadIdentity accepted a damaged file")
			}
			if strings.Contains(err.Error(), tt.content) && len(tt.content) > 3 {
				t.Errorf("error echoes the file content: %v", err)
			}
		})
	}
}

func TestIdentityRepairsReadableFile(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no POSIX modes")
	}
	dir := t.TempDir()
	want := pairing.NewToken(pairing.AccessTokenBytes)
	path := filepath.Join(dir, localTokenFile)
	if err := os.WriteFile(path, []byte(want+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o644) // whatever the umask
	id, err := loadIdentity(dir, discard)
	if err != nil {
		t.Fatal(err)
	}
	if id.LocalToken != want {
		t.Errorf("token = %q, want the stored one", id.LocalToken)
	}
	checkMode(t, path, 0o600)
}

func TestStateDirName(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"com.example.app", "com.example.app"},
		{"My_App-2", "My_App-2"},
		{"a/../b", "a%2F..%2Fb"},
		{"..", "%.."},
		{".", "%."},
		{`C:\x`, "C%3A%5Cx"},
		{"ü", "%C3%BC"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			if got := stateDirName(tt.in); got != tt.want {
				t.Errorf("stateDirName(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestProcessSessionIDStable(t *testing.T) {
	t.Parallel()
	a, b := ProcessSessionID(), ProcessSessionID()
	if a != b || !strings.HasPrefix(a, "go.") || len(a) != 35 {
		t.Errorf("ProcessSessionID() = %q then %q", a, b)
	}
}
