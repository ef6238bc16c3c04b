package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/recording"
	"github.com/ansight-go/ansight/wire"
)

// cmdDemoSignIn signs the demo app in through its sign-in screen, as an agent does with
// ui.perform_action: demosignin SESSION USER PASSWORD waits for the demo's walkthrough to
// end (its last step, a sync, is recorded as a network request), resets the app, then taps
// Sign in, types the user name, taps the password field and types the password into it,
// and taps Sign in. A reference that went stale meanwhile is resolved again.
func cmdDemoSignIn(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: demosignin SESSION USER PASSWORD")
	}
	c := hostapi.NewClient(filepath.Join(ts.Getenv("ANSIGHT_STATE_DIR"), hostapi.SocketName))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for !walkedThrough(ctx, c, args[0]) {
		select {
		case <-ctx.Done():
			ts.Fatalf("demosignin: the demo's walkthrough did not end")
		case <-time.After(50 * time.Millisecond):
		}
	}
	// The walkthrough signed in and left the editor open: sign out, back to the list.
	if r, err := c.Call(ctx, args[0], hostapi.CallRequest{ToolID: "account.sign_out"}, nil); err != nil || !r.Success {
		ts.Fatalf("demosignin: account.sign_out: %v %+v", err, r)
	}
	onScreen := func(node string) bool {
		q, err := c.Call(ctx, args[0], hostapi.CallRequest{ToolID: "ui.query_nodes", Arguments: jsontext.Value(fmt.Sprintf(`{"nodeId":%q}`, node))}, nil)
		return err == nil && q.Success && strings.Contains(string(q.Result.Result), `"count":1`)
	}
	act := func(node, action, value string) {
		for try := 0; ; try++ {
			q, err := c.Call(ctx, args[0], hostapi.CallRequest{ToolID: "ui.query_nodes", Arguments: jsontext.Value(fmt.Sprintf(`{"nodeId":%q}`, node))}, nil)
			if err != nil || !q.Success {
				ts.Fatalf("demosignin: query %s: %v", node, err)
			}
			var found struct {
				Matches []struct {
					Reference jsontext.Value `json:"reference"`
				} `json:"matches"`
			}
			if err := wire.Unmarshal(q.Result.Result, &found); err != nil || len(found.Matches) != 1 {
				ts.Fatalf("demosignin: %s is not on screen (%v)", node, err)
			}
			call := fmt.Sprintf(`{"reference":%s,"action":%q`, found.Matches[0].Reference, action)
			if value != "" {
				call += fmt.Sprintf(`,"value":%q`, value)
			}
			r, err := c.Call(ctx, args[0], hostapi.CallRequest{ToolID: "ui.perform_action", Arguments: jsontext.Value(call + "}")}, nil)
			if err == nil && r.Success {
				return
			}
			if try == 3 || r == nil || r.Error == nil || r.Error.Code != wire.CodeStaleNodeReference {
				ts.Fatalf("demosignin: %s %s: %v %+v", action, node, err, r)
			}
		}
	}
	if onScreen("editor.back") {
		act("editor.back", "tap", "")
	}
	act("list.account", "tap", "")
	act("signin.user", "tap", "")
	act("signin.user", "typeText", args[1])
	act("signin.password", "tap", "")
	act("signin.password", "typeText", args[2])
	act("signin.submit", "tap", "")
}

// walkedThrough reports whether the demo's walkthrough has recorded its sync.
func walkedThrough(ctx context.Context, c *hostapi.Client, session string) bool {
	p, err := c.Records(ctx, session, hostapi.RecordsRequest{Kinds: []hostapi.RecordKind{hostapi.RecordNetwork}, Limit: 1})
	return err == nil && len(p.Records) > 0
}

// cmdArchiveHolds checks an archive (any format): archiveholds FILE TEXT fails unless a
// record or file of it holds TEXT; ! archiveholds FILE TEXT X Y W H fails when one does,
// or when a touch lies in the rectangle (points) — the password field of the demo's
// sign-in screen.
func cmdArchiveHolds(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 && len(args) != 6 {
		ts.Fatalf("usage: archiveholds FILE TEXT [X Y W H]")
	}
	rec, sum, err := recording.OpenArchive(context.Background(), ts.MkAbs(args[0]), 1<<30, recording.ImportOptions{})
	if err != nil {
		ts.Fatalf("archiveholds: %v", err)
	}
	defer rec.Close()
	var rect [4]float64
	if len(args) == 6 {
		for i := range rect {
			fmt.Sscan(args[2+i], &rect[i])
		}
	}
	found := ""
	q := recording.Query{Session: sum.ID, Limit: recording.MaxLimit}
	for found == "" {
		p, err := rec.Records(context.Background(), q)
		if err != nil {
			ts.Fatalf("archiveholds: %v", err)
		}
		for _, r := range p.Records {
			var file []byte
			if r.Blob != "" {
				if f, err := rec.OpenBlob(r); err == nil {
					file, _ = io.ReadAll(f)
					f.Close()
				}
			}
			if strings.Contains(r.Text+string(r.Data), args[1]) || bytes.Contains(file, []byte(args[1])) {
				found = fmt.Sprintf("%s record %d holds %q", r.Kind, r.Seq, args[1])
				break
			}
			if r.Kind == recording.KindTouch && len(args) == 6 {
				var d struct{ X, Y float64 }
				json.Unmarshal(r.Data, &d)
				if d.X >= rect[0] && d.X <= rect[0]+rect[2] && d.Y >= rect[1] && d.Y <= rect[1]+rect[3] {
					found = "a touch in the rectangle: " + r.Text
					break
				}
			}
		}
		if p.Next == 0 {
			break
		}
		q.After = p.Next
	}
	switch {
	case neg && found != "":
		ts.Fatalf("archiveholds: %s", found)
	case !neg && found == "":
		ts.Fatalf("archiveholds: nothing in %s holds %q", args[0], args[1])
	}
}
