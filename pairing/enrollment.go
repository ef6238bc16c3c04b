package pairing

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Datagram types and the protocol version of the enrollment exchange.
const (
	TypeEnrollmentConnect = "ENROLLMENT_CONNECT"
	TypeEnrollmentResult  = "ENROLLMENT_RESULT"
	EnrollmentVersion     = 2
)

// Enrollment modes of ENROLLMENT_CONNECT.
const (
	// ModeInvite presents the secret of an invite the host issued; the default when the key
	// is absent.
	ModeInvite = "invite"
	// ModeLocal is trust-on-first-use of the app's own token, accepted from loopback only.
	ModeLocal = "local"
)

// Discovery ports: the host's default UDP port and the developer port the official SDKs
// also probe in local mode.
const (
	DefaultDiscoveryPort   = 45123
	DeveloperDiscoveryPort = 46123
)

// WebSocketPath is the upgrade path the host issues.
const WebSocketPath = "/ws"

// Limits of the enrollment parsers. Real datagrams are 350–600 bytes.
const (
	// MaxDatagramBytes bounds an enrollment datagram; larger ones are malformed.
	MaxDatagramBytes = 8 << 10
	// MaxFieldLength bounds every string of an enrollment datagram, in bytes.
	MaxFieldLength = 512
	// MaxDeviceNameLength is where a device name is cut, in characters (as the official
	// host does).
	MaxDeviceNameLength = 120
	// DefaultDeviceName replaces a blank device name.
	DefaultDeviceName = "Device"
)

// LocalInviteID is the inviteId the official SDKs send in local mode.
func LocalInviteID(appID string) string { return "local:" + appID }

// Reason is the machine code of an ENROLLMENT_RESULT.
type Reason string

// Reasons emitted by the host, exactly as the official host spells them; the SDKs reset
// their saved registration on some of them, so the spelling matters.
const (
	ReasonOK                         Reason = "Ok"
	ReasonEnrollmentModeUnsupported  Reason = "EnrollmentModeUnsupported"
	ReasonLocalEnrollmentUnavailable Reason = "LocalEnrollmentUnavailable"
	ReasonLocalEnrollmentInvalid     Reason = "LocalEnrollmentInvalid"
	ReasonRegistrationRevoked        Reason = "RegistrationRevoked"
	ReasonAccessTokenInvalid         Reason = "AccessTokenInvalid"
	ReasonEnrollmentRequired         Reason = "EnrollmentRequired"
	ReasonRegistrationExpired        Reason = "RegistrationExpired"
	ReasonEnrollmentExpired          Reason = "EnrollmentExpired"
	ReasonEnrollmentConsumed         Reason = "EnrollmentConsumed"
	ReasonWebSocketUnavailable       Reason = "WebSocketUnavailable"
)

// Text is the human explanation the host sends with r (reasonMessage and message).
func (r Reason) Text() string {
	switch r {
	case ReasonOK:
		return "Device registered."
	case ReasonEnrollmentModeUnsupported:
		return "The enrollment mode is not supported by this host."
	case ReasonLocalEnrollmentUnavailable:
		return "Local enrollment is only accepted from this machine."
	case ReasonLocalEnrollmentInvalid:
		return "Local enrollment needs an app id, a device id and an access token."
	case ReasonRegistrationRevoked:
		return "This device's registration was revoked."
	case ReasonAccessTokenInvalid:
		return "The access token is not valid for this registration."
	case ReasonEnrollmentRequired:
		return "Enrollment is required: scan a current invite for this app."
	case ReasonRegistrationExpired:
		return "This device's registration has expired: scan a new invite."
	case ReasonEnrollmentExpired:
		return "The invite has expired."
	case ReasonEnrollmentConsumed:
		return "The invite was already used."
	case ReasonWebSocketUnavailable:
		return "The host could not open a WebSocket endpoint."
	}
	return "Enrollment rejected."
}

