package mcpbridge

import (
	"context"
	"io"
	"net/http"

	"github.com/ansight-go/ansight/internal/control"
	"github.com/ansight-go/ansight/recording"
)

// The bridge exposes no recordings: the fake host keeps none.

var errNoRecordings = &control.APIError{Status: http.StatusNotFound, Code: control.CodeRecordingOff, Message: "the fake host records nothing"}

func (f *fakeBackend) Recordings(context.Context) (*control.Sessions, error) {
	return &control.Sessions{Schema: control.SchemaRecordings}, nil
}

func (f *fakeBackend) Records(context.Context, string, control.RecordsRequest) (*control.Records, error) {
	return nil, errNoRecordings
}

func (f *fakeBackend) Follow(context.Context, string, control.RecordsRequest, func(recording.Record) error) error {
	return errNoRecordings
}

func (f *fakeBackend) Blob(context.Context, string, int64) (*control.Blob, error) {
	return nil, errNoRecordings
}

func (f *fakeBackend) Export(context.Context, string, control.ExportRequest, io.Writer) error {
	return errNoRecordings
}

func (f *fakeBackend) Import(context.Context, io.Reader) (*control.Session, error) {
	return nil, errNoRecordings
}

func (f *fakeBackend) DeleteRecording(context.Context, string) error { return errNoRecordings }
