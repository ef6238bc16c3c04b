package mcpbridge

import (
	"bytes"
	"fmt"
	"image/png"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// images returns a result's image contents, decoded.
func images(t *testing.T, res *mcp.CallToolResult) [][2]int {
	t.Helper()
	var out [][2]int
	for _, c := range res.Content {
		if img, ok := c.(*mcp.ImageContent); ok {
			cfg, err := png.DecodeConfig(bytes.NewReader(img.Data))
			if err != nil || img.MIMEType != "image/png" {
				t.Fatalf("image content: %v %s", err, img.MIMEType)
			}
			out = append(out, [2]int{cfg.Width, cfg.Height})
		}
	}
	return out
}

// TestCallImages: a screenshot among a call's artifacts (after evidence, or an image the tool
// sends) comes back as image content, its long edge capped; a batch's images share one
// budget; the structured answer says which file is shown.
func TestCallImages(t *testing.T) {
	t.Parallel()
	f := oneSession(t)
	c := f.catalogs["s1"]
	// A 3× phone screenshot: 1170×2532.
	tall := writePNG(t, f.dir, 1170, 2532)
	c.run["notes.create"] = func(jsontext.Value) (jsontext.Value, *wire.Error) { return jsontext.Value(`{"id":"n1"}`), nil }
	c.artifacts["notes.create"] = func() []hostapi.Artifact { return []hostapi.Artifact{pngArtifact(tall)} }
	h := newHarness(t, f, Options{})

	res := h.call(ToolCallAppTool, map[string]any{"toolId": "notes.create", "after": map[string]any{"include": []string{"screenshot"}}})
	var out callOutput
	text(t, res, &out)
	if got := images(t, res); res.IsError || len(got) != 1 || got[0] != [2]int{473, 1023} {
		t.Fatalf("images %v (want one 473x1023), %+v", got, out)
	}
	if len(out.Artifacts) != 1 || out.Artifacts[0].Path != tall || out.Artifacts[0].Image != "shown, scaled to 473x1023" {
		t.Fatalf("artifacts: %+v", out.Artifacts)
	}

	// In a batch, five screenshots: four are shown (the per-result cap), the fifth is named.
	calls := make([]map[string]any, 5)
	for i := range calls {
		calls[i] = map[string]any{"toolId": "notes.create"}
	}
	res = h.call(ToolCallAppTools, map[string]any{"calls": calls})
	var batch batchOutput
	text(t, res, &batch)
	if got := images(t, res); res.IsError || len(got) != maxInlineImages || len(batch.Artifacts) != 5 ||
		!strings.HasPrefix(batch.Artifacts[4].Image, "not shown") {
		t.Fatalf("batch: %d images, artifacts %+v", len(got), batch.Artifacts)
	}
	size := 0
	for _, ct := range res.Content {
		if img, ok := ct.(*mcp.ImageContent); ok {
			size += len(img.Data)
		}
	}
	if size > maxInlineImageBytes {
		t.Errorf("the batch's images are %d bytes, over %d", size, maxInlineImageBytes)
	}
}

// TestFailedArtifactIsAnError: a call whose file did not arrive is a tool error that says
// the tool itself ran.
func TestFailedArtifactIsAnError(t *testing.T) {
	t.Parallel()
	f := oneSession(t)
	c := f.catalogs["s1"]
	c.run["notes.list"] = func(jsontext.Value) (jsontext.Value, *wire.Error) { return jsontext.Value(`{"n":1}`), nil }
	c.artifacts["notes.list"] = func() []hostapi.Artifact {
		return []hostapi.Artifact{{TransferID: "t9", FileName: "export.csv", MimeType: "text/csv", SizeBytes: 10, Status: "failed", Error: "the app stopped sending"}}
	}
	h := newHarness(t, f, Options{ExposeAppTools: "s1"})
	h.sync()
	for _, res := range []*mcp.CallToolResult{
		h.call(ToolCallAppTool, map[string]any{"toolId": "notes.list"}),
		h.call(ToolCallAppTools, map[string]any{"calls": []any{map[string]any{"toolId": "notes.list"}}}),
		h.call("notes_list", nil),
	} {
		e := errorOf(t, res)
		if e.Code != wire.CodeArtifactFailed || !strings.Contains(e.Message, "export.csv") || !strings.Contains(e.Hint, "The tool ran") {
			t.Errorf("%+v", e)
		}
	}
	var out callOutput
	text(t, h.call(ToolCallAppTool, map[string]any{"toolId": "notes.list"}), &out)
	if out.Success || string(out.Result) != `{"n":1}` {
		t.Errorf("the result of the tool is kept: %+v", out)
	}
}

func TestFitWidth(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ w, h, maxWidth, maxSide, want int }{
		{390, 844, 1024, 1024, 390},
		{1170, 2532, 1024, 1024, 473},
		{1600, 800, 1024, 1024, 1024},
		{1600, 800, 300, 1024, 300},
		{1600, 800, 4096, 4096, 1600},
		{1, 100000, 1024, 1024, 1},
	} {
		t.Run(fmt.Sprintf("%dx%d in %d,%d", tc.w, tc.h, tc.maxWidth, tc.maxSide), func(t *testing.T) {
			t.Parallel()
			if got := fitWidth(tc.w, tc.h, tc.maxWidth, tc.maxSide); got != tc.want {
				t.Errorf("fitWidth(%d, %d, %d, %d) = %d, want %d", tc.w, tc.h, tc.maxWidth, tc.maxSide, got, tc.want)
			}
		})
	}
}
