package pairing

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ansight-go/ansight/wire"
)

// Schemas of the invite, its document and the discovery hint.
const (
	InviteSchema         = "ansight.enrollment-invite.v2"
	InviteDocumentSchema = "ansight.enrollment-invite-document.v2"
	DiscoveryHintSchema  = "ansight.discovery-hint.v1"
)

// CodePrefix starts a compact invite code; it is matched case-sensitively.
const CodePrefix = "ans2:"

// AnyApp as an invite's appId lets any app enroll with it.
const AnyApp = "*"

// TransportWS is the only transport an invite allows.
const TransportWS = "ws"

// Invite lifetimes, as the official host clamps them.
const (
	// MaxInviteLifetime bounds an app-specific invite's expiry.
	MaxInviteLifetime = 24 * time.Hour
	// MaxAnyAppInviteLifetime bounds an AnyApp invite's expiry.
	MaxAnyAppInviteLifetime = 10 * time.Minute
	// MaxGrantLifetime bounds a grant (and is the lifetime of a local grant).
	MaxGrantLifetime = 90 * 24 * time.Hour
	// DefaultInviteDuration is the requested duration when none is given.
	DefaultInviteDuration = 30 * 24 * time.Hour
)

// Bounds of the invite decoders. A real code is well under 2 KiB.
const (
	// MaxCodeLength bounds an ans2: code or invite JSON text, in bytes.
	MaxCodeLength = 16 << 10
	// MaxDocumentBytes bounds the inflated JSON of a code.
	MaxDocumentBytes = 64 << 10
)

// Invite is an ansight.enrollment-invite.v2 object. Field order is the official host's;
// every key is always written.
type Invite struct {
	Schema             string           `json:"schema"`
	InviteID           string           `json:"inviteId"`
	AppID              string           `json:"appId"`
	AppName            string           `json:"appName"`
	IssuedAt           time.Time        `json:"issuedAt"`
	ExpiresAt          time.Time        `json:"expiresAt"`
	MinProtocolVersion int              `json:"minProtocolVersion"`
	AllowedTransports  []string         `json:"allowedTransports"`
	Host               InviteHost       `json:"host"`
	Enrollment         InviteEnrollment `json:"enrollment"`
}

// InviteHost identifies the issuing host.
type InviteHost struct {
	HostID        string `json:"hostId"`
	HostName      string `json:"hostName"`
	DiscoveryPort int    `json:"discoveryPort"`
}

// InviteEnrollment carries the invite's secret and the grant it leads to.
type InviteEnrollment struct {
	AccessToken    string      `json:"accessToken"`
	ExpiresAt      time.Time   `json:"expiresAt"`
	GrantExpiresAt time.Time   `json:"grantExpiresAt"`
	MaxUses        int         `json:"maxUses"`
	MaxToolPolicy  wire.Policy `json:"maxToolPolicy"`
}

// InviteDocument is an ansight.enrollment-invite-document.v2: the invite plus an optional
// discovery hint telling the app where to send its datagram.
type InviteDocument struct {
	Schema    string         `json:"schema"`
	Invite    Invite         `json:"invite"`
	Discovery *DiscoveryHint `json:"discovery,omitempty"`
}

// DiscoveryHint lists the host's addresses. Schema is always written: the .NET SDK
// requires it.
type DiscoveryHint struct {
	Schema        string    `json:"schema"`
	Source        string    `json:"source"`
	HostAddresses []string  `json:"hostAddresses"`
	DiscoveryPort int       `json:"discoveryPort"`
	HostName      string    `json:"hostName"`
	WifiName      *string   `json:"wifiName"`
	CapturedAt    time.Time `json:"capturedAt"`
}

