package fleet

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/hostapi"
)

// TestRecordingsAcrossTheFleet: a client of the fleet reads another host's recordings as
// its own host's — the list, pages of records, a record's file (a large call answer kept
// as a file), and new records as they come (Follow) — while exporting stays on the host,
// and says so.
func TestRecordingsAcrossTheFleet(t *testing.T) {
	n := startNATS(t, nil)
	cfg := testConfig(n)
	h := startRecordingHost(t, cfg, "a")
	sid := h.connectApp(notesApp)
	c := dialClient(t, cfg)
	waitListing(t, c, 1)
	id := QualifiedID(sid, "a")
	ctx := context.Background()

	// A call whose answer (70 KiB) the recorder keeps as a file.
	res, err := c.Call(ctx, id, hostapi.CallRequest{ToolID: "data.large_result", Arguments: jsontext.Value(`{"sizeBytes":70000}`)}, nil)
	if err != nil || !res.Success {
		t.Fatalf("call: %v %+v", err, res)
	}
	eventually(t, "the call recorded", func() bool {
		p, err := c.Records(ctx, id, hostapi.RecordsRequest{Kinds: []hostapi.RecordKind{hostapi.RecordTraffic}})
		return err == nil && len(p.Records) >= 2
	})

	list, err := c.Recordings(ctx)
	if err != nil || len(list.Sessions) != 1 || list.Sessions[0].ID != id || list.Sessions[0].Host != "a" || list.Sessions[0].Recording == nil {
		t.Fatalf("recordings over the fleet: %+v %v", list, err)
	}
	p, err := c.Records(ctx, id, hostapi.RecordsRequest{Kinds: []hostapi.RecordKind{hostapi.RecordTraffic}})
	if err != nil || p.SessionID != id {
		t.Fatalf("records: %+v %v", p, err)
	}
	var file hostapi.Record
	for _, r := range p.Records {
		if r.Blob != "" {
			file = r
		}
	}
	if file.Seq == 0 {
		t.Fatalf("no record with a file among %+v", p.Records)
	}
	b, err := c.Blob(ctx, id, file.Seq)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(b.Body)
	local, err := h.local.Blob(ctx, sid, file.Seq)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := io.ReadAll(local.Body)
	if len(got) < 70000 || !bytes.Equal(got, want) {
		t.Errorf("the file over the fleet: %d bytes, on the host %d", len(got), len(want))
	}

	// Follow: the records so far, then a new one.
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	seen := make(chan hostapi.Record, 64)
	done := make(chan error, 1)
	go func() {
		done <- c.Follow(fctx, id, hostapi.RecordsRequest{Kinds: []hostapi.RecordKind{hostapi.RecordTraffic}}, func(r hostapi.Record) error {
			seen <- r
			return nil
		})
	}()
	next := func() hostapi.Record {
		t.Helper()
		select {
		case r := <-seen:
			return r
		case err := <-done:
			t.Fatalf("Follow ended: %v", err)
		}
		return hostapi.Record{}
	}
	for range len(p.Records) {
		next()
	}
	if _, err := c.Call(ctx, id, hostapi.CallRequest{ToolID: "notes.list"}, nil); err != nil {
		t.Fatal(err)
	}
	if r := next(); r.Kind != hostapi.RecordTraffic {
		t.Errorf("followed %+v", r)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Follow = %v", err)
	}

	// What stays on the host says so.
	var out bytes.Buffer
	if err := c.Export(ctx, id, hostapi.ExportRequest{}, &out); err == nil || !bytes.Contains([]byte(err.Error()), []byte("stay on each host")) {
		t.Errorf("export over the fleet: %v", err)
	}
}
