package hostapi

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/ansight-go/ansight/wire"
)

// Backend is the control API. Implementations: package host/control's (in process, over a
// *host.Server and its recorder), [Client] (over the socket) and package fleet's (over a
// fleet of hosts). Failures of the host itself (no such session, session closed, timeout) are
// *APIError; a tool's own failure is not an error but a Call or Batch with Success false.
type Backend interface {
	Status(ctx context.Context) (*Status, error)
	Sessions(ctx context.Context) (*Sessions, error)
	Session(ctx context.Context, id string) (*Session, error)
	// Crashes and Annotations list what an app handed over in a session; they work for a
	// session that left the registry too, as long as its directory holds something.
	Crashes(ctx context.Context, sessionID string) (*Crashes, error)
	Annotations(ctx context.Context, sessionID string) (*Annotations, error)
	Tools(ctx context.Context, sessionID string, req ToolsRequest) (*Tools, error)
	Tool(ctx context.Context, sessionID, toolID string) (*Tool, error)
	// Call and Batch report artifact transfers to progress (which may be nil) while they
	// run; progress runs on the caller's behalf and must return quickly.
	Call(ctx context.Context, sessionID string, req CallRequest, progress func(Progress)) (*Call, error)
	Batch(ctx context.Context, sessionID string, req BatchRequest, progress func(Progress)) (*Batch, error)
	// UI runs a UI operation on a session's screen: capture with ui.get_visual_tree,
	// resolve the selector on the host, act with ui.perform_action (RunUI).
	UI(ctx context.Context, sessionID string, req UIRequest) (*UIOperation, error)
	// Recordings lists every recording the host keeps — of connected, disconnected and
	// imported sessions, across restarts of the host — as sessions, each with its
	// Recording, most recently active first. A host that records nothing lists none.
	Recordings(ctx context.Context) (*Sessions, error)
	// Records returns one page of a session's recording; Follow calls fn with each record
	// req selects, then with each new one as the host records it, until ctx ends (Follow
	// then returns ctx's error) or fn returns an error.
	Records(ctx context.Context, sessionID string, req RecordsRequest) (*Records, error)
	Follow(ctx context.Context, sessionID string, req RecordsRequest, fn func(Record) error) error
	// Blob opens the file of a session's record seq.
	Blob(ctx context.Context, sessionID string, seq int64) (*Blob, error)
	// Export writes a session's recording to w as one zip archive (docs/recordings.md);
	// Import stores such an archive as a new recording and describes it.
	Export(ctx context.Context, sessionID string, req ExportRequest, w io.Writer) error
	Import(ctx context.Context, req ImportRequest, archive io.Reader) (*Session, error)
	// DeleteRecording removes a session's recording and its files (the host's own files,
	// artifacts and crash reports, stay). A connected session goes on recording anew.
	DeleteRecording(ctx context.Context, sessionID string) error
	// Disconnect closes a connected session's connection; the session stays listed as
	// disconnected, and the app may reconnect (its pairing is untouched: Revoke ends that).
	Disconnect(ctx context.Context, sessionID string) (*Disconnection, error)
	// Rename gives a session (connected, or recorded) a label, which Session, Sessions
	// and Recordings then show; the host keeps it with the session's recording, across
	// restarts. An empty label removes it. A host that records nothing answers
	// ErrRecordingOff.
	Rename(ctx context.Context, sessionID string, req RenameRequest) (*Renaming, error)
	// Player returns the web player's address and the URL that opens it, with its access
	// token: only the host's user, who can reach the control socket, gets the token. renew
	// makes a new token first, which locks out every page opened with the old one. A host
	// without a player answers CodePlayerOff.
	Player(ctx context.Context, renew bool) (*PlayerAccess, error)
	IssueInvite(ctx context.Context, req InviteRequest) (*Invite, error)
	// Invites lists the invites and the grants.
	Invites(ctx context.Context) (*Invites, error)
	// Revoke withdraws an invite (and the grants made with it) or one grant, by id, and
	// ends their live sessions.
	Revoke(ctx context.Context, id string) (*Revocation, error)
	// Forget removes a revoked or expired grant, so that its device is no longer refused:
	// a local app's next enrollment makes a new grant. An active grant is refused.
	Forget(ctx context.Context, id string) (*Forgetting, error)
	// Events calls fn with each change of the host's sessions from now on, until ctx ends
	// (Events then returns ctx's error) or fn returns an error. fn runs on the reporter's
	// behalf and must return quickly; an event a slow subscriber has no room for is
	// dropped (Sessions stays the truth).
	Events(ctx context.Context, fn func(Event) error) error
	// Shutdown asks the host to stop; it returns once the request is accepted.
	Shutdown(ctx context.Context) error
}

// APIError is a failure of the host (not of a tool), with an HTTP status and a stable code.
type APIError struct {
	Status  int
	Code    wire.Code
	Message string
}

func (e *APIError) Error() string { return e.Message }

// ErrorCode returns e.Code, for wire.CodeOf.
func (e *APIError) ErrorCode() wire.Code { return e.Code }

// Errorf builds an *APIError: the way a Backend says that the host failed a request, with
// the HTTP status and code the API answers.
func Errorf(status int, code wire.Code, format string, args ...any) *APIError {
	return &APIError{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// SessionNotFound is the answer about a session the host does not know.
func SessionNotFound(id string) *APIError {
	return Errorf(http.StatusNotFound, wire.CodeSessionNotFound, "no session %q (see 'ansight session list')", id)
}

// ErrRecordingOff answers the recording requests of a host that records nothing.
var ErrRecordingOff = Errorf(http.StatusNotFound, wire.CodeRecordingOff, "this host keeps no recordings (it runs with --no-record)")
