package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

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
	// No deadline of our own: the wait is on the event (the test binary's -timeout bounds
	// it), so that a loaded machine only makes it slower.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := c.Follow(ctx, args[0], hostapi.RecordsRequest{Kinds: []hostapi.RecordKind{hostapi.RecordNetwork}, Limit: 1},
		func(hostapi.Record) error { return errWalkedThrough }); !errors.Is(err, errWalkedThrough) {
		ts.Fatalf("demosignin: waiting for the demo's walkthrough: %v", err)
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

// errWalkedThrough ends the wait for the demo's walkthrough: its last step, a sync, is
// recorded as a network request.
var errWalkedThrough = errors.New("walked through")

// cmdArchiveHolds checks an archive (any format): archiveholds FILE TEXT fails unless a
// record or file of it holds TEXT, and archiveholds FILE TEXT X Y W H unless, also, a
// touch lies in the rectangle (points: a field of the demo's sign-in screen); TEXT "-"
// checks the touches alone. ! archiveholds fails when the archive holds TEXT or such a
// touch.
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
	text, touch := "", ""
	if args[1] == "-" {
		text = "no text is looked for"
	}
	if len(args) == 2 {
		touch = "no touch is looked for"
	}
	q := recording.Query{Session: sum.ID, Limit: recording.MaxLimit}
	for text == "" || touch == "" {
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
			if text == "" && (strings.Contains(r.Text+string(r.Data), args[1]) || bytes.Contains(file, []byte(args[1]))) {
				text = fmt.Sprintf("%s record %d holds %q", r.Kind, r.Seq, args[1])
			}
			if r.Kind == recording.KindTouch && touch == "" {
				var d struct {
					X float64 `json:"x"`
					Y float64 `json:"y"`
				}
				if err := json.Unmarshal(r.Data, &d); err != nil {
					ts.Fatalf("archiveholds: touch record %d: %v", r.Seq, err)
				}
				if d.X >= rect[0] && d.X <= rect[0]+rect[2] && d.Y >= rect[1] && d.Y <= rect[1]+rect[3] {
					touch = "a touch in the rectangle: " + r.Text
				}
			}
		}
		if p.Next == 0 {
			break
		}
		q.After = p.Next
	}
	holdsText := text != "" && args[1] != "-"
	holdsTouch := touch != "" && len(args) == 6
	switch {
	case neg && holdsText:
		ts.Fatalf("archiveholds: %s", text)
	case neg && holdsTouch:
		ts.Fatalf("archiveholds: %s", touch)
	case !neg && args[1] != "-" && !holdsText:
		ts.Fatalf("archiveholds: nothing in %s holds %q", args[0], args[1])
	case !neg && len(args) == 6 && !holdsTouch:
		ts.Fatalf("archiveholds: no touch in %s lies in %v", args[0], rect)
	}
}
