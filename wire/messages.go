package wire

import (
	"fmt"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// Envelope is one text message of the protocol (docs/protocol/messages.md#envelope). Payload stays raw so that a
// reader can check for the compression wrapper and decode the message-specific body with
// the strict decoder.
type Envelope struct {
	Type       string         `json:"type"`
	ID         string         `json:"id"`
	ReplyTo    string         `json:"replyTo,omitzero"`
	SessionID  string         `json:"sessionId,omitzero"`
	SentAt     time.Time      `json:"sentAt,omitzero"`
	Capability string         `json:"capability,omitzero"`
	Payload    jsontext.Value `json:"payload,omitzero"`
}

// IsRequest reports whether t is a request type (query, call or batch).
func IsRequest(t string) bool { return t == TypeQuery || t == TypeCall || t == TypeBatch }

// IsResponse reports whether t is a response type (catalog, result, batch result or error).
func IsResponse(t string) bool {
	return t == TypeCatalog || t == TypeResult || t == TypeBatchResult || t == TypeError
}

// ResponseID is the id a response to request id carries ("<id>.response"). Correlate by
// ReplyTo, never by this convention.
func ResponseID(requestID string) string { return requestID + responseSuffix }

// responseSuffix makes a response's id from its request's.
const responseSuffix = ".response"

// Query is the tool.query payload (docs/protocol/catalog.md#query). Every field is optional.
type Query struct {
	Detail                 string   `json:"detail,omitzero"`
	IDs                    []string `json:"ids,omitempty"`
	Query                  string   `json:"query,omitzero"`
	Feature                string   `json:"feature,omitzero"`
	Policy                 string   `json:"policy,omitzero"`
	ExecutableOnly         bool     `json:"executableOnly,omitzero"`
	Limit                  int      `json:"limit,omitzero"`
	MaxResults             int      `json:"maxResults,omitzero"`
	IfRevision             string   `json:"ifRevision,omitzero"`
	IfAvailabilityRevision string   `json:"ifAvailabilityRevision,omitzero"`
}

// Catalog is the tool.catalog payload in all its forms (docs/protocol/catalog.md#answer-forms):
//   - full (detail index or full): Tools, Count, Detail (omitted for full), AvailabilityRevision,
//     EvaluatedAtUtc, TotalCount, Categories;
//   - definitions: Tools, Count, Detail only;
//   - unchanged: exactly Schema, Revision, Unchanged;
//   - availability-only: Schema, Revision, Unchanged, AvailabilityRevision, EvaluatedAtUtc, Changes.
//
// Count and TotalCount are pointers so that a zero count is written in a full catalog and
// nothing in the short forms.
type Catalog struct {
	Schema               string             `json:"schema"`
	Revision             string             `json:"revision"`
	Unchanged            bool               `json:"unchanged,omitzero"`
	Tools                []ToolEntry        `json:"tools,omitzero"`
	Count                *int               `json:"count,omitzero"`
	Detail               string             `json:"detail,omitzero"`
	AvailabilityRevision string             `json:"availabilityRevision,omitzero"`
	EvaluatedAtUtc       time.Time          `json:"evaluatedAtUtc,omitzero"`
	TotalCount           *int               `json:"totalCount,omitzero"`
	Categories           map[string]int     `json:"categories,omitzero"`
	Changes              map[string]Runtime `json:"changes,omitzero"`
}

// ToolEntry is one tool in a catalog, in any projection (docs/protocol/catalog.md#projections "Entry projections").
// Index entries carry no schemas; definitions entries no Runtime/Executable; defaults are
// omitted: Runtime when available, Executable when true, empty Keywords and
// PrerequisiteToolIDs, ArgumentEncoding "json".
type ToolEntry struct {
	ID                  string         `json:"id"`
	Name                string         `json:"name"`
	Description         string         `json:"description"`
	Category            string         `json:"category"`
	Policy              Policy         `json:"policy"`
	ArgumentsSchema     jsontext.Value `json:"argumentsSchema,omitzero"`
	ResultSchema        jsontext.Value `json:"resultSchema,omitzero"`
	Keywords            string         `json:"keywords,omitzero"`
	PrerequisiteToolIDs []string       `json:"prerequisiteToolIds,omitempty"`
	ArgumentEncoding    string         `json:"argumentEncoding,omitzero"`
	DefinitionRevision  string         `json:"definitionRevision,omitzero"`
	Runtime             *Runtime       `json:"runtime,omitzero"`
	// Executable is written only as false. A missing value means true.
	Executable *bool `json:"executable,omitzero"`
	// Denial is added by a host, never by an app: why the host will not send a call for
	// this tool (policy above the grant, not executable).
	Denial *Denial `json:"denial,omitzero"`
}

// IsExecutable reads Executable with its default (true) and the runtime's availability.
func (e *ToolEntry) IsExecutable() bool {
	if e.Executable != nil && !*e.Executable {
		return false
	}
	return e.Runtime == nil || e.Runtime.Available
}

// Runtime is a tool's runtime availability (docs/protocol/catalog.md#availability). Available is always written; the
// other fields only when non-empty (Retryable only when true).
type Runtime struct {
	Available     bool   `json:"available"`
	Code          Code   `json:"code,omitzero"`
	Reason        string `json:"reason,omitzero"`
	RequiredState string `json:"requiredState,omitzero"`
	Remediation   string `json:"remediation,omitzero"`
	Retryable     bool   `json:"retryable,omitzero"`
}

// Denial says why a host refuses to send a call for a catalog entry.
type Denial struct {
	Code   Code   `json:"code"`
	Reason string `json:"reason"`
}

// Call is the tool.call payload and one item of a batch (docs/protocol/calls.md#call). Arguments stays raw
// because its shape is checked only after lookup, guard and availability.
type Call struct {
	ToolID    string         `json:"toolId"`
	Arguments jsontext.Value `json:"arguments,omitzero"`
	CallID    string         `json:"callId,omitzero"`
	After     *After         `json:"after,omitzero"`
}

// After asks for post-call evidence (docs/protocol/calls.md#after). Include absent means ["visualTree"].
type After struct {
	Include             EvidenceNames  `json:"include,omitempty"`
	DelayMilliseconds   int            `json:"delayMilliseconds,omitzero"`
	VisualTreeArguments jsontext.Value `json:"visualTreeArguments,omitzero"`
	ScreenshotArguments jsontext.Value `json:"screenshotArguments,omitzero"`
}

// Cancel is the tool.cancel payload (docs/protocol/cancel.md): RequestID is the envelope id
// of the tool.call or tool.batch the host gave up.
type Cancel struct {
	RequestID string `json:"requestId"`
	Reason    string `json:"reason,omitzero"`
}

// Result is the tool.result payload: a successful call.
type Result struct {
	ToolID   string             `json:"toolId"`
	Success  bool               `json:"success"`
	Message  string             `json:"message,omitzero"`
	Result   jsontext.Value     `json:"result,omitzero"`
	Evidence map[string]Outcome `json:"evidence,omitzero"`
}

// Outcome is the result of one call inside evidence or a batch: either success with a
// result or failure with an error.
type Outcome struct {
	ToolID   string             `json:"toolId,omitzero"`
	Success  bool               `json:"success"`
	Message  string             `json:"message,omitzero"`
	Result   jsontext.Value     `json:"result,omitzero"`
	Error    *Error             `json:"error,omitzero"`
	Evidence map[string]Outcome `json:"evidence,omitzero"`
}

// Batch is the tool.batch payload (docs/protocol/calls.md#batches). Calls stay raw: a non-object item is reported
// per item (tool_batch_call_invalid), not for the whole batch.
type Batch struct {
	ContinueOnError bool             `json:"continueOnError,omitzero"`
	Calls           []jsontext.Value `json:"calls"`
}

// BatchResult is the tool.batch.result payload.
type BatchResult struct {
	Success      bool        `json:"success"`
	Completed    int         `json:"completed"`
	Requested    int         `json:"requested"`
	StoppedEarly bool        `json:"stoppedEarly"`
	Results      []BatchItem `json:"results"`
}

// BatchItem is one listed batch outcome with its zero-based input index and the caller's
// callId.
type BatchItem struct {
	Outcome
	Index  int    `json:"index"`
	CallID string `json:"callId,omitzero"`
}

// TransferDescriptor is the part of a tool result that announces an ASFT transfer
// (docs/protocol/artifacts.md#descriptor). Tools embed it in their result objects.
type TransferDescriptor struct {
	DeliveryMode string `json:"deliveryMode"`
	WireProtocol string `json:"wireProtocol"`
	TransferID   string `json:"transferId"`
	SizeBytes    int64  `json:"sizeBytes"`
	FileName     string `json:"fileName,omitzero"`
	MimeType     string `json:"mimeType,omitzero"`
	Status       string `json:"status,omitzero"`
	// ArtifactPath and ReceivedBytes are written by a host once the bytes have arrived.
	ArtifactPath  string `json:"artifactPath,omitzero"`
	ReceivedBytes int64  `json:"receivedBytes,omitzero"`
}

// EvidenceNames is after.include: the evidence names of a call. Decoding refuses a list of
// more than MaxAfterInclude names, and anything but strings, without reading the rest.
type EvidenceNames []string

// UnmarshalJSONFrom decodes a JSON array of at most MaxAfterInclude strings (or null).
func (n *EvidenceNames) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() == 'n' {
		_, err := dec.ReadToken()
		*n = nil
		return err
	}
	if tok, err := dec.ReadToken(); err != nil {
		return err
	} else if tok.Kind() != '[' {
		return fmt.Errorf("include must be an array of evidence names, not %v", tok.Kind())
	}
	names := []string{} // [] asks for no evidence; only an absent include means the default
	for dec.PeekKind() != ']' {
		if len(names) == MaxAfterInclude {
			return fmt.Errorf("include lists more than %d evidence names", MaxAfterInclude)
		}
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		if tok.Kind() != '"' {
			return fmt.Errorf("include holds a %v, not an evidence name", tok.Kind())
		}
		names = append(names, tok.String())
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	*n = names
	return nil
}
