package fleet

import (
	"bytes"
	"context"
	"io"
	"sync"
	"time"

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

// Recordings implements hostapi.Backend: the Home host's and every other host's, each
// listed with its host (a host that does not answer is left out).
func (c *Client) Recordings(ctx context.Context) (*hostapi.Sessions, error) {
	out := &hostapi.Sessions{Schema: hostapi.SchemaRecordings, Sessions: []hostapi.Session{}}
	if home := c.opts.Home; home != nil {
		s, err := home.Backend.Recordings(ctx)
		if err != nil {
			return nil, err
		}
		for _, v := range s.Sessions {
			v.Host = home.Name
			out.Sessions = append(out.Sessions, v)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	hosts := c.otherHosts()
	lists := make([]hostapi.Sessions, len(hosts))
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Go(func() { c.roundTrip(ctx, h, c.subj.op(h, opRecordings, ""), request{}, &lists[i], nil) })
	}
	wg.Wait()
	for i, h := range hosts {
		for _, v := range lists[i].Sessions {
			v.ID, v.Host = QualifiedID(v.ID, h), h
			out.Sessions = append(out.Sessions, v)
		}
	}
	return out, nil
}

// Records implements hostapi.Backend: one page of a session's recording, from its host
// (request/reply: a page a message, larger ones as a blob).
func (c *Client) Records(ctx context.Context, sessionID string, req hostapi.RecordsRequest) (*hostapi.Records, error) {
	t, err := c.resolve(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if t.home {
		return c.opts.Home.Backend.Records(ctx, t.sid, req)
	}
	out := new(hostapi.Records)
	if err := c.roundTrip(ctx, t.host, c.subj.op(t.host, opRecords, ""), request{Session: t.sid, Records: &req}, out, nil); err != nil {
		return nil, err
	}
	out.SessionID = t.id
	return out, nil
}

// followPoll is how often Follow asks a host for the records after the last one.
const followPoll = time.Second

// Follow implements hostapi.Backend: the Home host's follows its recorder; another host's
// is read page by page, asking for the records after the last one every followPoll.
func (c *Client) Follow(ctx context.Context, sessionID string, req hostapi.RecordsRequest, fn func(hostapi.Record) error) error {
	t, err := c.resolve(ctx, sessionID)
	if err != nil {
		return err
	}
	if t.home {
		return c.opts.Home.Backend.Follow(ctx, t.sid, req, fn)
	}
	req.Newest = false
	for {
		out := new(hostapi.Records)
		if err := c.roundTrip(ctx, t.host, c.subj.op(t.host, opRecords, ""), request{Session: t.sid, Records: &req}, out, nil); err != nil {
			return err
		}
		for _, r := range out.Records {
			if err := fn(r); err != nil {
				return err
			}
			req.After = r.Seq
		}
		if out.Next != 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(followPoll):
		}
	}
}

// Blob implements hostapi.Backend: a record's file, from its host (up to 64 MiB; a
// larger one stays there).
func (c *Client) Blob(ctx context.Context, sessionID string, seq int64) (*hostapi.Blob, error) {
	t, err := c.resolve(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if t.home {
		return c.opts.Home.Backend.Blob(ctx, t.sid, seq)
	}
	var a recordFileAnswer
	if err := c.roundTrip(ctx, t.host, c.subj.op(t.host, opRecordFile, ""), request{Session: t.sid, Seq: seq}, &a, nil); err != nil {
		return nil, err
	}
	return &hostapi.Blob{Name: a.Name, MimeType: a.MimeType, SizeBytes: int64(len(a.Data)), Body: io.NopCloser(bytes.NewReader(a.Data))}, nil
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