// EnrollmentConnect is the app's request (type ENROLLMENT_CONNECT, ver 2). Strings absent
// or null on the wire read as "" where the key is optional; see ParseEnrollmentConnect.
type EnrollmentConnect struct {
	RequestID        string
	EnrollmentMode   string // ModeInvite or ModeLocal; "" when absent (means invite), null or empty
	InviteID         string
	AppID            string
	DeviceID         string
	DeviceName       string
	AccessToken      string
	ProcessSessionID string

	// modeBlank: the datagram sent enrollmentMode as null or "" (not absent), which names
	// no mode at all; the official host answers EnrollmentModeUnsupported.
	modeBlank bool
	// problem, set on the request ParseEnrollmentConnect returns with an error, says in
	// words for the app's developer what is wrong (see Refusal).
	problem string
}

type enrollmentConnectJSON struct {
	Type             raw `json:"type"`
	Ver              raw `json:"ver"`
	RequestID        raw `json:"requestId"`
	EnrollmentMode   raw `json:"enrollmentMode"`
	InviteID         raw `json:"inviteId"`
	AppID            raw `json:"appId"`
	DeviceID         raw `json:"deviceId"`
	DeviceName       raw `json:"deviceName"`
	AccessToken      raw `json:"accessToken"`
	ProcessSessionID raw `json:"processSessionId"`
}

// ParseEnrollmentConnect reads an ENROLLMENT_CONNECT datagram with the official host's
// rules, so that the datagrams it answers are answered:
//   - type must be "ENROLLMENT_CONNECT" and ver the JSON integer 2;
//   - requestId must be a non-blank string;
//   - inviteId, appId, deviceId, deviceName and accessToken must be present (null allowed,
//     read as "");
//   - enrollmentMode and processSessionId may be absent or null (a null or empty
//     enrollmentMode names no mode: Mode returns "");
//   - every present member must have its JSON type.
//
// Beyond the reference, the datagram is capped at MaxDatagramBytes, each string but
// deviceName at MaxFieldLength (deviceName is display text: NormalizeDeviceName cuts it),
// and duplicate or case-variant member names are refused: a second "appId" must not
// decide which app a grant is for. Every violation returns an error wrapping ErrMalformed.
//
// The official host answers a request it cannot parse with silence, and the SDK cannot
// tell that from a host that is not there. So when the datagram is nonetheless a JSON
// ENROLLMENT_CONNECT version 2 with one usable requestId and only a duplicate name or an
// over-long string is wrong, the returned request is non-nil alongside the error: it holds
// the requestId and mode, and Refusal gives the answer. Otherwise (not JSON, wrong type or
// version, no or several requestIds, a missing required member, a member of the wrong
// JSON type, over the size cap) it is nil and the host must not answer, as the reference.
// Values are returned as sent (not trimmed).
func ParseEnrollmentConnect(data []byte) (*EnrollmentConnect, error) {
	if len(data) > MaxDatagramBytes {
		return nil, malformed("datagram of %d bytes exceeds %d", len(data), MaxDatagramBytes)
	}
	var j enrollmentConnectJSON
	if err := decodeStrict(data, &j); err != nil {
		return answerableConnect(data), err
	}
	if err := checkHeader(j.Type, j.Ver, TypeEnrollmentConnect); err != nil {
		return nil, err
	}
	var c EnrollmentConnect
	fields := []struct {
		name     string
		v        raw
		dst      *string
		required bool
	}{
		{"requestId", j.RequestID, &c.RequestID, true},
		{"enrollmentMode", j.EnrollmentMode, &c.EnrollmentMode, false},
		{"inviteId", j.InviteID, &c.InviteID, true},
		{"appId", j.AppID, &c.AppID, true},
		{"deviceId", j.DeviceID, &c.DeviceID, true},
		{"deviceName", j.DeviceName, &c.DeviceName, true},
		{"accessToken", j.AccessToken, &c.AccessToken, true},
		{"processSessionId", j.ProcessSessionID, &c.ProcessSessionID, false},
	}
	tooLong := ""
	for _, f := range fields {
		read := optionalString
		if f.required {
			read = requiredString
		}
		s, err := read(f.name, f.v)
		if err != nil {
			return nil, err
		}
		if len(s) > MaxFieldLength && f.name != "deviceName" && tooLong == "" {
			tooLong = f.name
		}
		*f.dst = s
	}
	c.modeBlank = j.EnrollmentMode != nil && c.EnrollmentMode == ""
	if err := usableRequestID(c.RequestID); err != nil {
		return nil, err
	}
	if tooLong != "" {
		r := c.refused(fmt.Sprintf("%q is longer than %d bytes.", tooLong, MaxFieldLength))
		return r, malformed("%q is longer than %d bytes", tooLong, MaxFieldLength)
	}
	return &c, nil
}

