package mcpbridge

import (
	"context"
	"io"
	"net/http"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// The bridge exposes no recordings: the fake host keeps none.

var errNoRecordings = &hostapi.APIError{Status: http.StatusNotFound, Code: wire.CodeRecordingOff, Message: "the fake host records nothing"}

func (f *fakeBackend) Recordings(context.Context) (*hostapi.Sessions, error) {
	return &hostapi.Sessions{Schema: hostapi.SchemaRecordings}, nil
}

func (f *fakeBackend) Records(context.Context, string, hostapi.RecordsRequest) (*hostapi.Records, error) {
	return nil, errNoRecordings
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
