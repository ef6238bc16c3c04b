package cli

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/host/control"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/recording"
)

// recordingsFlags are the flags of the read-only recordings commands (session list --all,
// show, logs and the other browse commands, crashes, annotations, artifacts, export):
// --archive browses an archive instead of the host's recordings, and --password-env opens
// an encrypted one.
type recordingsFlags struct {
	archive     string
	passwordEnv string
	// session is the archive's session, once --archive is open: the session of a command
	// given no session argument.
	session string
}

// addRecordingsFlags registers --archive and --password-env on cmd.
func (g *globals) addRecordingsFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&g.recordings.archive, "archive", "", "read this archive (ours, the official host's or an SDK's offline capture) instead of the host's recordings, without importing it; the session may then be left out")
	cmd.Flags().StringVar(&g.recordings.passwordEnv, "password-env", "", "the environment variable that holds the password of an encrypted archive")
}

// password reads the password --password-env names ("" without the flag).
func (f *recordingsFlags) password(env Env) (string, error) {
	if f.passwordEnv == "" {
		return "", nil
	}
	p, ok := env.lookupEnv(f.passwordEnv)
	if !ok || p == "" {
		return "", usageErrorf("--password-env %s: the variable is not set", f.passwordEnv)
	}
	return p, nil
}

// maxArchiveBytes bounds what --archive unpacks (the default recordings' budget).
const maxArchiveBytes = recording.DefaultMaxBytes

// recordingsBackend is the backend of a read-only recordings command: the archive
// --archive names, else the resident host (or the fleet), else — no host running — the
// recordings in the state directory, read directly and read-only (stderr says so).
func (g *globals) recordingsBackend(ctx context.Context) (hostapi.Backend, error) {
	if g.backendMade != nil {
		return g.backendMade, nil
	}
	if g.recordings.archive != "" {
		password, err := g.recordings.password(g.env)
		if err != nil {
			return nil, err
		}
		rec, sum, err := recording.OpenArchive(ctx, g.recordings.archive, maxArchiveBytes, recording.ImportOptions{Password: password})
		if err != nil {
			return nil, archiveErr(err)
		}
		g.cleanup = append(g.cleanup, func() { rec.Close() })
		g.recordings.session = sum.ID
		printf(g.env.Stderr, "ansight: reading the archive %s (session %s), not imported\n", g.recordings.archive, sum.ID)
		g.backendMade = control.NewOffline(rec, control.Options{Version: g.env.Version, Archive: filepath.Base(g.recordings.archive)})
		return g.backendMade, nil
	}
	b, err := g.backend()
	if err != nil {
		return nil, err
	}
	if _, ok := g.fleetConfig(); ok {
		return b, nil
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	_, err = b.Status(pctx)
	cancel()
	if !errors.Is(err, hostapi.ErrHostUnavailable) {
		return b, nil // a host answers (or fails otherwise: its error comes with the command's request)
	}
	dir, derr := g.stateDirPath()
	if derr != nil {
		return b, nil
	}
	dir = filepath.Join(dir, "recordings")
	rec, rerr := recording.OpenReadOnly(dir)
	if rerr != nil {
		return b, nil // no recordings either: the command says no host is running
	}
	g.cleanup = append(g.cleanup, func() { rec.Close() })
	printf(g.env.Stderr, "ansight: no host is running; reading the recordings in %s directly\n", dir)
	g.backendMade = control.NewOffline(rec, control.Options{Version: g.env.Version, StateDir: dir})
	return g.backendMade, nil
}

// recordingsOf is recordingsBackend for a command about one session: the session its
// argument names, else — with --archive, which holds one recording — the archive's.
func (g *globals) recordingsOf(ctx context.Context, args []string) (hostapi.Backend, string, error) {
	if len(args) == 0 && g.recordings.archive == "" {
		return nil, "", usageErrorf("name a session ('ansight session list --all' lists them), or give --archive FILE.zip")
	}
	b, err := g.recordingsBackend(ctx)
	if err != nil {
		return nil, "", err
	}
	if len(args) > 0 {
		return b, args[0], nil
	}
	return b, g.recordings.session, nil
}

// archiveErr gives an archive's refusal its exit code: a missing or wrong password is a
// usage error, with the official words and code (error.code in --json); any other
// refusal says that nothing was kept and where the formats are described.
func archiveErr(err error) error {
	var pe *recording.PasswordError
	switch {
	case errors.As(err, &pe):
		return passwordErr(pe)
	case errors.Is(err, fs.ErrNotExist):
		return &exitError{code: ExitFailure, err: err, hint: "check the archive's path"}
	}
	return &exitError{code: ExitFailure, err: err, hint: refusedHint}
}

// refusedHint is the next step after an archive was refused.
const refusedHint = "nothing was kept (an archive is refused whole); docs/recordings.md lists the formats ansight reads — ask its sender for a new export"

// passwordErr is the refusal of an encrypted archive: exit 2, the official words, and the
// official code (PasswordRequired, InvalidPassword) as error.code.
func passwordErr(pe *recording.PasswordError) error {
	hint := "give its password with --password-env NAME"
	if pe.Reason == recording.ReasonInvalidPassword {
		hint = "check the password in the variable --password-env names"
	}
	return &exitError{code: ExitUsage, err: errors.New(pe.Error()), hint: hint, errCode: pe.Reason}
}
