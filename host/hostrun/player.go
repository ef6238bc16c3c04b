package hostrun

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ansight-go/ansight/player"
)

// The player's access token lives in the state directory, beside the pairing store, so
// that a tab stays open across restarts of the host: a host stopped under an open page
// comes back with the same token, and the page reconnects by itself. Only the user can
// read it (the directory is private, the file 0600), as only the user can reach the
// control socket, which is worth more. Renewing it ('ansight player url --new-token')
// locks every open page out.

// PlayerTokenName is the token's file in the state directory.
const PlayerTokenName = "player-token"

// playerToken returns the token kept in stateDir, or makes one (and keeps it) when there is
// none, it is unreadable or not private, or renew asks for a new one.
func playerToken(stateDir string, renew bool) (string, error) {
	path := filepath.Join(stateDir, PlayerTokenName)
	if !renew {
		if tok, ok := readPlayerToken(path); ok {
			return tok, nil
		}
	}
	tok := player.NewToken()
	tmp, err := os.CreateTemp(stateDir, ".player-token-*")
	if err != nil {
		return "", fmt.Errorf("player token: %w", err)
	}
	_, err = tmp.WriteString(tok + "\n")
	if err == nil {
		err = tmp.Chmod(0o600)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("player token: %w", err)
	}
	return tok, nil
}

// readPlayerToken reads a kept token: a private regular file holding one token.
func readPlayerToken(path string) (string, bool) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 || fi.Size() > 256 {
		return "", false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < 32 || strings.Trim(tok, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
		return "", false
	}
	return tok, true
}

// playerAccess is what the control API needs of the player (control.PlayerAccessor): its
// address, and its URL with the token, renewed on demand.
type playerAccess struct{ h *Host }

// PlayerAddress implements control.PlayerAccessor.
func (a playerAccess) PlayerAddress() string { return "http://" + a.h.playerAddr + "/" }

// PlayerURL implements control.PlayerAccessor.
func (a playerAccess) PlayerURL(renew bool) (string, error) {
	if renew {
		tok, err := playerToken(a.h.opts.StateDir, true)
		if err != nil {
			return "", err
		}
		a.h.player.SetToken(tok)
	}
	return a.h.player.URL(a.h.playerAddr), nil
}
