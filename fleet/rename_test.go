package fleet

import (
	"context"
	"testing"

	"github.com/ansight-go/ansight/hostapi"
)

// TestRenameAcrossTheFleet: a client of the fleet renames another host's session on that
// host (over the session's own subject), the answer names the session as the fleet does,
// and the fleet's listing shows the label once the host announces the change.
func TestRenameAcrossTheFleet(t *testing.T) {
	n := startNATS(t, nil)
	cfg := testConfig(n)
	h := startRecordingHost(t, cfg, "a")
	sid := h.connectApp(notesApp)
	c := dialClient(t, cfg)
	waitListing(t, c, 1)
	id := QualifiedID(sid, "a")
	ctx := context.Background()

	got, err := c.Rename(ctx, id, hostapi.RenameRequest{Label: "bench phone"})
	if err != nil || *got != (hostapi.Renaming{Schema: hostapi.SchemaRename, SessionID: id, Label: "bench phone"}) {
		t.Fatalf("Rename over the fleet = %+v, %v", got, err)
	}
	if s, err := h.local.Session(ctx, sid); err != nil || s.Label != "bench phone" {
		t.Fatalf("on the host: %+v, %v", s, err)
	}
	eventually(t, "the label in the fleet's listing", func() bool {
		list, err := c.Sessions(ctx)
		return err == nil && len(list.Sessions) == 1 && list.Sessions[0].Label == "bench phone"
	})
	if _, err := c.Rename(ctx, QualifiedID("no-such-session", "a"), hostapi.RenameRequest{Label: "x"}); err == nil {
		t.Error("renaming a session its host does not know succeeded")
	}
}
