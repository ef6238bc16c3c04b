package recording

import (
	"time"
	"unsafe"

	"github.com/ansight-go/ansight/internal/redact"
)

// entry is one record about to be stored: what a parser makes of a message.
type entry struct {
	kind    Kind
	at      time.Time
	level   Level
	text    string
	channel int
	hasChan bool
	value   float64
	data    []byte // a JSON object, or nil
	// blob is the content of the record's file and ext its extension ("jpg", "json"), or,
	// when link is set, the path of an existing file to link (artifacts, kept files); owned
	// says that file is the recorder's own (a staged link, an imported file): it is moved.
	blob  []byte
	ext   string
	link  string
	owned bool
}

// rowOverhead is what a record costs beyond its data, text and file: the row's fixed
// columns and its index entry, roughly.
const rowOverhead = 64

// held is what the entry takes in memory, roughly: its struct, data, text and file content.
func (e *entry) held() int64 {
	return int64(unsafe.Sizeof(*e)) + int64(len(e.data)+len(e.text)+len(e.blob)+len(e.ext)+len(e.link))
}

// size is what the entry counts against the budgets.
func (e *entry) size(blobBytes int64) int64 {
	return rowOverhead + int64(len(e.data)) + int64(len(e.text)) + blobBytes
}

// Bounds on what one record may hold, so that a misbehaving app cannot make the host keep
// unbounded text per record (messages themselves are bounded by the host's read limit).
const (
	maxTextBytes    = 4 << 10  // a record's summary (a log line is kept whole in Data)
	maxInlineBytes  = 64 << 10 // a traffic payload kept inline; larger ones become a file
	maxVerbatim     = 1 << 20  // an unknown message kept verbatim
	maxItemsPerMsg  = 10000    // metrics, events, channels or touch rows in one message
	maxLogLineBytes = 256 << 10
)

// clip bounds s to n bytes without splitting a UTF-8 sequence, marking a cut with "…".
var clip = redact.Clip
