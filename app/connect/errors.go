package connect

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ansight-go/ansight/pairing"
)

// ErrNoHost is wrapped by the error of an enrollment that got no valid answer from any host
// candidate within its timeout.
var ErrNoHost = errors.New("connect: no host answered")

// EnrollmentError is a host's refusal of an ENROLLMENT_CONNECT (accepted:false). Reason is
// the host's machine code; Error adds what the user can do about it.
type EnrollmentError struct {
	// Reason is the reason code of the host's ENROLLMENT_RESULT.
	Reason pairing.Reason
	// Message is the host's human-readable text, if any.
	Message string
	// Host is the address (host:port) that answered.
	Host string

	hint string
}

// Error returns "connect: <host> refused enrollment: <Reason>: <Message> (<what to do>)".
func (e *EnrollmentError) Error() string {
	s := fmt.Sprintf("connect: %s refused enrollment: %s", e.Host, peerText(string(e.Reason)))
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.hint != "" {
		s += " (" + e.hint + ")"
	}
	return s
}

// Temporary reports whether trying again later can succeed without anyone changing
// anything: true for a host without a free WebSocket port and for reason codes this SDK does
// not know; false for every refusal that needs a new invite, a change on the host or new
// local state. [Run] retries temporary refusals and returns permanent ones.
func (e *EnrollmentError) Temporary() bool {
	if e.Reason == pairing.ReasonWebSocketUnavailable {
		return true
	}
	_, known := reasonHints[e.Reason]
	return !known
}

// reasonHints says, per reason code the official host emits (docs/protocol/session.md#reasons), what the user
// can do. %s stands for the state directory.
var reasonHints = map[pairing.Reason]string{
	pairing.ReasonEnrollmentModeUnsupported:  "the host does not support this enrollment mode; update the host",
	pairing.ReasonLocalEnrollmentUnavailable: "the host accepts local enrollment only from its own machine; connect apps on other devices with an invite code",
	pairing.ReasonLocalEnrollmentInvalid:     "the host found the app id, device id or token unusable; check Options.AppID (it must be the app's real id, never \"*\")",
	pairing.ReasonRegistrationRevoked:        "this device's registration was revoked on the host; undo that on the host, or delete %s to enroll as a new device",
	pairing.ReasonAccessTokenInvalid:         "the host holds a registration for this device with another secret; revoke it on the host and delete %s, or use a new invite",
	pairing.ReasonEnrollmentRequired:         "the host does not know this invite or it was issued for another app; issue a new invite for this app id",
	pairing.ReasonRegistrationExpired:        "this device's registration expired or was revoked; issue a new invite",
	pairing.ReasonEnrollmentExpired:          "the invite expired before it was used; issue a new invite",
	pairing.ReasonEnrollmentConsumed:         "the invite was already used by another device; issue a new invite",
	pairing.ReasonWebSocketUnavailable:       "the host has no free WebSocket port right now; will retry",
}

func newEnrollmentError(reason pairing.Reason, message, host, stateDir string) *EnrollmentError {
	e := &EnrollmentError{Reason: reason, Message: peerText(message), Host: host}
	hint, ok := reasonHints[reason]
	if !ok {
		e.hint = "unknown reason code; will retry"
		return e
	}
	if stateDir == "" {
		stateDir = "the SDK's state directory"
	}
	e.hint = strings.ReplaceAll(hint, "%s", stateDir)
	return e
}
