package files_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/apptest"
	"github.com/ansight-go/ansight/app/files"
	"github.com/ansight-go/ansight/wire"
)

// closer counts the closes of an artifact body.
type closer struct {
	io.Reader
	closed *atomic.Int32
}

func (c closer) Close() error { c.closed.Add(1); return nil }

// exportProvider is a provider with one artifact (a JSON export whose content depends on
// the request's arguments), one that fails, and one that returns a *wire.Error.
func exportProvider(closed *atomic.Int32) files.ArtifactProvider {
	return files.ArtifactProvider{
		ID: "notes.export", Name: "Notes export", Description: "Exports the notes.", Category: "data",
		Tags: []string{"notes"}, Metadata: map[string]string{"owner": "demo"},
		List: func(ctx context.Context) ([]files.ArtifactInfo, error) {
			return []files.ArtifactInfo{
				{ID: "all-notes", Name: "All notes", Kind: "snapshot", Category: "data", Tags: []string{"json", "notes"},
					MimeType: "application/json", FileName: "notes.json"},
				{ID: "broken", Name: "Broken", Kind: "report", Category: "diagnostics"},
			}, nil
		},
		Create: func(ctx context.Context, req files.ArtifactRequest) (*files.Artifact, error) {
			switch req.ArtifactID {
			case "all-notes":
				body := `{"arguments":` + string(req.Arguments) + `,"request":"` + req.RequestID + `"}`
				return &files.Artifact{Size: int64(len(body)), Body: closer{strings.NewReader(body), closed}}, nil
			case "broken":
				return nil, errors.New("the disk is full")
			case "busy":
				return nil, &wire.Error{Code: "notes_busy", Message: "try later", Retryable: true}
			case "nameless":
				return &files.Artifact{Size: 1, Body: closer{strings.NewReader("x"), closed}}, nil
			}
			return nil, app.ToolErrorf("artifact_not_found", "no artifact %q", req.ArtifactID)
		},
	}
}

func artifactHarness(t *testing.T, closed *atomic.Int32) *apptest.Harness {
	t.Helper()
	a := app.New(app.Options{})
	failing := files.ArtifactProvider{ID: "crash.reports", Name: "Crash reports",
		List: func(ctx context.Context) ([]files.ArtifactInfo, error) { return nil, errors.New("index unreadable") },
		Create: func(ctx context.Context, req files.ArtifactRequest) (*files.Artifact, error) {
			return nil, errors.New("no")
		}}
	if err := files.RegisterArtifacts(a, exportProvider(closed), failing); err != nil {
		t.Fatal(err)
	}
	return apptest.New(t, a)
}

func TestArtifactsQuery(t *testing.T) {
	t.Parallel()
	h := artifactHarness(t, new(atomic.Int32))
	// The official host calls artifacts.query with {} as soon as a session opens.
	res, _ := h.Call(files.QueryArtifactsToolID, `{}`)
	for _, want := range []string{
		`"providers":[{"id":"notes.export","name":"Notes export","description":"Exports the notes.","category":"data","tags":["notes"],"metadata":{"owner":"demo"},"error":null},` +
			`{"id":"crash.reports","name":"Crash reports","description":"","category":"","tags":[],"metadata":{},"error":"index unreadable"}]`,
		`{"providerId":"notes.export","id":"all-notes","name":"All notes","kind":"snapshot","category":"data","tags":["json","notes"],` +
			`"content":{"supportedMimeTypes":["application/json"],"defaultMimeType":"application/json","suggestedFileName":"notes.json"}}`,
		`"providerCount":2,"artifactCount":2`,
	} {
		if !strings.Contains(string(res), want) {
			t.Errorf("query = %s\nwant it to contain %s", res, want)
		}
	}
	for args, count := range map[string]string{
		`{"providerId":"NOTES.EXPORT"}`:  `"providerCount":1,"artifactCount":2`,
		`{"kind":"report"}`:              `"providerCount":2,"artifactCount":1`,
		`{"tag":"JSON","category":null}`: `"providerCount":2,"artifactCount":1`,
		`{"category":"nope"}`:            `"providerCount":2,"artifactCount":0`,
	} {
		if res, _ := h.Call(files.QueryArtifactsToolID, args); !strings.Contains(string(res), count) {
			t.Errorf("query %s = %s", args, res)
		}
	}
}

