package notes

import (
	"testing"
	"time"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/apptest"
	"github.com/ansight-go/ansight/app/files"
	"github.com/ansight-go/ansight/wire"
)

func TestNotesExportArtifact(t *testing.T) {
	m := New(Options{Now: (&fixedClock{time.Date(2025, 3, 14, 9, 41, 0, 0, time.UTC)}).now})
	a := app.New(app.Options{})
	if err := files.RegisterArtifacts(a, m.Artifacts()); err != nil {
		t.Fatal(err)
	}
	h := apptest.New(t, a)
	res, _ := h.Call(files.QueryArtifactsToolID, `{}`)
	if q := obj(t, res); q["artifactCount"] != 1.0 {
		t.Errorf("query = %s", res)
	}
	res, r := h.Call(files.RequestArtifactToolID, `{"providerId":"notes.export","artifactId":"all-notes"}`)
	var out struct {
		TransferID string `json:"transferId"`
	}
	if err := wire.Unmarshal(res, &out); err != nil {
		t.Fatal(err)
	}
	var export struct {
		ExportedAt time.Time `json:"exportedAtUtc"`
		Notes      []Note    `json:"notes"`
	}
	if err := wire.Unmarshal(r.Artifacts[out.TransferID], &export); err != nil {
		t.Fatalf("export %q: %v", r.Artifacts[out.TransferID], err)
	}
	if len(export.Notes) != len(m.notes) || len(export.Notes) == 0 || export.Notes[0].Title != m.notes[0].Title ||
		!export.ExportedAt.Equal(time.Date(2025, 3, 14, 9, 41, 0, 0, time.UTC)) {
		t.Errorf("export = %+v", export)
	}
	if err := h.Fail(files.RequestArtifactToolID, `{"providerId":"notes.export","artifactId":"nope"}`); err.Code != "artifact_not_found" {
		t.Errorf("unknown artifact: %v", err)
	}
}
