package apptest_test

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/apptest"
	"github.com/ansight-go/ansight/app/diag"
	"github.com/ansight-go/ansight/app/files"
	"github.com/ansight-go/ansight/app/prefs"
	"github.com/ansight-go/ansight/app/ui"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/wire"
)

// TestOfficialHostTransfers holds the rule against payloads shaped as the official host
// sees them.
func TestOfficialHostTransfers(t *testing.T) {
	t.Parallel()
	desc := func(id string) string {
		return `{"deliveryMode":"websocket_binary","wireProtocol":"ansight.file-transfer.v1","transferId":"` + id + `","sizeBytes":3}`
	}
	for _, tc := range []struct {
		name, payload string
		want          []string
	}{
		{"result of files.begin_binary_download", `{"toolId":"files.begin_binary_download","success":true,"result":` + desc("a") + `}`, []string{"a"}},
		{"result of another tool", `{"toolId":"diag.heap_profile","success":true,"result":` + desc("a") + `}`, nil},
		{"nested in a result", `{"toolId":"artifacts.request","success":true,"result":{"artifact":` + desc("a") + `}}`, nil},
		{"case of the tool id", `{"toolId":"UI.get_screenshot","result":` + desc("a") + `}`, nil},
		{"no size for a screenshot", `{"toolId":"ui.get_screenshot","result":{"deliveryMode":"websocket_binary","wireProtocol":"ansight.file-transfer.v1","transferId":"a"}}`, nil},
		{"artifact size from artifact", `{"toolId":"artifacts.request","result":{"deliveryMode":"websocket_binary","wireProtocol":"ansight.file-transfer.v1","transferId":"a","artifact":{"sizeBytes":"4"}}}`, []string{"a"}},
		{"evidence", `{"toolId":"ui.perform_action","result":{},"evidence":{"screenshot":{"toolId":"ui.get_screenshot","result":` + desc("e") + `}}}`, []string{"e"}},
		{"batch", `{"success":true,"results":[{"toolId":"artifacts.request","result":` + desc("1") + `},{"toolId":"diag.cpu_profile","result":` + desc("2") + `}]}`, []string{"1"}},
		{"array items inherit no tool", `{"toolId":"artifacts.request","items":[{"result":` + desc("x") + `}]}`, nil},
		{"objects inherit their parent's tool", `{"toolId":"artifacts.request","wrap":{"result":` + desc("y") + `}}`, []string{"y"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := apptest.OfficialHostTransfers(jsontext.Value(tc.payload))
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("registered %v, want %v", got, tc.want)
			}
		})
	}
}

