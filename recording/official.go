package recording

import (
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// The official host's session archive (`ansight session export`), as its source describes
// it (../shared/reference/official-ui-tests-archives.md §5): entry names and schemas.
const (
	officialSessionName   = "session.json"
	officialCaptureV2     = "ansight.session-capture.v2"
	officialCaptureV1     = "ansight.session-capture.v1"
	officialLogsName      = "session-data/logs.json"
	officialLogsSchema    = "ansight.session-archive-logs.v1"
	officialStreamIndex   = "session-data/log-streams/index.json"
	officialStreamIndexV1 = "ansight.session-log-stream-index.v1"
	officialStreamSchema  = "ansight.session-log-stream.v1"
	officialTelemetryName = "session-data/telemetry.json"
	officialTelemetry     = "ansight.session-archive-telemetry.v1"
	officialTouchesName   = "session-data/touches.json"
	officialRequestsDir   = "network/requests/"
	officialTreesDir      = "visual-trees/"
	officialTreeSchema    = "ansight.session-visual-tree-snapshot.v2"
	officialImagesDir     = "session-images/"
	officialArtifactsDir  = "artifacts/"
	officialReportName    = "sanitization/report.json"
	officialReportSchema  = "ansight.session-sanitization-report.v1"
)

// extensionDir holds, inside an official archive we export, the records the official
// format has no place for (tool traffic, control requests, state changes, crash reports as
// records, unknown messages), as our own records.jsonl and blobs: the official host imports
// them as artifact files, and our import restores them as records.
const (
	extensionDir     = officialArtifactsDir + "ansight-go/"
	extensionRecords = extensionDir + RecordsName
	extensionBlobs   = extensionDir + archiveBlobsDir + "/"
	// extensionInfo is the session's description as our host keeps it (Summary.Info: app
	// name and version, platform, SDK, grant, app state, profile), which session.json
	// has no members for.
	extensionInfo = extensionDir + "info.json"
)

// Bounds of the official archive's JSON documents: each is read whole, so each is bounded.
const (
	maxOfficialDoc     = wire64MiB // session.json, logs.json, telemetry.json, touches.json, a tree
	maxOfficialRequest = 4 << 20   // one network request (bodies are 64 KiB at most)
	wire64MiB          = 64 << 20
)

// officialTime formats a time as the official host writes DateTimeOffset values: ISO 8601
// with the offset, which System.Text.Json reads back exactly.
func officialTime(t time.Time) jsontext.Value {
	return quoted(t.UTC().Format("2006-01-02T15:04:05.0000000+00:00"))
}

// Log priorities in the official archive's log entries, as the official SDK's archive
// writer maps them (1 debug, 2 information, 3 warning, 4 error).
func officialPriority(l Level) int {
	switch {
	case l != 0 && l < LevelInfo:
		return 1
	case l >= LevelError:
		return 4
	case l >= LevelWarn:
		return 3
	}
	return 2
}

// levelOfPriority reads an official log entry's priority: a number as above (0 trace,
// 5 and up critical), or a name.
func levelOfPriority(v jsontext.Value) (Level, bool) {
	if n, ok := integer(v, -1<<31, 1<<31); ok {
		switch {
		case n <= 1:
			return LevelDebug, true
		case n == 2:
			return LevelInfo, true
		case n == 3:
			return LevelWarn, true
		}
		return LevelError, true
	}
	if s, ok := str(v); ok {
		if l, ok := ParseLevel(s); ok && l != 0 {
			return l, true
		}
	}
	return 0, false
}

// safeSegment reports whether s can be one segment of an entry name as it is (a frame id,
// a snapshot id in a name).
func safeSegment(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > 200 {
		return false
	}
	return !strings.ContainsAny(s, `/\:`) && checkEntryName(s) == nil
}

// fileSegment makes s a safe, readable piece of an entry name: letters, digits, '-' and
// '_' kept, anything else '-', at most n bytes, never empty.
func fileSegment(s string, n int) string {
	var b strings.Builder
	for _, c := range strings.TrimSpace(s) {
		if b.Len() >= n {
			break
		}
		if c < 0x80 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if out == "" {
		return "x"
	}
	return out
}

// imageExt is the file extension of a frame of the official format name ("jpeg", "png",
// "webp").
func imageExt(format string) string {
	switch lower(strings.TrimPrefix(format, ".")) {
	case "png":
		return "png"
	case "webp":
		return "webp"
	}
	return "jpg"
}

// officialImageEntry is where an official archive keeps a frame's image: the official
// SDK's compatible writer's session-images/<frameId>.jpg (the host's own helper was not
// read; see docs/recordings.md).
func officialImageEntry(frameID string) string {
	return officialImagesDir + frameID + ".jpg"
}

// treeEntryName is where an exported official archive keeps a visual tree, as the
// official writer names them: visual-trees/<yyyyMMddHHmmssfffffff>-<position:6>-<id>.json.
func treeEntryName(at time.Time, position int, snapshotID string) string {
	ts := at.UTC().Format("20060102150405.0000000")
	ts = strings.Replace(ts, ".", "", 1)
	return fmt.Sprintf("%s%s-%06d-%s.json", officialTreesDir, ts, position, fileSegment(snapshotID, 80))
}

// requestEntryName is where an exported official archive keeps a network request:
// network/requests/<yyyyMMddHHmmssfff>-<id>.json.
func requestEntryName(at time.Time, id string) string {
	ts := strings.Replace(at.UTC().Format("20060102150405.000"), ".", "", 1)
	return fmt.Sprintf("%s%s-%s.json", officialRequestsDir, ts, fileSegment(id, 128))
}

// normalizeIndexPath reads a path an official index names (a tree's entryPath), as the
// official reader does: trimmed, backslashes as slashes, no leading slash; ok is false
// when it has a ".." segment.
func normalizeIndexPath(p string) (string, bool) {
	p = strings.TrimLeft(strings.ReplaceAll(strings.TrimSpace(p), `\`, "/"), "/")
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return "", false
		}
	}
	return path.Clean(p), p != ""
}
