package mcpbridge

import (
	"cmp"
	"context"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

type screenshotInput struct {
	selector
	Format    string         `json:"format,omitzero"`
	MaxWidth  int            `json:"maxWidth,omitzero"`
	Arguments jsontext.Value `json:"arguments,omitzero"`
}

type screenshotOutput struct {
	SessionID      string    `json:"sessionId"`
	Path           string    `json:"path"`
	MimeType       string    `json:"mimeType"`
	Width          int       `json:"width"`
	Height         int       `json:"height"`
	OriginalWidth  int       `json:"originalWidth"`
	OriginalHeight int       `json:"originalHeight"`
	Scaled         bool      `json:"scaled"`
	CapturedAtUtc  time.Time `json:"capturedAtUtc,omitzero"`
}

func (br *Bridge) takeScreenshot(ctx context.Context, _ *mcp.CallToolRequest, in *screenshotInput) (*mcp.CallToolResult, error) {
	sess, err := br.session(ctx, in.selector)
	if err != nil {
		return br.fail(err, in.SessionID, wire.ScreenshotToolID)
	}
	args, err := screenshotArguments(in.Arguments, in.Format)
	if err != nil {
		return br.fail(err, sess.ID, wire.ScreenshotToolID)
	}
	res, err := br.call(ctx, sess, hostapi.CallRequest{ToolID: wire.ScreenshotToolID, Arguments: args}, nil)
	if err != nil {
		return br.fail(err, sess.ID, wire.ScreenshotToolID)
	}
	if !res.Success {
		out, _ := br.callOutputOf(res, "", newImageBudget())
		return structured(out, true)
	}
	path, err := imageArtifact(res)
	if err != nil {
		return br.fail(err, sess.ID, wire.ScreenshotToolID)
	}
	maxWidth := br.opts.ImageMaxSize
	if in.MaxWidth > 0 {
		maxWidth = in.MaxWidth
	}
	img, err := loadImage(path, maxWidth, max(maxWidth, br.opts.ImageMaxSize), maxInlineImageBytes)
	if err != nil {
		return br.fail(err, sess.ID, wire.ScreenshotToolID)
	}
	out := screenshotOutput{SessionID: sess.ID, Path: path, MimeType: img.mime, Width: img.width, Height: img.height,
		OriginalWidth: img.origWidth, OriginalHeight: img.origHeight, Scaled: img.scaled}
	if r := res.Result; r != nil {
		var meta struct {
			CapturedAtUtc time.Time `json:"capturedAtUtc"`
		}
		if wire.Unmarshal(r.Result, &meta) == nil {
			out.CapturedAtUtc = meta.CapturedAtUtc
		}
	}
	return structured(out, false, appImage(&mcp.ImageContent{Data: img.data, MIMEType: img.mime}))
}

// screenshotArguments merges the format into the caller's arguments for ui.get_screenshot.
func screenshotArguments(args jsontext.Value, format string) (jsontext.Value, error) {
	if format == "" {
		return args, nil
	}
	m := map[string]jsontext.Value{}
	if len(args) > 0 {
		if err := wire.Unmarshal(args, &m); err != nil {
			return nil, failf(wire.CodeArgumentsInvalid, "arguments: %v", err)
		}
	}
	m["format"] = jsontext.Value(`"` + format + `"`)
	return wire.Marshal(m)
}

// imageArtifact finds the image file a screenshot call saved.
func imageArtifact(res *hostapi.Call) (path string, err error) {
	var failed []string
	for _, a := range res.Artifacts {
		switch {
		case a.Status != "" && a.Status != "complete" || a.Path == "":
			failed = append(failed, cmp.Or(a.Error, a.Status))
		case strings.HasPrefix(a.MimeType, "image/") || a.MimeType == "":
			return a.Path, nil
		}
	}
	e := failf(wire.CodeNoScreenshot, "the app answered without an image file")
	if len(failed) > 0 {
		e.Message += " (transfer failed: " + strings.Join(failed, "; ") + ")"
		e.Retryable = true
	}
	return "", e
}
