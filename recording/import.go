package recording

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
)

// Archive formats Import reads (ImportReport.Format) and Export writes (ExportOptions.Format).
const (
	// FormatAnsight is our own archive: manifest.json, records.jsonl, blobs/.
	FormatAnsight = "ansight"
	// FormatOfficial is the official host's session archive (session.json of schema
	// ansight.session-capture.v2, or v1 as the official SDKs' older writer made it).
	FormatOfficial = "official"
	// FormatOfflineCapture is an official SDK's offline capture (.ansight/sessions/<id>/
	// with manifest.json and JSON-lines telemetry), plain or AES-encrypted.
	FormatOfflineCapture = "offline-capture"
)

// ImportOptions adjust Import.
type ImportOptions struct {
	// ID is the imported recording's id. Default: the archive's session id, with
	// "-import-N" appended when a recording of that id exists.
	ID string
	// Password opens an encrypted (WinZip AES) archive, as the official SDKs write them
	// with a password. Without it such an archive is refused with a *PasswordError.
	Password string
}

// ImportReport says what an import read and what it left out.
type ImportReport struct {
	// Format is the archive's format (FormatAnsight, FormatOfficial, FormatOfflineCapture);
	// Schema its version ("ansight.session-capture.v2").
	Format string `json:"format"`
	Schema string `json:"schema,omitzero"`
	// Skipped counts entries left out as the official import leaves them out, by reason:
	// "visualTreeSchema" (not ansight.session-visual-tree-snapshot.v2),
	// "visualTreeSnapshotId" (the snapshotId differs from its index entry),
	// "visualTreeDuplicate" (an older tree of the same snapshotId), "visualTreeUnsafePath"
	// (an index path with a ".." segment), "visualTreeMissing" (no entry at the path),
	// "networkRequest" (a request file that is not a JSON object), "appIcon" (the app
	// icon, whose place in the archive is not known here), "label" (the session's label or
	// official name, refused by CheckLabel: the recording is imported without one).
	Skipped map[string]int `json:"skipped,omitempty"`
}

func (rep *ImportReport) skip(reason string) {
	if rep.Skipped == nil {
		rep.Skipped = map[string]int{}
	}
	rep.Skipped[reason]++
}

// importMeta is what an archive says about its recording.
type importMeta struct {
	id    string
	info  []byte // a JSON object: the session's description
	state string
	label string // the session's label (ours) or name (official), not checked yet
}

// importSource is an opened archive of one of the formats, its entries read in order.
type importSource interface {
	meta() importMeta
	// next returns the next entry, its file (if any) extracted; io.EOF after the last one.
	next() (entry, error)
	// report is what was read and skipped, complete after next returned io.EOF.
	report() ImportReport
	close()
}

// openSource finds the archive's format; files are extracted into dir.
func openSource(z *zipArchive, dir string) (importSource, error) {
	switch {
	case z.has(ManifestName) && !z.has(officialSessionName) && isOurManifest(z):
		return openArchive(z, dir)
	case z.has(officialSessionName):
		return openOfficial(z, dir)
	}
	if root, ok := offlineCaptureRoot(z); ok {
		return openOfflineCapture(z, root, dir)
	}
	return nil, fmt.Errorf("the archive is neither an ansight archive (%s), an official session archive (%s) nor an offline capture (.ansight/sessions/<id>/manifest.json)",
		ManifestName, officialSessionName)
}

// Import reads an archive — ours (Export), the official host's (session.json) or an
// official SDK's offline capture, plain or encrypted — and stores it as a new recording
// (Origin "import"). The archive is not trusted: names, sizes and every record are checked
// (see zipArchive), and the recordings' budgets apply to it. An archive that fails a check
// leaves nothing behind; entries the official import skips are skipped and counted in the
// returned Summary's Import report.
func (r *Recorder) Import(ctx context.Context, ra io.ReaderAt, size int64, opts ImportOptions) (Summary, error) {
	if r.readOnly {
		return Summary{}, ErrReadOnly
	}
	z, err := openZip(ra, size, r.opts.MaxBytes, opts.Password)
	if err != nil {
		return Summary{}, fmt.Errorf("recording: import: %w", err)
	}
	tmp, err := os.MkdirTemp(r.dir, "import-")
	if err != nil {
		return Summary{}, err
	}
	defer os.RemoveAll(tmp)
	src, err := openSource(z, tmp)
	if err != nil {
		return Summary{}, fmt.Errorf("recording: import: %w", err)
	}
	defer src.close()
	m := src.meta()

	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	id := opts.ID
	if id == "" {
		// Lower-cased: a session's files live in a directory named by its id, and on a
		// case-insensitive file system (macOS, Windows) "App-1" and "app-1" would share one,
		// so that deleting the one deletes the other's files. The host's own ids are
		// lower-case; an archive's id is whatever its sender wrote.
		id = r.freeID(strings.ToLower(clip(strings.TrimSpace(m.id), 128)))
	} else if r.Recorded(id) {
		return Summary{}, fmt.Errorf("recording: a recording %q exists", id)
	}

	info := m.info
	if obj, err := members(info); err == nil {
		info = obj.set("id", quoted(id)).encode()
	}
	label, badLabel := CheckLabel(m.label)
	if badLabel != nil {
		label = "" // an archive is outside input: a bad label is left out, not the recording
	}
	update := map[string]*sessionUpdate{id: {info: info, state: clip(m.state, 64), label: label}}
	var chunk []pendingEntry
	committed := false
	flush := func() error {
		_, err := r.commit(ctx, chunk, update, "import", false)
		committed = committed || err == nil
		chunk, update = chunk[:0], nil
		return err
	}
	err = func() error {
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			e, err := src.next()
			if err == io.EOF {
				return flush()
			}
			if err != nil {
				return err
			}
			chunk = append(chunk, pendingEntry{session: id, arrival: e.at, entry: e})
			if len(chunk) == importChunk {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}()
	if err != nil {
		if committed {
			r.deleteLocked(ctx, id) // the part already stored
		}
		return Summary{}, fmt.Errorf("recording: import: %w", err)
	}
	r.enforceBudgets(ctx)
	sum, err := r.Session(ctx, id)
	if err != nil {
		return sum, err
	}
	rep := src.report()
	if badLabel != nil {
		rep.skip("label")
	}
	sum.Import = &rep
	return sum, nil
}
