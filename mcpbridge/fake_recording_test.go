package mcpbridge

import (
	"context"
	"io"
	"net/http"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// The fake host keeps no recordings, except the traffic a test gives it (fakeTraffic).

var errNoRecordings = &hostapi.APIError{Status: http.StatusNotFound, Code: wire.CodeRecordingOff, Message: "the fake host records nothing"}

func (f *fakeBackend) Recordings(context.Context) (*hostapi.Sessions, error) {
	return &hostapi.Sessions{Schema: hostapi.SchemaRecordings}, nil
}

func (f *fakeBackend) Records(_ context.Context, id string, _ hostapi.RecordsRequest) (*hostapi.Records, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.traffic == nil {
		return nil, errNoRecordings
	}
	return &hostapi.Records{Schema: hostapi.SchemaRecords, SessionID: id, Records: f.traffic}, nil
}

func (f *fakeBackend) Follow(context.Context, string, hostapi.RecordsRequest, func(hostapi.Record) error) error {
	return errNoRecordings
}

func (f *fakeBackend) Blob(context.Context, string, int64) (*hostapi.Blob, error) {
	return nil, errNoRecordings
}

func (f *fakeBackend) Export(context.Context, string, hostapi.ExportRequest, io.Writer) error {
	return errNoRecordings
}

func (f *fakeBackend) Import(context.Context, hostapi.ImportRequest, io.Reader) (*hostapi.Session, error) {
	return nil, errNoRecordings
}

func (f *fakeBackend) DeleteRecording(context.Context, string) error { return errNoRecordings }

// Events reports nothing: the bridge does not follow session events.
func (f *fakeBackend) Events(ctx context.Context, _ func(hostapi.Event) error) error {
	<-ctx.Done()
	return ctx.Err()
}
