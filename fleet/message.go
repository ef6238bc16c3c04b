package fleet

import (
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/hostapi"
)

// Answers travel as NATS messages on the requester's reply subject. A request gets zero or
// more interim messages (alive, progress), then exactly one final message (result, error
// or blob). The kind is a header, so that a result's JSON is sent as the host encoded it.
const kindHeader = "Ansight-Kind"

// Answer kinds.
const (
	// kindAlive: the host is still working on the request (sent every Presence.AliveMS).
	kindAlive = "alive"
	// kindProgress: a hostapi.Progress of an artifact transfer from the app to the host.
	kindProgress = "progress"
	// kindResult: the answer's JSON (or, for blob requests, the chunk's bytes).
	kindResult = "result"
	// kindError: a hostapi.Error.
	kindError = "error"
	// kindBlob: the answer is larger than a message; its bytes are a blob to fetch (blobRef).
	kindBlob = "blob"
)

// SchemaPresence is the schema of a host's presence message.
const SchemaPresence = "ansight.fleet-presence/v1"

// Presence is what a host announces about itself on ansight.<fleet>.presence.<host>: when
// it joins, when its sessions change, every heartbeat, and when it leaves.
type Presence struct {
	Schema    string    `json:"schema"`
	Host      string    `json:"host"`
	Version   string    `json:"version,omitzero"`
	StartedAt time.Time `json:"startedAt"`
	// Revision identifies the host's session list: it changes whenever anything a listing
	// shows changes (a client holding the same revision holds the same list).
	Revision string `json:"revision"`
	// Sessions and Connected count the sessions listed and those connected.
	Sessions  int `json:"sessions"`
	Connected int `json:"connected"`
	// HeartbeatMS is the interval of the host's heartbeats: a host silent for three of them
	// is taken for dead.
	HeartbeatMS int64 `json:"heartbeatMs"`
	// AliveMS is the interval of the alive messages the host sends while it works on a
	// request: a requester that hears nothing for three of them gives up.
	AliveMS int64 `json:"aliveMs"`
	// Peers are the hosts this host sees in the fleet, itself included: a client that asks
	// every host at once waits for the answers of the hosts named here, and no longer.
	Peers []string `json:"peers,omitempty"`
	// Leaving is set on the last message of a host that leaves the fleet.
	Leaving bool `json:"leaving,omitzero"`
}

// hostSessions answers a discover request (with the presence) and a sessions request.
type hostSessions struct {
	Presence  *Presence         `json:"presence,omitzero"`
	Revision  string            `json:"revision"`
	Unchanged bool              `json:"unchanged,omitzero"`
	Sessions  []hostapi.Session `json:"sessions"`
	// Partial: the list did not fit in one message and was left out; ask the host's
	// sessions subject for it.
	Partial bool `json:"partial,omitzero"`
}

// hostSessionsOut is hostSessions as a host sends it: the list already encoded (it was,
// for its revision).
type hostSessionsOut struct {
	Presence  *Presence      `json:"presence,omitzero"`
	Revision  string         `json:"revision"`
	Unchanged bool           `json:"unchanged,omitzero"`
	Sessions  jsontext.Value `json:"sessions,omitzero"`
	Partial   bool           `json:"partial,omitzero"`
}

// request is the body of every request to a host; each operation reads its own members.
type request struct {
	Session    string                `json:"session,omitzero"`
	Tools      *hostapi.ToolsRequest `json:"tools,omitzero"`
	ToolID     string                `json:"toolId,omitzero"`
	Call       *hostapi.CallRequest  `json:"call,omitzero"`
	Batch      *hostapi.BatchRequest `json:"batch,omitzero"`
	IfRevision string                `json:"ifRevision,omitzero"`
	// Blob, Offset and Length name a chunk of a blob.
	Blob   string `json:"blob,omitzero"`
	Offset int64  `json:"offset,omitzero"`
	Length int64  `json:"length,omitzero"`
	// Reply is the reply subject of the request a cancel withdraws.
	Reply string `json:"reply,omitzero"`
	// Records is a page request of a session's recording; Seq names a record whose file
	// to send.
	Records *hostapi.RecordsRequest `json:"records,omitzero"`
	Seq     int64                   `json:"seq,omitzero"`
	// Rename is a session's new label.
	Rename *hostapi.RenameRequest `json:"rename,omitzero"`
}

// recordFileAnswer is a record's file: its name and type, and its bytes (an answer larger
// than a message is a blob, as any answer).
type recordFileAnswer struct {
	Name     string `json:"name"`
	MimeType string `json:"mimeType"`
	Data     []byte `json:"data"`
}

// blobRef names bytes a host keeps for a requester to fetch in chunks: an artifact file,
// or an answer too large for one message.
type blobRef struct {
	ID   string `json:"id"`
	Size int64  `json:"size"`
}

// callAnswer is the answer to a call: the host's hostapi.Call, and the blobs of its
// artifacts by transfer id.
type callAnswer struct {
	Call  *hostapi.Call      `json:"call"`
	Blobs map[string]blobRef `json:"blobs,omitempty"`
}

// batchAnswer is the answer to a batch.
type batchAnswer struct {
	Batch *hostapi.Batch     `json:"batch"`
	Blobs map[string]blobRef `json:"blobs,omitempty"`
}
