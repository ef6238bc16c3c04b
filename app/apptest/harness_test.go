package apptest_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/apptest"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/wire"
)

type fileArgs struct {
	Size int `json:"size"`
}

type fileResult struct {
	File wire.TransferDescriptor `json:"file"`
}

func TestHarness(t *testing.T) {
	a := app.New(app.Options{})
	err := app.Register(a, catalog.Definition{ID: "t.file", Name: "File", Description: "Sends a file.", Category: "t", Policy: wire.PolicyRead},
		func(ctx context.Context, c *app.Call, in fileArgs) (fileResult, error) {
			if in.Size < 0 {
				return fileResult{}, app.ToolErrorf("bad_size", "size %d", in.Size)
			}
			data := bytes.Repeat([]byte{7}, in.Size)
			return fileResult{File: c.SendArtifact("f.bin", "application/octet-stream", int64(in.Size), bytes.NewReader(data))}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	h := apptest.New(t, a)

	if r := h.Send(wire.TypeQuery, `{"detail":"index"}`); r.Catalog == nil || len(r.Catalog.Tools) != 1 {
		t.Fatalf("query: %+v", r)
	}
	_, r := h.Call("t.file", `{"size":200000}`)
	if len(r.Artifacts) != 1 {
		t.Fatalf("%d artifacts, want 1", len(r.Artifacts))
	}
	for _, data := range r.Artifacts {
		if len(data) != 200000 || data[199999] != 7 {
			t.Errorf("artifact of %d bytes", len(data))
		}
	}
	if e := h.Fail("t.file", `{"size":-1}`); e.Code != "bad_size" {
		t.Errorf("error code %q", e.Code)
	}
}
