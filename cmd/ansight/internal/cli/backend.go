package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/fleet"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// stateDir is the host state directory for this run.
func (g *globals) stateDirPath() (string, error) {
	if g.stateDir != "" {
		return g.stateDir, nil
	}
	return hostapi.DefaultStateDir()
}

// backend returns a client of the resident host's control API, or of the fleet that
// --fleet names (one per run).
func (g *globals) backend() (hostapi.Backend, error) {
	if g.backendMade != nil {
		return g.backendMade, nil
	}
	if cfg, ok := g.fleetConfig(); ok {
		c, err := g.fleetClient(cfg)
		if err != nil {
			return nil, err
		}
		g.backendMade = hostapi.WithOrigin(c, hostapi.OriginCLI)
		return g.backendMade, nil
	}
	dir, err := g.stateDirPath()
	if err != nil {
		return nil, err
	}
	// Every call the CLI makes is recorded as the CLI's (ansight test record --origin cli).
	return hostapi.WithOrigin(hostapi.NewClient(filepath.Join(dir, hostapi.SocketName)), hostapi.OriginCLI), nil
}

// fleetOf returns the fleet client behind b, when b is one.
func fleetOf(b hostapi.Backend) (*fleet.Client, bool) {
	if u, ok := b.(interface{ Unwrap() hostapi.Backend }); ok {
		b = u.Unwrap()
	}
	fc, ok := b.(*fleet.Client)
	return fc, ok
}

// session connects to the resident host and resolves the session a command names.
func (g *globals) session(ctx context.Context, sel *sessionSelector, args []string) (hostapi.Backend, string, error) {
	b, err := g.backend()
	if err != nil {
		return nil, "", err
	}
	id, err := sel.resolve(ctx, b, args)
	return b, id, err
}

// ask sends the resident host one request about one thing (a session, a pairing), as
// ask(g, ctx, hostapi.Backend.Session, id): the host's failures come with their exit codes
// and hints (hostErr).
func ask[A, R any](g *globals, ctx context.Context, req func(hostapi.Backend, context.Context, A) (R, error), arg A) (R, error) {
	b, err := g.backend()
	if err != nil {
		var zero R
		return zero, err
	}
	r, err := req(b, ctx, arg)
	return r, hostErr(err)
}

// transfer sends a request that may bring artifacts back (hostapi.Backend.Call or Batch) to
// the session a command names, showing the transfers' progress on a terminal.
func transfer[Q, R any](g *globals, ctx context.Context, sel *sessionSelector, args []string, send func(hostapi.Backend, context.Context, string, Q, func(hostapi.Progress)) (R, error), req Q) (R, error) {
	b, id, err := g.session(ctx, sel, args)
	if err != nil {
		var zero R
		return zero, err
	}
	bar := g.progress()
	res, err := send(b, ctx, id, req, bar.update)
	bar.done()
	return res, hostErr(err)
}

// hostErr gives host failures their exit codes and hints.
func hostErr(err error) error {
	if err == nil {
		return nil
	}
	if e := fleetErr(err); e != nil {
		return e
	}
	if errors.Is(err, hostapi.ErrHostUnavailable) {
		// "no ansight host is running (socket …)": the dial's own words add nothing when
		// there is no socket or nobody listens on it.
		msg := err.Error()
		if i := strings.Index(msg, "): "); i >= 0 && (strings.HasSuffix(msg, "no such file or directory") || strings.HasSuffix(msg, "connection refused")) {
			err = fmt.Errorf("%w%s", hostapi.ErrHostUnavailable, strings.TrimPrefix(msg[:i+1], hostapi.ErrHostUnavailable.Error()))
		}
		return &exitError{code: ExitHostUnavailable, err: err, errCode: string(wire.CodeHostUnavailable), hint: "start one with 'ansight host run' (or 'ansight demo --keep-running')"}
	}
	// The host's code goes to --json's error.code, for scripts and agents to branch on.
	switch code := wire.CodeOf(err); code {
	case wire.CodeSessionNotFound: // the message names 'ansight session list'
		return &exitError{code: ExitNoSession, err: err, errCode: string(code)}
	case wire.CodeSessionAmbiguous:
		return &exitError{code: ExitUsage, err: err, errCode: string(code), hint: "name one session id (ansight session list)"}
	case wire.CodeSessionClosed:
		return &exitError{code: ExitNoSession, err: err, errCode: string(code), hint: "an app that is still running reconnects on its own, under a new session id: 'ansight session list' shows it"}
	case wire.CodeTimeout:
		return timeoutError(err)
	}
	return err
}

// sessionSelector is how commands pick a session: an id argument, --app-id, or the only
// connected session.
type sessionSelector struct {
	appID string
	// lone is the one positional argument of a command whose session argument may be
	// left out ('app call [session] <tool-id>'), taken as the tool id; resolve refuses it
	// as a usage mistake when it names a session (the tool id is missing), with usage.
	lone, usage string
}

// addFlag registers --app-id on cmd.
func (s *sessionSelector) addFlag(cmd *cobra.Command) {
	cmd.Flags().StringVar(&s.appID, "app-id", "", "select the session of this app (when exactly one is connected)")
}

func (s *sessionSelector) resolve(ctx context.Context, b hostapi.Backend, args []string) (string, error) {
	if len(args) > 0 && args[0] != "" {
		if s.appID != "" {
			return "", usageErrorf("give a session id or --app-id, not both")
		}
		return args[0], nil
	}
	list, err := b.Sessions(ctx)
	if err != nil {
		return "", hostErr(err)
	}
	var matches []hostapi.Session
	for _, ss := range list.Sessions {
		if s.lone != "" && ss.ID == s.lone {
			return "", &exitError{code: ExitUsage, err: fmt.Errorf("%s names a session: give the tool id after it", s.lone), hint: "usage: " + s.usage}
		}
		if ss.State != hostapi.StateConnected {
			continue
		}
		if s.appID == "" || ss.AppID == s.appID {
			matches = append(matches, ss)
		}
	}
	switch {
	case len(matches) == 1:
		return matches[0].ID, nil
	case len(matches) == 0 && s.appID != "":
		return "", &exitError{code: ExitNoSession, err: fmt.Errorf("no connected session of app %q (see 'ansight session list')", s.appID)}
	case len(matches) == 0:
		return "", &exitError{code: ExitNoSession, err: errors.New("no app is connected"), hint: "start an app with the Ansight SDK (or 'ansight demo --keep-running'), then 'ansight session list'"}
	}
	ids := make([]string, len(matches))
	for i, m := range matches {
		ids[i] = m.ID + " (" + m.AppID + ")"
	}
	sort.Strings(ids)
	what := "sessions are connected"
	if s.appID != "" {
		what = "sessions match --app-id " + s.appID
	}
	return "", &exitError{code: ExitUsage, err: fmt.Errorf("%d %s: %s", len(matches), what, strings.Join(ids, ", ")), hint: "name one session id"}
}
