package mcpbridge

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/image/draw"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// Bounds of the image handling. Screenshots come from the host's own artifact directory,
// but a bridge must not fall over on a huge or hostile file either.
const (
	maxImageFileBytes = 64 << 20
	maxImagePixels    = 64 << 20
	// maxInlineImageBytes keeps the base64 image under what clients accept in one result
	// (Claude Desktop refuses results over 1 MiB characters): 600 KiB is 800 KiB of base64.
	maxInlineImageBytes = 600 << 10
	// inlineJPEGQuality is used when a PNG is too large to inline.
	inlineJPEGQuality = 80
	// minInlineWidth is where halving stops.
	minInlineWidth = 64
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

func (br *Bridge) takeScreenshot(ctx context.Context, in *screenshotInput) (*mcp.CallToolResult, error) {
	sess, err := br.session(ctx, in.selector)
	if err != nil {
		return fail(err, in.SessionID, wire.ScreenshotToolID)
	}
	args, err := screenshotArguments(in.Arguments, in.Format)
	if err != nil {
		return fail(err, sess.ID, wire.ScreenshotToolID)
	}
	res, err := br.call(ctx, sess, hostapi.CallRequest{ToolID: wire.ScreenshotToolID, Arguments: args})
	if err != nil {
		return fail(err, sess.ID, wire.ScreenshotToolID)
	}
	if !res.Success {
		return structured(callOutputOf(res, ""), true)
	}
	path, mime, err := imageArtifact(res)
	if err != nil {
		return fail(err, sess.ID, wire.ScreenshotToolID)
	}
	maxWidth := br.opts.ScreenshotMaxWidth
	if in.MaxWidth > 0 {
		maxWidth = in.MaxWidth
	}
	img, err := loadImage(path, mime, maxWidth)
	if err != nil {
		return fail(err, sess.ID, wire.ScreenshotToolID)
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
	return structured(out, false, &mcp.ImageContent{Data: img.data, MIMEType: img.mime})
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
func imageArtifact(res *hostapi.Call) (path, mime string, err error) {
	var failed []string
	for _, a := range res.Artifacts {
		switch {
		case a.Status != "" && a.Status != "complete" || a.Path == "":
			failed = append(failed, cmp.Or(a.Error, a.Status))
		case strings.HasPrefix(a.MimeType, "image/") || a.MimeType == "":
			return a.Path, a.MimeType, nil
		}
	}
	e := failf(wire.CodeNoScreenshot, "the app answered without an image file")
	if len(failed) > 0 {
		e.Message += " (transfer failed: " + strings.Join(failed, "; ") + ")"
		e.Retryable = true
	}
	return "", "", e
}

// inlineImage is an image ready to hand to a client.
type inlineImage struct {
	data                  []byte
	mime                  string
	width, height         int
	origWidth, origHeight int
	scaled                bool
}

// loadImage reads a PNG or JPEG file and returns it at most maxWidth wide and at most
// maxInlineImageBytes large: scaled down (keeping the aspect ratio) and re-encoded when
// needed, the file's bytes untouched otherwise.
func loadImage(path, mime string, maxWidth int) (*inlineImage, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, failf(wire.CodeNoScreenshot, "open the screenshot: %v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxImageFileBytes+1))
	if err != nil {
		return nil, failf(wire.CodeNoScreenshot, "read the screenshot: %v", err)
	}
	if len(data) > maxImageFileBytes {
		return nil, failf(wire.CodeNoScreenshot, "the screenshot file is larger than %d MiB", maxImageFileBytes>>20)
	}
	return fitImage(data, maxWidth, maxInlineImageBytes)
}

// fitImage is loadImage on bytes, with a budget of maxBytes.
func fitImage(data []byte, maxWidth, maxBytes int) (*inlineImage, error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, failf(wire.CodeNoScreenshot, "the screenshot is not a PNG or JPEG image: %v", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || int64(cfg.Width)*int64(cfg.Height) > maxImagePixels {
		return nil, failf(wire.CodeNoScreenshot, "the screenshot is %dx%d pixels", cfg.Width, cfg.Height)
	}
	out := &inlineImage{data: data, mime: "image/" + format, width: cfg.Width, height: cfg.Height,
		origWidth: cfg.Width, origHeight: cfg.Height}
	if cfg.Width <= maxWidth && len(data) <= maxBytes {
		return out, nil
	}
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, failf(wire.CodeNoScreenshot, "decode the screenshot: %v", err)
	}
	img := src
	if cfg.Width > maxWidth {
		img = scaleToWidth(src, maxWidth)
		out.scaled = true
	}
	// Keep the format while the image fits; a PNG that does not fit becomes a JPEG, and an
	// image that still does not fit is halved until it does.
	asPNG := format == "png"
	for {
		out.width, out.height = img.Bounds().Dx(), img.Bounds().Dy()
		var buf bytes.Buffer
		if asPNG {
			out.mime, err = "image/png", (&png.Encoder{CompressionLevel: png.DefaultCompression}).Encode(&buf, img)
		} else {
			out.mime, err = "image/jpeg", jpeg.Encode(&buf, img, &jpeg.Options{Quality: inlineJPEGQuality})
		}
		if err != nil {
			return nil, fmt.Errorf("mcpbridge: encode screenshot: %w", err)
		}
		if buf.Len() <= maxBytes || out.width <= minInlineWidth {
			out.data = buf.Bytes()
			return out, nil
		}
		if asPNG {
			asPNG = false
			continue
		}
		img = scaleToWidth(img, out.width/2)
		out.scaled = true
	}
}

// scaleToWidth scales img to width pixels, keeping its aspect ratio. Bilinear is sharp
// enough for reading a screen and several times faster than Catmull-Rom.
func scaleToWidth(img image.Image, width int) image.Image {
	b := img.Bounds()
	height := max(1, int(int64(b.Dy())*int64(width)/int64(b.Dx())))
	dst := image.NewRGBA(image.Rect(0, 0, width, height))
	draw.BiLinear.Scale(dst, dst.Bounds(), img, b, draw.Src, nil)
	return dst
}