// sampleCalls are calls of every tool the SDK's packages register. A tool missing here fails
// TestEveryArtifactReachesTheOfficialHost: a new tool is checked by adding its calls.
var sampleCalls = map[string][]string{
	ui.GetVisualTreeToolID:          {`{}`},
	ui.QueryNodesToolID:             {`{"role":"button"}`},
	ui.PerformActionToolID:          {`{"snapshotId":"$SNAPSHOT","nodeId":"ok","action":"tap"}`},
	ui.WaitToolID:                   {`{"condition":"exists","automationId":"ok"}`},
	ui.GetScreenshotToolID:          {`{}`, `{"format":"png"}`},
	ui.InspectNodeToolID:            {`{"nodeId":"ok","includeAncestors":true}`},
	ui.ShowOverlayToolID:            {`{"overlayId":"o","nodeId":"ok","durationMs":0}`},
	ui.UpdateOverlayToolID:          {`{"overlayId":"o","strokeColor":"blue"}`},
	ui.GetOverlayToolID:             {`{"overlayId":"o"}`},
	ui.QueryOverlaysToolID:          {`{}`},
	ui.RemoveOverlayToolID:          {`{"overlayId":"gone"}`},
	ui.ClearOverlaysToolID:          {`{"metadataKey":"none"}`},
	files.ListDirectoryToolID:       {`{"root":"docs"}`},
	files.BeginBinaryDownloadToolID: {`{"root":"docs","path":"a.txt"}`, `{"root":"docs","path":"a.txt","chunkBytes":1024}`},
	files.PushFileToolID:            {`{"root":"docs","directoryPath":"in","fileName":"b.txt","text":"hi","overwrite":true}`},
	files.ReadFileToolID:            {`{"root":"docs","path":"a.txt"}`},
	files.GetFileChecksumToolID:     {`{"root":"docs","path":"a.txt","algorithms":"all"}`},
	files.DownloadFileToolID:        {`{"root":"docs","path":"a.txt","maxBytes":"2"}`},
	files.CopyFileToolID: {`{"root":"docs","sourcePath":"a.txt","destinationPath":"c.txt","overwrite":true}`,
		`{"root":"docs","sourcePath":"a.txt","destinationPath":"m.txt","overwrite":true}`},
	files.MoveFileToolID:        {`{"root":"docs","sourcePath":"m.txt","destinationPath":"m2.txt","overwrite":true}`},
	files.DeleteFileToolID:      {`{"root":"docs","path":"c.txt"}`},
	files.QueryArtifactsToolID:  {`{}`},
	files.RequestArtifactToolID: {`{"providerId":"diag","artifactId":"goroutines"}`, `{"providerId":"diag","artifactId":"heap"}`},
	diag.RuntimeToolID:          {`{}`},
	diag.MetricsToolID:          {`{"prefix":"/gc/"}`},
	diag.GoroutinesToolID:       {`{}`},
	diag.HeapProfileToolID:      {`{}`},
	diag.CPUProfileToolID:       {`{"seconds":1}`},
	prefs.ListKeysToolID:        {`{}`},
	prefs.GetValueToolID:        {`{"key":"theme"}`},
	prefs.SetValueToolID:        {`{"key":"theme","value":"dark","valueType":"string"}`},
	prefs.RemoveKeyToolID:       {`{"key":"gone"}`},
	// app/data's tools are checked in app/data/sqlitetest, which has a database driver.
}