// Check validates an invite as the official SDKs do before enrolling with it: schema,
// non-blank inviteId and appName, protocol version 2, transports exactly ["ws"], a
// discovery port in range, a secret of exactly 32 bytes, maxUses 1, a valid maxToolPolicy,
// a grant expiry after now, and appID matching unless the invite is for AnyApp. The
// invite's own expiry is deliberately not checked: an enrolled device keeps reconnecting
// with it until the grant expires. An empty appID skips the app check.
func (inv *Invite) Check(appID string, now time.Time) error {
	switch {
	case inv.Schema != InviteSchema:
		return fmt.Errorf("pairing: invite schema %q is not %s", inv.Schema, InviteSchema)
	case strings.TrimSpace(inv.InviteID) == "":
		return errors.New("pairing: invite has no inviteId")
	case strings.TrimSpace(inv.AppID) == "":
		return errors.New("pairing: invite has no appId")
	case appID != "" && inv.AppID != AnyApp && inv.AppID != appID:
		return fmt.Errorf("pairing: invite is for app %q, not %q", inv.AppID, appID)
	case strings.TrimSpace(inv.AppName) == "":
		return errors.New("pairing: invite has no appName")
	case inv.MinProtocolVersion != EnrollmentVersion:
		return fmt.Errorf("pairing: invite needs protocol version %d, this side speaks %d", inv.MinProtocolVersion, EnrollmentVersion)
	case len(inv.AllowedTransports) != 1 || inv.AllowedTransports[0] != TransportWS:
		return fmt.Errorf("pairing: invite transports %q are not [\"ws\"]", inv.AllowedTransports)
	case inv.Host.DiscoveryPort < 1 || inv.Host.DiscoveryPort > 65535:
		return fmt.Errorf("pairing: invite discovery port %d is out of range", inv.Host.DiscoveryPort)
	case inv.Enrollment.MaxUses != 1:
		return fmt.Errorf("pairing: invite maxUses is %d, want 1", inv.Enrollment.MaxUses)
	case !inv.Enrollment.MaxToolPolicy.Valid():
		return fmt.Errorf("pairing: invite maxToolPolicy %q is not a policy", inv.Enrollment.MaxToolPolicy)
	case !inv.Enrollment.GrantExpiresAt.After(now):
		return errors.New("pairing: the invite's grant has expired")
	}
	if _, err := DecodeAccessToken(inv.Enrollment.AccessToken); err != nil {
		return err
	}
	return nil
}

// Code encodes the document as a compact "ans2:" code: compact JSON, gzip at maximum
// compression, unpadded base64url.
func (d *InviteDocument) Code() (string, error) {
	js, err := encode(d)
	if err != nil {
		return "", fmt.Errorf("pairing: encode invite document: %w", err)
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return "", err
	}
	if _, err := zw.Write(js); err != nil {
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	return CodePrefix + base64.RawURLEncoding.EncodeToString(buf.Bytes()), nil
}

// ParseInvite reads what a user hands an app: an "ans2:" code, an invite document's JSON,
// or a bare invite's JSON (the .ans.json file, which has no discovery hint). Surrounding
// whitespace is ignored. Input is capped at MaxCodeLength and a code's inflated JSON at
// MaxDocumentBytes. The result's schemas are checked; call Invite.Check before enrolling.
func ParseInvite(text string) (*InviteDocument, error) {
	text = strings.TrimSpace(text)
	if len(text) > MaxCodeLength {
		return nil, malformed("invite text of %d bytes exceeds %d", len(text), MaxCodeLength)
	}
	if rest, ok := strings.CutPrefix(text, CodePrefix); ok {
		js, err := inflateCode(rest)
		if err != nil {
			return nil, err
		}
		// A code always holds a document, never a bare invite.
		return parseInviteJSON([]byte(js), false)
	}
	if strings.HasPrefix(text, "{") {
		return parseInviteJSON([]byte(text), true)
	}
	return nil, malformed("invite is neither an %s code nor JSON", CodePrefix)
}

func inflateCode(b64 string) (string, error) {
	// Decoders in the official SDKs accept the code with or without padding.
	z, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(b64, "="))
	if err != nil {
		return "", malformed("code is not base64url: %v", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return "", malformed("code is not gzip: %v", err)
	}
	zr.Multistream(false)
	js, err := io.ReadAll(io.LimitReader(zr, MaxDocumentBytes+1))
	if err != nil {
		return "", malformed("code does not inflate: %v", err)
	}
	if len(js) > MaxDocumentBytes {
		return "", malformed("code inflates beyond %d bytes", MaxDocumentBytes)
	}
	return string(js), nil
}

// parseInviteJSON accepts a document or, if allowBare, a bare invite, told apart by the
// top-level schema.
func parseInviteJSON(js []byte, allowBare bool) (*InviteDocument, error) {
	var head struct {
		Schema string `json:"schema"`
	}
	if err := decodeStrict(js, &head); err != nil {
		return nil, err
	}
	switch head.Schema {
	case InviteDocumentSchema:
		var doc InviteDocument
		if err := decodeStrict(js, &doc); err != nil {
			return nil, err
		}
		if doc.Invite.Schema != InviteSchema {
			return nil, malformed("document's invite schema %q is not %s", doc.Invite.Schema, InviteSchema)
		}
		if doc.Discovery != nil && doc.Discovery.Schema != DiscoveryHintSchema {
			return nil, malformed("discovery schema %q is not %s", doc.Discovery.Schema, DiscoveryHintSchema)
		}
		return &doc, nil
	case InviteSchema:
		if !allowBare {
			break
		}
		var inv Invite
		if err := decodeStrict(js, &inv); err != nil {
			return nil, err
		}
		return &InviteDocument{Schema: InviteDocumentSchema, Invite: inv}, nil
	}
	return nil, malformed("schema %q is neither %s nor %s", head.Schema, InviteDocumentSchema, InviteSchema)
}
