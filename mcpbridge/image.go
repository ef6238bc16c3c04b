package mcpbridge

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/image/draw"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// Bounds of the image handling. Images come from the host's own artifact directory, but a
// bridge must not fall over on a huge or hostile file either.
const (
	maxImageFileBytes = 64 << 20
	maxImagePixels    = 64 << 20
	// maxInlineImageBytes bounds the images of one result together, so that the base64
	// stays under what clients accept in one result (Claude Desktop refuses results over
	// 1 MiB characters): 600 KiB is 800 KiB of base64.
	maxInlineImageBytes = 600 << 10
	// maxInlineImages bounds the images of one result: an agent reads a few at a time.
	maxInlineImages = 4
	// minInlineImageBytes is the least budget worth trying an image with.
	minInlineImageBytes = 16 << 10
	// inlineJPEGQuality is used when a PNG is too large to inline.
	inlineJPEGQuality = 80
	// minInlineSide is where halving stops.
	minInlineSide = 64
)

// inlineImage is an image ready to hand to a client.
type inlineImage struct {
	data                  []byte
	mime                  string
	width, height         int
	origWidth, origHeight int
	scaled                bool
}

// loadImage reads a PNG or JPEG file and fits it with fitImage.
func loadImage(path string, maxWidth, maxSide, maxBytes int) (*inlineImage, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, failf(wire.CodeNoScreenshot, "open the image: %v", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxImageFileBytes+1))
	if err != nil {
		return nil, failf(wire.CodeNoScreenshot, "read the image: %v", err)
	}
	if len(data) > maxImageFileBytes {
		return nil, failf(wire.CodeNoScreenshot, "the image file is larger than %d MiB", maxImageFileBytes>>20)
	}
	return fitImage(data, maxWidth, maxSide, maxBytes)
}

// fitImage returns the image at most maxWidth wide, with a longer side of at most maxSide
// and at most maxBytes large: scaled down (keeping the aspect ratio) and re-encoded when
// needed, the bytes untouched otherwise. A PNG that does not fit becomes a JPEG, and an
// image that still does not fit is halved until it does.
func fitImage(data []byte, maxWidth, maxSide, maxBytes int) (*inlineImage, error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, failf(wire.CodeNoScreenshot, "not a PNG or JPEG image: %v", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || int64(cfg.Width)*int64(cfg.Height) > maxImagePixels {
		return nil, failf(wire.CodeNoScreenshot, "the image is %dx%d pixels", cfg.Width, cfg.Height)
	}
	out := &inlineImage{data: data, mime: "image/" + format, width: cfg.Width, height: cfg.Height,
		origWidth: cfg.Width, origHeight: cfg.Height}
	width := fitWidth(cfg.Width, cfg.Height, maxWidth, maxSide)
	if width == cfg.Width && len(data) <= maxBytes {
		return out, nil
	}
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, failf(wire.CodeNoScreenshot, "decode the image: %v", err)
	}
	img := src
	if width < cfg.Width {
		img = scaleToWidth(src, width)
		out.scaled = true
	}
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
			return nil, fmt.Errorf("mcpbridge: encode image: %w", err)
		}
		if buf.Len() <= maxBytes || max(out.width, out.height) <= minInlineSide {
			out.data = buf.Bytes()
			return out, nil
		}
		if asPNG {
			asPNG = false
			continue
		}
		img = scaleToWidth(img, max(1, out.width/2))
		out.scaled = true
	}
}

// fitWidth is the width a w×h image gets when it may be at most maxWidth wide and its
// longer side at most maxSide (never wider than it is).
func fitWidth(w, h, maxWidth, maxSide int) int {
	width := min(w, maxWidth)
	if h > w && h > maxSide {
		// A portrait image is bound by its height: a 3× phone screenshot is over twice as
		// tall as it is wide.
		width = min(width, max(1, int(int64(w)*int64(maxSide)/int64(h))))
	} else {
		width = min(width, maxSide)
	}
	return max(1, width)
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

// artifactOutput is a file the app sent, as the agent sees it: where the host saved it,
// and whether this result shows it as an image.
type artifactOutput struct {
	hostapi.Artifact
	// Image is "shown" when the result carries the file as image content (scaled to
	// WIDTHxHEIGHT when it says so), or why it does not.
	Image string `json:"image,omitzero"`
}

// imageBudget hands out the image allowance of one result.
type imageBudget struct {
	bytes, count int
}

func newImageBudget() *imageBudget {
	return &imageBudget{bytes: maxInlineImageBytes, count: maxInlineImages}
}

// artifacts describes a call's artifacts and returns the images among them as content,
// within budget.
func (br *Bridge) artifacts(list []hostapi.Artifact, budget *imageBudget) ([]artifactOutput, []mcp.Content) {
	var out []artifactOutput
	var images []mcp.Content
	for _, a := range list {
		o := artifactOutput{Artifact: a}
		if a.Status == "complete" && a.Path != "" && strings.HasPrefix(a.MimeType, "image/") {
			o.Image, images = br.inline(a.Path, budget, images)
		}
		out = append(out, o)
	}
	return out, images
}

// inline appends the image at path to images when the budget allows, and says what it did.
func (br *Bridge) inline(path string, budget *imageBudget, images []mcp.Content) (string, []mcp.Content) {
	if budget.count == 0 || budget.bytes < minInlineImageBytes {
		return "not shown: this result already carries its share of images; open the file", images
	}
	img, err := loadImage(path, br.opts.ImageMaxSize, br.opts.ImageMaxSize, budget.bytes)
	if err != nil {
		return "not shown: " + err.Error(), images
	}
	budget.count--
	budget.bytes -= len(img.data)
	images = append(images, appImage(&mcp.ImageContent{Data: img.data, MIMEType: img.mime}))
	if img.scaled {
		return fmt.Sprintf("shown, scaled to %dx%d", img.width, img.height), images
	}
	return "shown", images
}