// TestEveryArtifactReachesTheOfficialHost registers every tool package of the SDK and calls
// each of its tools as a host would: every ASFT transfer a response carries must be one the
// official host registers (its rule: OfficialHostTransfers), or the official host drops the
// bytes and leaves the result "queued". Tools that point at an artifact instead
// (files.ArtifactRef, the diag profiles) are followed to their artifacts.request. The same
// holds for the calls in a batch and for screenshots taken as evidence.
func TestEveryArtifactReachesTheOfficialHost(t *testing.T) {
	t.Parallel()
	a := app.New(app.Options{Guard: catalog.GuardFullAccess})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	settings, err := prefs.OpenFile(filepath.Join(dir, "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		ui.Register(a, screen{}, ui.Options{}),
		files.Register(a, files.Options{Roots: []files.Root{{Alias: "docs", Path: dir}}}),
		diag.Register(a, diag.Options{}),
		prefs.Register(a, prefs.Options{Stores: map[string]prefs.Store{"settings": settings}}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	h := apptest.New(t, a)
	h.Call(ui.ShowOverlayToolID, `{"overlayId":"o","x":1,"y":1,"width":2,"height":2,"durationMs":0}`) // for get and update
	cat := h.Send(wire.TypeQuery, `{"detail":"index"}`).Catalog
	var transfers int
	check := func(t *testing.T, what string, r apptest.Response) {
		t.Helper()
		transfers += len(r.Artifacts)
		if len(r.OfficialHost) != len(r.Artifacts) {
			t.Errorf("%s: the app sent %d transfers, the official host registers %v", what, len(r.Artifacts), r.OfficialHost)
		}
		for _, id := range r.OfficialHost {
			if r.Artifacts[id] == nil {
				t.Errorf("%s: the official host registers %s, which the app never completed", what, id)
			}
		}
	}
	// snapshot is the id of a fresh snapshot, for actions (a capture supersedes the ones
	// before it).
	snapshot := func() string {
		var snap struct {
			SnapshotID string `json:"snapshotId"`
		}
		v, _ := h.Call(ui.QueryNodesToolID, `{}`)
		if err := json.Unmarshal(v, &snap, json.RejectUnknownMembers(false)); err != nil {
			t.Fatal(err)
		}
		return snap.SnapshotID
	}
	var batch []string
	for _, e := range cat.Tools {
		calls, ok := sampleCalls[e.ID]
		if !ok {
			t.Errorf("no sample call of %s: add one to sampleCalls", e.ID)
			continue
		}
		for _, args := range calls {
			payload := fmt.Sprintf(`{"toolId":%q,"arguments":%s}`, e.ID, args)
			if strings.Contains(args, "$SNAPSHOT") {
				payload = strings.ReplaceAll(payload, "$SNAPSHOT", snapshot())
			} else {
				batch = append(batch, payload)
			}
			r := h.Send(wire.TypeCall, payload)
			if r.Err != nil {
				t.Errorf("%s: %v", payload, r.Err)
				continue
			}
			check(t, payload, r)
			for _, ref := range artifactRefs(t, r.Result.Result) {
				args, _ := json.Marshal(ref.Request.Arguments)
				follow := fmt.Sprintf(`{"toolId":%q,"arguments":%s}`, ref.Request.ToolID, args)
				fr := h.Send(wire.TypeCall, follow)
				if fr.Err != nil || len(fr.Artifacts) != 1 {
					t.Errorf("%s points at %s, which gives %v and %d transfers", payload, follow, fr.Err, len(fr.Artifacts))
					continue
				}
				check(t, follow, fr)
			}
		}
	}
	for i := 0; i < len(batch); i += 32 { // the batch bound
		r := h.Send(wire.TypeBatch, `{"continueOnError":true,"calls":[`+strings.Join(batch[i:min(i+32, len(batch))], ",")+`]}`)
		if r.Batch == nil || !r.Batch.Success {
			t.Errorf("the batch failed: %s", r.Payload)
		}
		check(t, "a batch", r)
	}
	r := h.Send(wire.TypeCall, `{"toolId":"ui.perform_action","arguments":{"snapshotId":"`+snapshot()+`","nodeId":"ok","action":"tap"},"after":{"include":["screenshot","visualTree"]}}`)
	if r.Result == nil || !strings.Contains(string(r.Payload), `"evidence":{"screenshot":`) {
		t.Errorf("no screenshot as evidence: %s", r.Payload)
	}
	check(t, "a screenshot as evidence", r)
	if transfers < 10 {
		t.Errorf("only %d transfers were checked", transfers)
	}
}

// artifactRefs finds the artifact references (files.ArtifactRef) in a result.
func artifactRefs(t *testing.T, result jsontext.Value) []files.ArtifactRef {
	var v any
	if err := json.Unmarshal(result, &v); err != nil {
		t.Fatal(err)
	}
	var refs []files.ArtifactRef
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			if req, ok := v["request"].(map[string]any); ok && req["toolId"] == files.RequestArtifactToolID {
				b, _ := json.Marshal(v)
				var ref files.ArtifactRef
				if err := json.Unmarshal(b, &ref); err != nil {
					t.Fatalf("an artifact reference that does not decode: %s: %v", b, err)
				}
				refs = append(refs, ref)
			}
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return refs
}

// screen is a one-button screen.
type screen struct{}

func (screen) Capture(context.Context) (*ui.Node, error) {
	return &ui.Node{ID: "root", Type: "Window", Role: "window", Bounds: &ui.Bounds{Width: 40, Height: 30},
		Children: []*ui.Node{{ID: "ok", Type: "Button", Role: "button", AutomationID: "ok", Label: "OK",
			Actions: []string{ui.ActionTap}, Bounds: &ui.Bounds{X: 5, Y: 5, Width: 30, Height: 20}}}}, nil
}

func (screen) Perform(context.Context, string, ui.Action) (map[string]any, error) { return nil, nil }

func (screen) Render(context.Context) (image.Image, error) {
	img := image.NewRGBA(image.Rect(0, 0, 40, 30))
	for i := range img.Pix {
		img.Pix[i] = byte(i)
	}
	img.Set(1, 1, color.White)
	return img, nil
}
