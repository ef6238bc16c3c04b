package session

import (
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// SessionOpen is the session.open payload. The official host reads only ClientName,
// ConfigID and CustomProperties; OpenedAtUTC is kept as the text the app sent.
type SessionOpen struct {
	ClientName       string         `json:"clientName,omitzero"`
	ConfigID         string         `json:"configId,omitzero"`
	AppID            string         `json:"appId,omitzero"`
	OpenedAtUTC      string         `json:"openedAtUtc,omitzero"`
	CustomProperties jsontext.Value `json:"customProperties,omitzero"` // an object of groups, when present
	// Extensions lists the extensions of this implementation the app speaks
	// (ExtensionToolCancel); the official SDKs send none and the official host ignores it.
	Extensions []string `json:"extensions,omitempty"`
}

// ExtensionToolCancel: the app takes tool.cancel (docs/protocol/cancel.md).
const ExtensionToolCancel = "tool.cancel"

// Has reports whether the app advertised extension ext.
func (p SessionOpen) Has(ext string) bool { return slices.Contains(p.Extensions, ext) }

// App states of app.state, compared case-insensitively.
const (
	AppStateForeground = "foreground"
	AppStateBackground = "background"
	AppStateUnknown    = "unknown"
)

// AppState is the app.state payload.
type AppState struct {
	State        string `json:"state"`
	ChangedAtUTC string `json:"changedAtUtc,omitzero"`
}

// Normalized returns the state in lower case, or "" when it is not one of the three.
func (s AppState) Normalized() string {
	switch v := strings.ToLower(strings.TrimSpace(s.State)); v {
	case AppStateForeground, AppStateBackground, AppStateUnknown:
		return v
	}
	return ""
}

// SessionProperties is the session.properties payload. CustomProperties is required and
// must be an object; Kotlin's additional members (schema, platform, sdk, toolGuard,
// capabilities, tools) are ignored by the host.
type SessionProperties struct {
	CustomProperties jsontext.Value `json:"customProperties"`
	UpdatedAtUTC     string         `json:"updatedAtUtc,omitzero"`
}

// ClientLog is the client.log payload: one log line.
type ClientLog struct {
	Data string `json:"data"`
}

// SessionComplete is the session.complete payload.
type SessionComplete struct {
	Reason string `json:"reason,omitzero"`
}

// Device profile constants.
const (
	DeviceProfileType   = "DeviceAppProfile"
	DeviceProfileSchema = "ansight.device-app-profile.v1"
)

// DeviceProfile is the device.profile payload (the DeviceAppProfile object itself). Only
// the members a host shows are modelled; the official SDKs send many more, and the raw
// payload should be kept by whoever needs them.
type DeviceProfile struct {
	Type                             string        `json:"type"`
	Schema                           string        `json:"schema"`
	SentAt                           int64         `json:"sentAt,omitzero"` // unix milliseconds
	ReasonCode                       int           `json:"reasonCode,omitzero"`
	ProfileSeq                       int64         `json:"profileSeq,omitzero"`
	SDK                              ProfileSDK    `json:"sdk"`
	Device                           ProfileDevice `json:"device"`
	App                              ProfileApp    `json:"app"`
	SessionJpegCaptureControlVersion int           `json:"sessionJpegCaptureControlVersion,omitzero"`
}

// ProfileSDK describes the SDK inside the app.
type ProfileSDK struct {
	Name      string `json:"name,omitzero"`
	PackageID string `json:"packageId,omitzero"`
	Version   string `json:"version,omitzero"`
	Language  string `json:"language,omitzero"`
}

// ProfileDevice describes the device.
type ProfileDevice struct {
	NativeDeviceID string `json:"nativeDeviceId,omitzero"`
	Manufacturer   string `json:"manufacturer,omitzero"`
	Brand          string `json:"brand,omitzero"`
	Model          string `json:"model,omitzero"`
	Product        string `json:"product,omitzero"`
	FormFactor     string `json:"formFactor,omitzero"`
	IsVirtual      bool   `json:"isVirtual,omitzero"`
	IsEmulator     bool   `json:"isEmulator,omitzero"`
	Locale         string `json:"locale,omitzero"`
	TimeZone       string `json:"timeZone,omitzero"`
	OSName         string `json:"osName,omitzero"`
	OSVersion      string `json:"osVersion,omitzero"`
	OSBuild        string `json:"osBuild,omitzero"`
	CPUArch        string `json:"cpuArch,omitzero"`
	CPUCoreCount   int    `json:"cpuCoreCount,omitzero"`
}

// ProfileApp describes the app.
type ProfileApp struct {
	AppID       string `json:"appId,omitzero"`
	AppName     string `json:"appName,omitzero"`
	ProcessID   int64  `json:"processId,omitzero"`
	VersionName string `json:"versionName,omitzero"`
	BuildNumber string `json:"buildNumber,omitzero"`
	Debuggable  bool   `json:"debuggable,omitzero"`
}

// ParseDeviceProfile reads a device.profile payload leniently: the payload must be a JSON
// object (strictly parsed: no duplicate names, bounded by the control message cap), but a
// modelled member whose JSON type differs from the one modelled here is skipped rather than
// failing the whole profile. The SDKs' member types are not all pinned down (numbers versus
// strings differ between platforms), and a refused profile makes the .NET and Kotlin SDKs
// close the session.
func ParseDeviceProfile(payload jsontext.Value) (*DeviceProfile, error) {
	if len(payload) == 0 || payload.Kind() != '{' {
		return nil, malformed("device.profile payload is not a JSON object")
	}
	var p DeviceProfile
	if err := decodeLenient(payload, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// decodeLenient decodes an object member by member into the struct v points to, recursing
// into nested structs, and skips members that do not fit.
func decodeLenient(obj jsontext.Value, v any) error {
	var members map[string]jsontext.Value
	if err := decodeStrict(obj, &members); err != nil {
		return err
	}
	// Decode each modelled member alone: marshal a one-member object and unmarshal it into
	// v; a failure leaves that member zero. Nested objects recurse so one bad leaf does not
	// drop its siblings.
	switch t := v.(type) {
	case *DeviceProfile:
		for name, m := range members {
			switch name {
			case "sdk":
				_ = lenientChild(m, &t.SDK)
			case "device":
				_ = lenientChild(m, &t.Device)
			case "app":
				_ = lenientChild(m, &t.App)
			default:
				decodeMember(name, m, t)
			}
		}
		return nil
	default:
		for name, m := range members {
			decodeMember(name, m, v)
		}
		return nil
	}
}

func lenientChild(m jsontext.Value, v any) error {
	if m.Kind() != '{' {
		return nil
	}
	return decodeLenient(m, v)
}

func decodeMember(name string, m jsontext.Value, v any) {
	one, err := json.Marshal(map[string]jsontext.Value{name: m})
	if err != nil {
		return
	}
	_ = json.Unmarshal(one, v, json.RejectUnknownMembers(false))
}

// Modes of the host's screenshot-capture policy in the device.profile reply.
const (
	JpegCaptureApp  = "app"
	JpegCaptureHost = "host"
)

// DeviceProfileReply is the payload of the host's device.profile answer. A host that does
// not capture screenshots itself answers mode "app", which keeps the SDK's own streaming.
type DeviceProfileReply struct {
	SessionJpegCapture JpegCapturePolicy `json:"sessionJpegCapture"`
}

// JpegCapturePolicy tells the SDK who captures live screenshots.
type JpegCapturePolicy struct {
	Mode                 string `json:"mode"`
	Source               string `json:"source,omitzero"`
	FallbackMode         string `json:"fallbackMode,omitzero"`
	IntervalMilliseconds int    `json:"intervalMilliseconds,omitzero"`
	Quality              int    `json:"quality,omitzero"`
	MaxWidth             int    `json:"maxWidth,omitzero"`
}

// Crash handoff schema and bounds, as the official host enforces them.
const (
	CrashReportSchema = "ansight.crash.v1"
	// MaxCrashReportBytes bounds a crash report's JSON.
	MaxCrashReportBytes = 8 << 20
	// MaxCrashTraceBytes bounds each decoded trace a report carries (traceBase64,
	// metricKitPayloadBase64).
	MaxCrashTraceBytes = 4 << 20
	// MaxCrashIDLength bounds reportId and targetProcessSessionId, in bytes.
	MaxCrashIDLength = 128
)

// CrashHandoff is the crash.handoff payload. A fatal handler only writes the report to the
// app's storage; the next healthy process of the app delivers it with this request and
// deletes it once the host answers success, which the host does only after storing it.
// ReportID with TargetProcessSessionID identifies the report (a retry delivers the same
// one again).
type CrashHandoff struct {
	ReportID string `json:"reportId"`
	// TargetProcessSessionID is the processSessionId of the process that crashed.
	TargetProcessSessionID string `json:"targetProcessSessionId"`
	// TargetSessionID is the host session the crashed process had, when the app knows it
	// (Kotlin sends its own processSessionId here).
	TargetSessionID string `json:"targetSessionId,omitzero"`
	// DeliveryProcessSessionID is the processSessionId of the process delivering it.
	DeliveryProcessSessionID string `json:"deliveryProcessSessionId"`
	// Report is the report object itself (see CrashReportBody), kept as sent.
	Report jsontext.Value `json:"report"`
}

// CrashReportBody is the part of an ansight.crash.v1 report a host reads; the SDKs write
// many more members (candidate, termination, breadcrumbs, …), kept in the raw report.
type CrashReportBody struct {
	Schema                   string  `json:"schema"`
	ReportID                 string  `json:"reportId"`
	PreviousProcessSessionID string  `json:"previousProcessSessionId"`
	AppID                    *string `json:"appId"`
	OccurredAtUTC            string  `json:"occurredAtUtc"`
	Platform                 string  `json:"platform,omitzero"`
	Kind                     string  `json:"kind,omitzero"`
	Confidence               string  `json:"confidence,omitzero"`
	Candidate                *struct {
		Message string `json:"message,omitzero"`
	} `json:"candidate,omitzero"`
	TraceBase64            *string `json:"traceBase64"`
	MetricKitPayloadBase64 *string `json:"metricKitPayloadBase64"`
}

// Annotated-feedback submission constants, as the official host checks them.
const (
	AnnotationSubmitSchema = "ansight.annotation.submit.v1"
	// AnnotationMimeType is the only media type of an annotation bundle (a zip).
	AnnotationMimeType = "application/vnd.ansight.annotation+zip"
)

// AnnotationSubmit is the annotation.submit payload: an annotated-feedback bundle (a zip
// with a manifest, a screenshot, visual trees, the user's shapes and text) announced by
// Transfer, whose ASFT frames follow the host's acceptance.
type AnnotationSubmit struct {
	Schema             string            `json:"schema"`
	ClientAnnotationID string            `json:"clientAnnotationId"`
	CapturedAtUTC      string            `json:"capturedAtUtc"`
	Transfer           *TransferAnnounce `json:"transfer"`
}

// TransferAnnounce describes an ASFT transfer announced in a control request.
type TransferAnnounce struct {
	TransferID   string `json:"transferId"`
	FileName     string `json:"fileName,omitzero"`
	MimeType     string `json:"mimeType"`
	SizeBytes    *int64 `json:"sizeBytes"`
	ChunkBytes   int64  `json:"chunkBytes,omitzero"`
	WireProtocol string `json:"wireProtocol"`
}
