package flow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/uiauto"
	"github.com/ansight-go/ansight/wire"
)

// maxScreenshot bounds the image file a screenshot step reads.
const maxScreenshot = 64 << 20

// SessionTarget is the Target of one session behind a host API (a host in process, the
// resident host over its socket, a fleet): calls and batches as the API makes them, the
// screen through the app's ui.get_screenshot (the PNG file the host saved), the visual
// tree through ui.get_visual_tree.
type SessionTarget struct {
	Backend   hostapi.Backend
	SessionID string
}

// contextBound: every call of the host API ends when its context does.
func (SessionTarget) contextBound() {}

// Call calls a tool of the session, as origin "flow" (recorded with the call).
func (s SessionTarget) Call(ctx context.Context, req hostapi.CallRequest) (*hostapi.Call, error) {
	req.Origin = hostapi.OriginFlow
	return s.Backend.Call(ctx, s.SessionID, req, nil)
}

// Batch sends a batch to the session, as origin "flow".
func (s SessionTarget) Batch(ctx context.Context, req hostapi.BatchRequest) (*hostapi.Batch, error) {
	req.Origin = hostapi.OriginFlow
	return s.Backend.Batch(ctx, s.SessionID, req, nil)
}

// UI runs one UI operation on the session through the host API's (Backend.UI: the host
// captures, resolves the selector and acts), as origin "flow".
func (s SessionTarget) UI(ctx context.Context, req uiauto.Request) (*uiauto.Outcome, error) {
	op, err := s.Backend.UI(ctx, s.SessionID, hostapi.UIRequest{Request: req, Origin: hostapi.OriginFlow})
	if err != nil {
		return nil, err
	}
	return &op.Outcome, nil
}

// Screenshot takes a PNG screenshot through ui.get_screenshot.
func (s SessionTarget) Screenshot(ctx context.Context) ([]byte, error) {
	c, err := s.Call(ctx, hostapi.CallRequest{ToolID: wire.ScreenshotToolID, Arguments: jsontext.Value(`{"format":"png"}`)})
	if err != nil {
		return nil, err
	}
	if !c.Success {
		if c.Error != nil {
			return nil, &c.Error.Error
		}
		return nil, errors.New("the screenshot failed")
	}
	for _, a := range c.Artifacts {
		if a.Path == "" || (a.Status != "" && a.Status != "complete") || (a.MimeType != "" && !strings.HasPrefix(a.MimeType, "image/")) {
			continue
		}
		f, err := os.Open(a.Path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, maxScreenshot+1))
		if err != nil {
			return nil, err
		}
		if len(data) > maxScreenshot {
			return nil, fmt.Errorf("the screenshot %s is larger than %d bytes", a.Path, maxScreenshot)
		}
		return data, nil
	}
	return nil, errors.New("ui.get_screenshot delivered no image file")
}

// Tree returns the result of ui.get_visual_tree.
func (s SessionTarget) Tree(ctx context.Context) (jsontext.Value, error) {
	c, err := s.Call(ctx, hostapi.CallRequest{ToolID: wire.VisualTreeToolID})
	if err != nil {
		return nil, err
	}
	if !c.Success || c.Result == nil {
		if c.Error != nil {
			return nil, &c.Error.Error
		}
		return nil, errors.New("ui.get_visual_tree failed")
	}
	return c.Result.Result, nil
}