func TestArtifactsRequest(t *testing.T) {
	t.Parallel()
	var closed atomic.Int32
	h := artifactHarness(t, &closed)
	res, r := h.Call(files.RequestArtifactToolID, `{"providerId":"notes.export","artifactId":"all-notes","arguments":{"since":"2026-01-01"},"chunkBytes":2048}`)
	var out struct {
		Artifact struct {
			ArtifactID string `json:"artifactId"`
			ProviderID string `json:"providerId"`
			Name       string `json:"name"`
			Kind       string `json:"kind"`
			MimeType   string `json:"mimeType"`
			FileName   string `json:"fileName"`
			SizeBytes  int64  `json:"sizeBytes"`
		} `json:"artifact"`
		TransferID   string `json:"transferId"`
		DownloadID   string `json:"downloadId"`
		ChunkBytes   int    `json:"chunkBytes"`
		DeliveryMode string `json:"deliveryMode"`
		SizeBytes    int64  `json:"sizeBytes"`
	}
	if err := wire.Unmarshal(res, &out); err != nil {
		t.Fatal(err)
	}
	body := string(r.Artifacts[out.TransferID])
	a := out.Artifact
	if body != `{"arguments":{"since":"2026-01-01"},"request":"`+out.DownloadID+`"}` || a.ArtifactID != "all-notes" || a.ProviderID != "notes.export" ||
		a.Name != "All notes" || a.Kind != "snapshot" || a.MimeType != "application/json" || a.FileName != "notes.json" ||
		a.SizeBytes != int64(len(body)) || out.SizeBytes != a.SizeBytes || out.ChunkBytes != 2048 || out.DeliveryMode != "websocket_binary" {
		t.Errorf("request = %s, body %q", res, body)
	}
	if !bytes.HasPrefix([]byte(out.DownloadID), []byte("req-")) {
		t.Errorf("downloadId %q is not the request id", out.DownloadID)
	}

	failures := []struct {
		args string
		code wire.Code
	}{
		{`{"providerId":"nope","artifactId":"x"}`, files.CodeArtifactProviderNotFound},
		{`{"providerId":"notes.export","artifactId":"broken"}`, files.CodeArtifactRequestFailed},
		{`{"providerId":"notes.export","artifactId":"busy"}`, "notes_busy"},
		{`{"providerId":"notes.export","artifactId":"other"}`, "artifact_not_found"},
		{`{"providerId":"notes.export","artifactId":"nameless"}`, files.CodeArtifactRequestFailed},
		{`{"providerId":"notes.export","artifactId":"all-notes","arguments":[1]}`, files.CodeArtifactRequestFailed},
		{`{"artifactId":"all-notes"}`, wire.CodeArgumentsSchemaInvalid},
	}
	for _, f := range failures {
		t.Run(f.args, func(t *testing.T) {
			if err := apptest.New(t, h.App()).Fail(files.RequestArtifactToolID, f.args); err.Code != f.code {
				t.Errorf("request %s: %v, want %s", f.args, err, f.code)
			}
		})
	}
	// Every body was closed: the streamed one after its transfer, the refused one at once.
	if n := closed.Load(); n != 2 {
		t.Errorf("%d bodies closed, want 2", n)
	}
}

func TestRegisterArtifacts(t *testing.T) {
	t.Parallel()
	create := func(ctx context.Context, req files.ArtifactRequest) (*files.Artifact, error) { return nil, nil }
	for name, ps := range map[string][]files.ArtifactProvider{
		"bad id":    {{ID: "a b", Create: create}},
		"same id":   {{ID: "a", Create: create}, {ID: "A", Create: create}},
		"no Create": {{ID: "a"}},
	} {
		if err := files.RegisterArtifacts(app.New(app.Options{}), ps...); err == nil {
			t.Errorf("%s: registered", name)
		}
	}
	// A second registration adds its providers to the first one's tools; ids stay unique
	// across them.
	a := app.New(app.Options{})
	if err := files.RegisterArtifacts(a, files.ArtifactProvider{ID: "first", Create: create}); err != nil {
		t.Fatal(err)
	}
	if err := files.RegisterArtifacts(a, files.ArtifactProvider{ID: "FIRST", Create: create}); err == nil {
		t.Error("a provider id registered twice across calls")
	}
	if err := files.RegisterArtifacts(a, files.ArtifactProvider{ID: "second", Create: create}); err != nil {
		t.Fatal(err)
	}
	v, _ := apptest.New(t, a).Call(files.QueryArtifactsToolID, `{}`)
	if !strings.Contains(string(v), `"id":"first"`) || !strings.Contains(string(v), `"id":"second"`) || strings.Contains(string(v), "FIRST") {
		t.Errorf("artifacts.query after two registrations = %s", v)
	}
}

func TestTheOfficialHostRegistersTheTransfers(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	a := app.New(app.Options{})
	if err := files.Register(a, s.options()); err != nil {
		t.Fatal(err)
	}
	if err := files.RegisterArtifacts(a, exportProvider(new(atomic.Int32))); err != nil {
		t.Fatal(err)
	}
	h := apptest.New(t, a)
	for _, c := range []struct{ tool, args string }{
		{files.BeginBinaryDownloadToolID, `{"root":"docs","path":"readme.md"}`},
		{files.RequestArtifactToolID, `{"providerId":"notes.export","artifactId":"all-notes"}`},
	} {
		t.Run(c.tool, func(t *testing.T) {
			r := apptest.New(t, h.App()).Send(wire.TypeCall, fmt.Sprintf(`{"toolId":%q,"arguments":%s}`, c.tool, c.args))
			ids := r.OfficialHost
			if len(ids) != 1 || len(r.Artifacts) != 1 || r.Artifacts[ids[0]] == nil {
				t.Errorf("the official host registers %v; the app sent %d transfers", ids, len(r.Artifacts))
			}
		})
	}
}
