package wire

// Message types of the envelope's "type" field.
const (
	TypeQuery       = "tool.query"
	TypeCall        = "tool.call"
	TypeBatch       = "tool.batch"
	TypeCatalog     = "tool.catalog"
	TypeResult      = "tool.result"
	TypeBatchResult = "tool.batch.result"
	TypeError       = "tool.error"
	// TypeCancel is this implementation's extension (docs/protocol/cancel.md): the host
	// gave up the request named in the payload (Cancel); the app cancels its handler and
	// answers nothing. Sent only to an app that advertised session.ExtensionToolCancel.
	TypeCancel = "tool.cancel"
)

// CapabilityToolExec is the only capability of the protocol; an envelope without one means it.
const CapabilityToolExec = "tool.exec"

// CatalogSchema names the catalog payload format this package reads and writes.
const CatalogSchema = "ansight.tool-catalog.v3"

// Query detail levels.
const (
	DetailIndex       = "index"
	DetailDefinitions = "definitions"
	DetailFull        = "full"
)

// Argument encodings of a tool definition. ArgumentEncodingJSON is the default and is
// omitted on the wire.
const (
	ArgumentEncodingJSON            = "json"
	ArgumentEncodingFlattenedString = "flattened-string"
)

// Evidence names accepted in after.include, and the tools they invoke by default.
const (
	EvidenceVisualTree = "visualTree"
	EvidenceScreenshot = "screenshot"

	VisualTreeToolID = "ui.get_visual_tree"
	ScreenshotToolID = "ui.get_screenshot"
)

// Protocol limits fixed by the specification.
const (
	// MaxBatchSize is the largest number of calls in one tool.batch.
	MaxBatchSize = 32
	// MaxAfterDelayMilliseconds bounds after.delayMilliseconds (0..2000).
	MaxAfterDelayMilliseconds = 2000
	// MaxAfterInclude bounds after.include. The specification names two evidences (with
	// two aliases), so a longer list can only repeat them: decoding refuses one beyond this
	// before holding it in memory.
	MaxAfterInclude = 16
	// MaxQueryLimit and DefaultQueryLimit bound a query's limit/maxResults (clamped 1..1000).
	MaxQueryLimit     = 1000
	DefaultQueryLimit = 1000
	// MaxDepth is the deepest JSON nesting the strict decoder accepts.
	MaxDepth = 256
	// CompressionThreshold is the compact payload size (bytes) from which responses are
	// gzip-wrapped, when the wrapper is strictly smaller.
	CompressionThreshold = 32768
	// DefaultMaxInflatedBytes caps a decompressed payload unless the reader sets another limit.
	DefaultMaxInflatedBytes = 64 << 20
	// DefaultMaxMessageBytes caps one text message handed to the decoder.
	DefaultMaxMessageBytes = 64 << 20
)

// ASFT artifact descriptor values (a result that announces a binary transfer).
const (
	DeliveryModeWebSocketBinary = "websocket_binary"
	FileTransferProtocol        = "ansight.file-transfer.v1"
)