// usableRequestID checks that a requestId can be echoed: not blank, not over the field cap.
func usableRequestID(id string) error {
	switch {
	case strings.TrimSpace(id) == "":
		return malformed("requestId is blank")
	case len(id) > MaxFieldLength:
		return malformed("requestId is longer than %d bytes", MaxFieldLength)
	}
	return nil
}

// refused returns the request that answers for c: its requestId and mode, and problem.
func (c *EnrollmentConnect) refused(problem string) *EnrollmentConnect {
	return &EnrollmentConnect{RequestID: c.RequestID, EnrollmentMode: c.EnrollmentMode, modeBlank: c.modeBlank, problem: problem}
}

// answerableConnect reads a datagram the strict decoder refused: when it is nonetheless
// one syntactically valid JSON object, nested no deeper than an enrollment request can be,
// with exactly one each of type "ENROLLMENT_CONNECT", ver 2 and a usable requestId
// (duplicate names allowed elsewhere), it returns the request to refuse by that id;
// otherwise nil.
func answerableConnect(data []byte) *EnrollmentConnect {
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil
	}
	seen := map[string]int{}
	values := map[string]jsontext.Value{}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil
		}
		name := tok.String()
		v, ok := readShallow(dec)
		if !ok {
			return nil
		}
		switch name {
		case "type", "ver", "requestId", "enrollmentMode":
			seen[name]++
			values[name] = v
		}
	}
	if _, err := dec.ReadToken(); err != nil { // the closing brace
		return nil
	}
	if _, err := dec.ReadToken(); err != io.EOF { // nothing after the object
		return nil
	}
	if seen["type"] != 1 || seen["ver"] != 1 || seen["requestId"] != 1 {
		return nil
	}
	if checkHeader(values["type"], values["ver"], TypeEnrollmentConnect) != nil {
		return nil
	}
	c := &EnrollmentConnect{problem: "a member is given twice (or twice in different letter cases), or is not valid UTF-8."}
	var err error
	if c.RequestID, err = requiredString("requestId", values["requestId"]); err != nil || !utf8.ValidString(c.RequestID) || usableRequestID(c.RequestID) != nil {
		return nil
	}
	if seen["enrollmentMode"] == 1 {
		c.EnrollmentMode, _ = optionalString("enrollmentMode", values["enrollmentMode"])
		if !utf8.ValidString(c.EnrollmentMode) {
			c.EnrollmentMode = ""
		}
	}
	c.modeBlank = seen["enrollmentMode"] > 0 && c.EnrollmentMode == ""
	return c
}

// maxEnrollmentNesting bounds the nesting answerableConnect reads through: a real request
// is flat, and unknown members added by SDKs are shallow.
const maxEnrollmentNesting = 8

// readShallow reads the next value: a scalar is returned (a copy), an object or array is
// skipped token by token and returned as nil. ok is false on a syntax error or nesting
// deeper than maxEnrollmentNesting.
func readShallow(dec *jsontext.Decoder) (v jsontext.Value, ok bool) {
	switch dec.PeekKind() {
	case '{', '[':
	default:
		v, err := dec.ReadValue()
		return v.Clone(), err == nil
	}
	base := dec.StackDepth()
	for {
		if _, err := dec.ReadToken(); err != nil || dec.StackDepth()-base > maxEnrollmentNesting {
			return nil, false
		}
		if dec.StackDepth() == base {
			return nil, true
		}
	}
}

// Mode returns the effective enrollment mode: ModeInvite when the key was absent, "" (no
// mode: EnrollmentModeUnsupported) when it was null or empty.
func (c *EnrollmentConnect) Mode() string {
	switch {
	case c.EnrollmentMode != "":
		return c.EnrollmentMode
	case c.modeBlank:
		return ""
	}
	return ModeInvite
}

