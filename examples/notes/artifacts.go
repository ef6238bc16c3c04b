package notes

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/ansight-go/ansight/app/files"
	"github.com/ansight-go/ansight/wire"
)

// Artifacts is the demo's artifact provider (package app/files): "notes.export" produces
// the notes as a JSON document, the same data notes.list returns, taken at request time.
// artifacts.request with {"providerId":"notes.export","artifactId":"all-notes"} streams it
// to the host, which writes it to a file.
func (m *Model) Artifacts() files.ArtifactProvider {
	return files.ArtifactProvider{
		ID: "notes.export", Name: "Notes export", Category: "notes", Tags: []string{"notes", "json"},
		Description: "Exports the app's notes as a JSON document.",
		List: func(ctx context.Context) ([]files.ArtifactInfo, error) {
			m.mu.Lock()
			n := len(m.notes)
			m.mu.Unlock()
			return []files.ArtifactInfo{{ID: "all-notes", Name: "All notes", Kind: "snapshot", Category: "notes",
				Description: fmt.Sprintf("Every note (%d %s now).", n, plural(n, "note", "notes")),
				MimeType:    "application/json", FileName: "notes.json"}}, nil
		},
		Create: func(ctx context.Context, req files.ArtifactRequest) (*files.Artifact, error) {
			if req.ArtifactID != "all-notes" {
				return nil, &wire.Error{Code: "artifact_not_found", Message: fmt.Sprintf("notes.export has no artifact %q (it has all-notes)", req.ArtifactID)}
			}
			m.mu.Lock()
			notes := append([]Note(nil), m.notes...)
			at := m.now().UTC()
			m.mu.Unlock()
			body, err := wire.Marshal(struct {
				ExportedAt time.Time `json:"exportedAtUtc"`
				Notes      []Note    `json:"notes"`
			}{at, notes})
			if err != nil {
				return nil, err
			}
			return &files.Artifact{CreatedAt: at, Size: int64(len(body)), Body: bytes.NewReader(body)}, nil
		},
	}
}
