// Package recording keeps session recordings: everything an app sends besides tool
// responses (logs, metrics, events, touches, network requests, visual trees, app state,
// its profile, live screen frames, crash reports), the host's tool traffic with the app
// (requests, responses, sizes, durations, denials, artifacts) and the session's state
// changes, so that they can be browsed, followed, exported and imported after the app has
// gone and the host has restarted.
//
// # Storage
//
// A [Recorder] owns one directory: an SQLite database (recordings.db, through the pure-Go
// modernc.org/sqlite driver, so the host stays one static binary) holds the index and the
// time-ordered records; large blobs — visual trees, artifacts, crash reports, large tool
// payloads — are files beside it under blobs/<session>/<kind>/<seq>.<ext>, and live
// frames' JPEGs are appended to packs, blobs/<session>/frame/<seq>.frames, a few MiB each
// (a file per frame cost the writer a file creation ten times a second per session).
// [Open] reopens what an earlier process recorded, upgrading an older database.
//
// # Intake
//
// A host hands the recorder what its sessions send (host.Options.Recorder):
// [Recorder.RecordMessage], [Recorder.RecordControl], [Recorder.RecordSession] and
// [Recorder.RecordTraffic], and the files it keeps itself — crash reports, annotation
// bundles — with [Recorder.RecordKept]. They never block the session's reader: they queue,
// and one goroutine parses, writes files and commits rows in batches, one batch for what
// arrived in each 5 ms, yielding its processor to the readers as it goes (a tool
// response comes through a session's reader); on Linux its thread is nicer than the
// process's, so that on a busy machine the kernel runs the readers and the apps first. A file the host keeps
// (an artifact, a report, a bundle) is hard-linked at once rather than copied, so that it
// is stored once and survives its owner moving it away. The queue is bounded
// (Options.QueueBytes, Options.QueueMessages): when it is full, telemetry is dropped and
// counted per session; tool traffic, control requests and session changes are never
// dropped. Every parser reads network input and is bounded and fuzzed; a message that
// cannot be read is kept (bounded) as a [KindMessage] record, and unknown members of known
// messages are stored verbatim in [Record.Data]. Network records are sanitised before
// anything is stored (see docs/recordings.md).
//
// # Budgets
//
// Options.MaxBytes bounds all recordings and Options.MaxSessionBytes each one; beyond
// either, the oldest records (and their files) are evicted first. Live frames beyond
// Options.MinFrameInterval per session are thinned. [Recorder.Usage] reports the figures
// `host status` shows.
//
// # Queries
//
// The browse commands, the control API and the player's timeline read through these:
//
//   - [Recorder.Sessions] and [Recorder.Session] list recordings, live and disconnected,
//     with their app, device, time span, size, dropped and evicted counts;
//     [Recorder.Counts] gives the records of each kind.
//   - [Recorder.Records] returns one page of a session's records for a [Query]: kinds
//     (`session logs` is Kinds{KindLog}, `session network` Kinds{KindNetwork}, the
//     timeline several kinds at once), Since/Until on the records' time axis, a minimum
//     log Level, a Search in the one-line Text, a metric Channel, and paging by the After
//     cursor (Page.Next), oldest first or Newest first (a tail).
//   - [Recorder.Follow] is --follow: the page, then every new record as it is committed,
//     until its context ends; [Recorder.Changed] is the underlying wake-up for servers that
//     stream (SSE) on their own.
//   - [Recorder.Record] fetches one record by seq (a call's request or response body for
//     the player), [Recorder.OpenBlob] its file (a frame's JPEG, a tree).
//   - [Recorder.Export] writes a recording as one self-describing zip (manifest.json with
//     format versions, counts and a traffic summary, records.jsonl, blobs/), with an
//     optional redaction list; [Recorder.Import] reads one back as a new recording, all or
//     nothing; [Recorder.Delete] removes one.
//
// Records are JSON-ready: a [Record]'s members are what `--json` prints.
package recording