// Refusal is the answer to a request ParseEnrollmentConnect returned with an error: the
// reason the official host gives for an unusable request in that mode (local:
// LocalEnrollmentInvalid, invite: EnrollmentRequired, no or another mode:
// EnrollmentModeUnsupported) and a message saying what is wrong.
func (c *EnrollmentConnect) Refusal() (Reason, string) {
	var r Reason
	switch c.Mode() {
	case ModeLocal:
		r = ReasonLocalEnrollmentInvalid
	case ModeInvite:
		r = ReasonEnrollmentRequired
	default:
		r = ReasonEnrollmentModeUnsupported
	}
	if c.problem == "" {
		return r, r.Text()
	}
	return r, "Malformed enrollment request: " + c.problem
}

// checkHeader checks a datagram's type (want) and ver (EnrollmentVersion).
func checkHeader(typ, v raw, want string) error {
	s, err := requiredString("type", typ)
	if err != nil {
		return err
	}
	if s != want {
		return malformed("type %q is not %s", s, want)
	}
	if v == nil {
		return malformed("ver is missing")
	}
	var ver int
	if v.Kind() != '0' || json.Unmarshal(v, &ver) != nil {
		return malformed("ver %s is not an integer", v)
	}
	if ver != EnrollmentVersion {
		return malformed("ver %d is not %d", ver, EnrollmentVersion)
	}
	return nil
}

// Marshal writes the datagram with all ten keys, as the .NET and Swift SDKs do (the
// official host drops a datagram that lacks any required key). An empty ProcessSessionID is
// written as null; enrollmentMode is Mode() ("invite" for an empty EnrollmentMode, unless a
// parsed datagram named no mode).
func (c *EnrollmentConnect) Marshal() ([]byte, error) {
	return encode(struct {
		Type             string  `json:"type"`
		Ver              int     `json:"ver"`
		RequestID        string  `json:"requestId"`
		EnrollmentMode   string  `json:"enrollmentMode"`
		InviteID         string  `json:"inviteId"`
		AppID            string  `json:"appId"`
		DeviceID         string  `json:"deviceId"`
		DeviceName       string  `json:"deviceName"`
		AccessToken      string  `json:"accessToken"`
		ProcessSessionID *string `json:"processSessionId"`
	}{TypeEnrollmentConnect, EnrollmentVersion, c.RequestID, c.Mode(), c.InviteID, c.AppID,
		c.DeviceID, c.DeviceName, c.AccessToken, strPtr(c.ProcessSessionID)})
}

// NormalizeDeviceName applies the official host's rule: trimmed, blank becomes
// DefaultDeviceName, cut to MaxDeviceNameLength characters.
func NormalizeDeviceName(name string) string {
	name = strings.TrimSpace(name)
	if name == "" {
		return DefaultDeviceName
	}
	if r := []rune(name); len(r) > MaxDeviceNameLength {
		name = strings.TrimSpace(string(r[:MaxDeviceNameLength]))
	}
	return name
}

// EnrollmentResult is the host's answer (type ENROLLMENT_RESULT, ver 2). Empty optional
// strings and a zero port are written as JSON null.
type EnrollmentResult struct {
	RequestID      string
	Accepted       bool
	Reason         Reason
	ReasonMessage  string // null when empty
	HostID         string
	HostName       string
	HostWifiName   string // null when empty
	Message        string
	WebSocketPort  int    // null when 0; accept only
	WebSocketPath  string // null when empty; accept only
	WebSocketToken string // null when empty; accept only
}

type enrollmentResultJSON struct {
	Type           string  `json:"type"`
	Ver            int     `json:"ver"`
	RequestID      string  `json:"requestId"`
	Accepted       bool    `json:"accepted"`
	Reason         string  `json:"reason"`
	ReasonMessage  *string `json:"reasonMessage"`
	HostID         string  `json:"hostId"`
	HostName       string  `json:"hostName"`
	HostWifiName   *string `json:"hostWifiName"`
	Message        string  `json:"message"`
	WebSocketPort  *int    `json:"webSocketPort"`
	WebSocketPath  *string `json:"webSocketPath"`
	WebSocketToken *string `json:"webSocketToken"`
}

