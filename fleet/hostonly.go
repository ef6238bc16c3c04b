package fleet

import (
	"context"
	"io"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// What stays on each host — pairing, shutdown, disconnecting a session, the web player, a
// session's crash reports, annotations and recording — is never served over the fleet: a Client refuses it, naming the command to
// run on the host, except for the sessions of its Home host, which it serves in process.

// hostOnly refuses what stays on each host, naming where to run it.
func (c *Client) hostOnly(what, command string) error {
	return apiError(wire.CodeNotSupported, "%s stay on each host and are not served over the fleet: run '%s' on the host", what, command)
}

// Crashes implements hostapi.Backend for the Home host's sessions.
func (c *Client) Crashes(ctx context.Context, sessionID string) (*hostapi.Crashes, error) {
	t, err := c.resolve(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if !t.home {
		return nil, c.hostOnly("crash reports", "ansight session crashes "+t.sid)
	}
	return c.opts.Home.Backend.Crashes(ctx, t.sid)
}

// Annotations implements hostapi.Backend for the Home host's sessions.
func (c *Client) Annotations(ctx context.Context, sessionID string) (*hostapi.Annotations, error) {
	t, err := c.resolve(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if !t.home {
		return nil, c.hostOnly("annotations", "ansight session annotations "+t.sid)
	}
	return c.opts.Home.Backend.Annotations(ctx, t.sid)
}

// IssueInvite implements hostapi.Backend: the Home host's, or refused. A fleet client
// never pairs devices with another host: pairing would widen grants.
func (c *Client) IssueInvite(ctx context.Context, req hostapi.InviteRequest) (*hostapi.Invite, error) {
	if c.opts.Home == nil {
		return nil, c.hostOnly("pairings", "ansight pairing issue")
	}
	return c.opts.Home.Backend.IssueInvite(ctx, req)
}

// Invites implements hostapi.Backend: the Home host's, or refused.
func (c *Client) Invites(ctx context.Context) (*hostapi.Invites, error) {
	if c.opts.Home == nil {
		return nil, c.hostOnly("pairings", "ansight pairing list")
	}
	return c.opts.Home.Backend.Invites(ctx)
}

// Revoke implements hostapi.Backend: the Home host's, or refused.
func (c *Client) Revoke(ctx context.Context, id string) (*hostapi.Revocation, error) {
	if c.opts.Home == nil {
		return nil, c.hostOnly("pairings", "ansight pairing revoke "+id)
	}
	return c.opts.Home.Backend.Revoke(ctx, id)
}

// Forget implements hostapi.Backend: the Home host's, or refused.
func (c *Client) Forget(ctx context.Context, id string) (*hostapi.Forgetting, error) {
	if c.opts.Home == nil {
		return nil, c.hostOnly("pairings", "ansight pairing forget "+id)
	}
	return c.opts.Home.Backend.Forget(ctx, id)
}

// Shutdown implements hostapi.Backend: the Home host's, or refused.
func (c *Client) Shutdown(ctx context.Context) error {
	if c.opts.Home == nil {
		return c.hostOnly("hosts", "ansight host stop")
	}
	return c.opts.Home.Backend.Shutdown(ctx)
}

// Disconnect implements hostapi.Backend for the Home host's sessions: ending another
// host's session is that host's to do.
func (c *Client) Disconnect(ctx context.Context, sessionID string) (*hostapi.Disconnection, error) {
	sid, err := c.homeSession(ctx, sessionID, "disconnections", "ansight session disconnect")
	if err != nil {
		return nil, err
	}
	return c.opts.Home.Backend.Disconnect(ctx, sid)
}

// Player implements hostapi.Backend: the Home host's player, or refused (each host's
// player has a token of its own).
func (c *Client) Player(ctx context.Context, renew bool) (*hostapi.PlayerAccess, error) {
	if c.opts.Home == nil {
		return nil, c.hostOnly("players", "ansight player url")
	}
	return c.opts.Home.Backend.Player(ctx, renew)
}

// homeSession resolves a session the Home host serves, or refuses what stays on hosts.
func (c *Client) homeSession(ctx context.Context, sessionID, what, command string) (string, error) {
	t, err := c.resolve(ctx, sessionID)
	if err != nil {
		return "", err
	}
	if !t.home {
		return "", c.hostOnly(what, command+" "+t.sid)
	}
	return t.sid, nil
}

// Recordings implements hostapi.Backend: the Home host's, or refused.
func (c *Client) Recordings(ctx context.Context) (*hostapi.Sessions, error) {
	if c.opts.Home == nil {
		return nil, c.hostOnly("recordings", "ansight session list --all")
	}
	s, err := c.opts.Home.Backend.Recordings(ctx)
	if err == nil {
		for i := range s.Sessions {
			s.Sessions[i].Host = c.opts.Home.Name
		}
	}
	return s, err
}

// Records implements hostapi.Backend for the Home host's sessions.
func (c *Client) Records(ctx context.Context, sessionID string, req hostapi.RecordsRequest) (*hostapi.Records, error) {
	sid, err := c.homeSession(ctx, sessionID, "recordings", "ansight session logs")
	if err != nil {
		return nil, err
	}
	return c.opts.Home.Backend.Records(ctx, sid, req)
}

// Follow implements hostapi.Backend for the Home host's sessions.
func (c *Client) Follow(ctx context.Context, sessionID string, req hostapi.RecordsRequest, fn func(hostapi.Record) error) error {
	sid, err := c.homeSession(ctx, sessionID, "recordings", "ansight session logs --follow")
	if err != nil {
		return err
	}
	return c.opts.Home.Backend.Follow(ctx, sid, req, fn)
}

// Blob implements hostapi.Backend for the Home host's sessions.
func (c *Client) Blob(ctx context.Context, sessionID string, seq int64) (*hostapi.Blob, error) {
	sid, err := c.homeSession(ctx, sessionID, "recordings", "ansight session artifacts")
	if err != nil {
		return nil, err
	}
	return c.opts.Home.Backend.Blob(ctx, sid, seq)
}

// Export implements hostapi.Backend for the Home host's sessions.
func (c *Client) Export(ctx context.Context, sessionID string, req hostapi.ExportRequest, w io.Writer) error {
	sid, err := c.homeSession(ctx, sessionID, "recordings", "ansight session export")
	if err != nil {
		return err
	}
	return c.opts.Home.Backend.Export(ctx, sid, req, w)
}

// Import implements hostapi.Backend: into the Home host, or refused.
func (c *Client) Import(ctx context.Context, req hostapi.ImportRequest, archive io.Reader) (*hostapi.Session, error) {
	if c.opts.Home == nil {
		return nil, c.hostOnly("recordings", "ansight session import")
	}
	return c.opts.Home.Backend.Import(ctx, req, archive)
}

// DeleteRecording implements hostapi.Backend for the Home host's sessions.
func (c *Client) DeleteRecording(ctx context.Context, sessionID string) error {
	sid, err := c.homeSession(ctx, sessionID, "recordings", "ansight session delete")
	if err != nil {
		return err
	}
	return c.opts.Home.Backend.DeleteRecording(ctx, sid)
}
