package bench

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/host/tools"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// session is what the measurements drive: one app session, reached either directly through
// the host's protocol client or through a resident host's control API.
type session interface {
	// call runs one tool call; a tool failure is an error. Received artifacts are deleted
	// once counted.
	call(ctx context.Context, c wire.Call) (outcome, error)
	// batch runs calls as one tool.batch and fails unless every item succeeded.
	batch(ctx context.Context, calls []wire.Call) error
	// protocol is the protocol client, nil when the session is reached through the control
	// API (catalog queries need it).
	protocol() *tools.Client
	// id is the session id written in requests.
	id() string
	// hasTool reports whether the app's catalog lists the tool as executable.
	hasTool(ctx context.Context, toolID string) (bool, error)
}

// outcome is what the measurements need of a call's answer.
type outcome struct {
	// payload is the tool.result payload as JSON, uncompressed.
	payload jsontext.Value
	// artifactBytes counts the bytes of completed artifacts.
	artifactBytes int64
}

// directSession calls through a host session's tools.Client in this process.
type directSession struct {
	client    *tools.Client
	sessionID string
}

func (d *directSession) protocol() *tools.Client { return d.client }
func (d *directSession) id() string              { return d.sessionID }

func (d *directSession) call(ctx context.Context, c wire.Call) (outcome, error) {
	res, err := d.client.Call(ctx, c)
	if err != nil {
		return outcome{}, fmt.Errorf("bench: %s: %w", c.ToolID, err)
	}
	out := outcome{payload: res.Raw}
	for _, a := range res.Artifacts {
		if a.Path != "" {
			os.Remove(a.Path)
		}
		if a.Err != nil {
			err = errors.Join(err, fmt.Errorf("bench: %s: artifact %s: %w", c.ToolID, a.FileName, a.Err))
			continue
		}
		out.artifactBytes += a.SizeBytes
	}
	return out, err
}

func (d *directSession) batch(ctx context.Context, calls []wire.Call) error {
	res, err := d.client.Batch(ctx, false, calls)
	if err != nil {
		return fmt.Errorf("bench: batch: %w", err)
	}
	return batchFailure(res.Payload)
}

func (d *directSession) hasTool(ctx context.Context, toolID string) (bool, error) {
	cat, err := d.client.Index(ctx)
	if err != nil {
		return false, fmt.Errorf("bench: catalog: %w", err)
	}
	e := cat.Tool(toolID)
	return e != nil && e.IsExecutable(), nil
}

func batchFailure(res wire.BatchResult) error {
	for i, item := range res.Results {
		if item.Error != nil {
			return fmt.Errorf("bench: batch item %d (%s): %w", i, item.ToolID, item.Error)
		}
	}
	return nil
}

// controlSession calls through a hostapi.Backend (a resident host's control API).
type controlSession struct {
	backend   hostapi.Backend
	sessionID string
}

func (s *controlSession) protocol() *tools.Client { return nil }
func (s *controlSession) id() string              { return s.sessionID }

func (s *controlSession) call(ctx context.Context, c wire.Call) (outcome, error) {
	res, err := s.backend.Call(ctx, s.sessionID, hostapi.CallRequest{ToolID: c.ToolID, Arguments: c.Arguments, CallID: c.CallID}, nil)
	if err != nil {
		return outcome{}, fmt.Errorf("bench: %s: %w", c.ToolID, err)
	}
	var out outcome
	for _, a := range res.Artifacts {
		// The artifacts are the benchmark's own; the host writes them on this machine.
		if a.Path != "" {
			os.Remove(a.Path)
		}
		if a.Status == tools.StatusComplete {
			out.artifactBytes += a.SizeBytes
		} else {
			err = errors.Join(err, fmt.Errorf("bench: %s: artifact %s: %s", c.ToolID, a.FileName, a.Error))
		}
	}
	if !res.Success || res.Result == nil {
		msg := "the call failed"
		if res.Error != nil {
			msg = string(res.Error.Code) + ": " + res.Error.Message
		}
		return outcome{}, fmt.Errorf("bench: %s: %s", c.ToolID, msg)
	}
	payload, merr := wire.Marshal(res.Result)
	if merr != nil {
		return outcome{}, merr
	}
	out.payload = payload
	return out, err
}

func (s *controlSession) batch(ctx context.Context, calls []wire.Call) error {
	req := hostapi.BatchRequest{Calls: make([]hostapi.CallRequest, len(calls))}
	for i, c := range calls {
		req.Calls[i] = hostapi.CallRequest{ToolID: c.ToolID, Arguments: c.Arguments, CallID: c.CallID}
	}
	res, err := s.backend.Batch(ctx, s.sessionID, req, nil)
	if err != nil {
		return fmt.Errorf("bench: batch: %w", err)
	}
	if !res.Success || res.Result == nil {
		msg := "the batch failed"
		if res.Error != nil {
			msg = string(res.Error.Code) + ": " + res.Error.Message
		}
		return fmt.Errorf("bench: batch: %s", msg)
	}
	return batchFailure(*res.Result)
}

func (s *controlSession) hasTool(ctx context.Context, toolID string) (bool, error) {
	t, err := s.backend.Tool(ctx, s.sessionID, toolID)
	if err != nil {
		if code := wire.CodeOf(err); code == wire.CodeNotFound || code == wire.CodeResourceNotFound {
			return false, nil
		}
		return false, fmt.Errorf("bench: tool %s: %w", toolID, err)
	}
	return t.Tool.IsExecutable(), nil
}