// Marshal writes all thirteen keys in the official host's order, nulls included. The
// required ones (type, ver, requestId, accepted, reason, hostId, hostName, message) are
// always non-null strings, booleans or numbers, which is what the .NET (required members),
// Swift (non-optional Codable) and Kotlin parsers need.
func (r *EnrollmentResult) Marshal() ([]byte, error) {
	j := enrollmentResultJSON{
		Type: TypeEnrollmentResult, Ver: EnrollmentVersion, RequestID: r.RequestID,
		Accepted: r.Accepted, Reason: string(r.Reason), ReasonMessage: strPtr(r.ReasonMessage),
		HostID: r.HostID, HostName: r.HostName, HostWifiName: strPtr(r.HostWifiName),
		Message: r.Message, WebSocketPath: strPtr(r.WebSocketPath), WebSocketToken: strPtr(r.WebSocketToken),
	}
	if r.WebSocketPort != 0 {
		p := r.WebSocketPort
		j.WebSocketPort = &p
	}
	return encode(j)
}

type enrollmentResultIn struct {
	Type           raw     `json:"type"`
	Ver            raw     `json:"ver"`
	RequestID      raw     `json:"requestId"`
	Accepted       raw     `json:"accepted"`
	Reason         raw     `json:"reason"`
	ReasonMessage  raw     `json:"reasonMessage"`
	HostID         raw     `json:"hostId"`
	HostName       raw     `json:"hostName"`
	HostWifiName   raw     `json:"hostWifiName"`
	Message        raw     `json:"message"`
	WebSocketPort  *uint16 `json:"webSocketPort"`
	WebSocketPath  raw     `json:"webSocketPath"`
	WebSocketToken raw     `json:"webSocketToken"`
}

// ParseEnrollmentResult reads a host's ENROLLMENT_RESULT with the union of the official
// SDKs' requirements: type and ver 2 exact; requestId, reason, hostId, hostName and message
// present strings (hostId and hostName may be empty); accepted a present boolean; and, when
// accepted, a webSocketPort in 1..65535 and non-blank webSocketPath and webSocketToken.
// Matching requestId against the request is the caller's job.
func ParseEnrollmentResult(data []byte) (*EnrollmentResult, error) {
	if len(data) > MaxDatagramBytes {
		return nil, malformed("datagram of %d bytes exceeds %d", len(data), MaxDatagramBytes)
	}
	var j enrollmentResultIn
	if err := decodeStrict(data, &j); err != nil {
		return nil, err
	}
	if err := checkHeader(j.Type, j.Ver, TypeEnrollmentResult); err != nil {
		return nil, err
	}
	if j.Accepted == nil || (string(j.Accepted) != "true" && string(j.Accepted) != "false") {
		return nil, malformed("accepted is not a boolean")
	}
	r := &EnrollmentResult{Accepted: string(j.Accepted) == "true"}
	var reason string
	for _, f := range []struct {
		name     string
		v        raw
		dst      *string
		required bool
	}{
		{"requestId", j.RequestID, &r.RequestID, true},
		{"reason", j.Reason, &reason, true},
		{"reasonMessage", j.ReasonMessage, &r.ReasonMessage, false},
		{"hostId", j.HostID, &r.HostID, true},
		{"hostName", j.HostName, &r.HostName, true},
		{"hostWifiName", j.HostWifiName, &r.HostWifiName, false},
		{"message", j.Message, &r.Message, true},
		{"webSocketPath", j.WebSocketPath, &r.WebSocketPath, false},
		{"webSocketToken", j.WebSocketToken, &r.WebSocketToken, false},
	} {
		if f.required && (f.v == nil || isNull(f.v)) {
			return nil, malformed("%q is missing or null", f.name)
		}
		s, err := optionalString(f.name, f.v)
		if err != nil {
			return nil, err
		}
		*f.dst = s
	}
	r.Reason = Reason(reason)
	if strings.TrimSpace(r.RequestID) == "" {
		return nil, malformed("requestId is blank")
	}
	if j.WebSocketPort != nil {
		r.WebSocketPort = int(*j.WebSocketPort)
	}
	if r.Accepted {
		if r.WebSocketPort == 0 || strings.TrimSpace(r.WebSocketPath) == "" || strings.TrimSpace(r.WebSocketToken) == "" {
			return nil, malformed("accepted result without a WebSocket endpoint")
		}
	}
	return r, nil
}
