package fleet

import (
	"context"
	"io"

	"github.com/ansight-go/ansight/internal/control"
	"github.com/ansight-go/ansight/recording"
)

// What stays on each host — pairing, shutdown, a session's crash reports, annotations and
// recording — is never served over the fleet: a Client refuses it, naming the command to
// run on the host, except for the sessions of its Home host, which it serves in process.

// hostOnly refuses what stays on each host, naming where to run it.
func (c *Client) hostOnly(what, command string) error {
	return apiError(CodeNotSupported, "%s stay on each host and are not served over the fleet: run '%s' on the host", what, command)
}

// Crashes implements control.Backend for the Home host's sessions.
func (c *Client) Crashes(ctx context.Context, sessionID string) (*control.Crashes, error) {
	t, err := c.resolve(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if !t.home {
		return nil, c.hostOnly("crash reports", "ansight session crashes "+t.sid)
	}
	return c.opts.Home.Backend.Crashes(ctx, t.sid)
}

// Annotations implements control.Backend for the Home host's sessions.
func (c *Client) Annotations(ctx context.Context, sessionID string) (*control.Annotations, error) {
	t, err := c.resolve(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if !t.home {
		return nil, c.hostOnly("annotations", "ansight session annotations "+t.sid)
	}
	return c.opts.Home.Backend.Annotations(ctx, t.sid)
}

// IssueInvite implements control.Backend: the Home host's, or refused. A fleet client
// never pairs devices with another host: pairing would widen grants.
func (c *Client) IssueInvite(ctx context.Context, req control.InviteRequest) (*control.Invite, error) {
	if c.opts.Home == nil {
		return nil, c.hostOnly("pairings", "ansight pairing issue")
	}
	return c.opts.Home.Backend.IssueInvite(ctx, req)
}

// Invites implements control.Backend: the Home host's, or refused.
func (c *Client) Invites(ctx context.Context) (*control.Invites, error) {
	if c.opts.Home == nil {
		return nil, c.hostOnly("pairings", "ansight pairing list")
	}
	return c.opts.Home.Backend.Invites(ctx)
}

// Revoke implements control.Backend: the Home host's, or refused.
func (c *Client) Revoke(ctx context.Context, id string) (*control.Revocation, error) {
	if c.opts.Home == nil {
		return nil, c.hostOnly("pairings", "ansight pairing revoke "+id)
	}
	return c.opts.Home.Backend.Revoke(ctx, id)
}

// Shutdown implements control.Backend: the Home host's, or refused.
func (c *Client) Shutdown(ctx context.Context) error {
	if c.opts.Home == nil {
		return c.hostOnly("hosts", "ansight host stop")
	}
	return c.opts.Home.Backend.Shutdown(ctx)
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

// Recordings implements control.Backend: the Home host's, or refused.
func (c *Client) Recordings(ctx context.Context) (*control.Sessions, error) {
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

// Records implements control.Backend for the Home host's sessions.
func (c *Client) Records(ctx context.Context, sessionID string, req control.RecordsRequest) (*control.Records, error) {
	sid, err := c.homeSession(ctx, sessionID, "recordings", "ansight session logs")
	if err != nil {
		return nil, err
	}
	return c.opts.Home.Backend.Records(ctx, sid, req)
}

// Follow implements control.Backend for the Home host's sessions.
func (c *Client) Follow(ctx context.Context, sessionID string, req control.RecordsRequest, fn func(recording.Record) error) error {
	sid, err := c.homeSession(ctx, sessionID, "recordings", "ansight session logs --follow")
	if err != nil {
		return err
	}
	return c.opts.Home.Backend.Follow(ctx, sid, req, fn)
}

// Blob implements control.Backend for the Home host's sessions.
func (c *Client) Blob(ctx context.Context, sessionID string, seq int64) (*control.Blob, error) {
	sid, err := c.homeSession(ctx, sessionID, "recordings", "ansight session artifacts")
	if err != nil {
		return nil, err
	}
	return c.opts.Home.Backend.Blob(ctx, sid, seq)
}

// Export implements control.Backend for the Home host's sessions.
func (c *Client) Export(ctx context.Context, sessionID string, req control.ExportRequest, w io.Writer) error {
	sid, err := c.homeSession(ctx, sessionID, "recordings", "ansight session export")
	if err != nil {
		return err
	}
	return c.opts.Home.Backend.Export(ctx, sid, req, w)
}

// Import implements control.Backend: into the Home host, or refused.
func (c *Client) Import(ctx context.Context, archive io.Reader) (*control.Session, error) {
	if c.opts.Home == nil {
		return nil, c.hostOnly("recordings", "ansight session import")
	}
	return c.opts.Home.Backend.Import(ctx, archive)
}

// DeleteRecording implements control.Backend for the Home host's sessions.
func (c *Client) DeleteRecording(ctx context.Context, sessionID string) error {
	sid, err := c.homeSession(ctx, sessionID, "recordings", "ansight session delete")
	if err != nil {
		return err
	}
	return c.opts.Home.Backend.DeleteRecording(ctx, sid)
}
