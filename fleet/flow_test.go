package fleet

import (
	"context"
	"slices"
	"testing"

	"github.com/ansight-go/ansight/flow"
)

// TestFlowMatrix runs flows against the demo app on two hosts of a fleet, through the
// fleet's client (as 'ansight --fleet … test run --all-sessions' does): one result per flow
// per session, each session's flows in order, the screenshot pulled from the far host, and
// each host's grant applied to the critical call.
func TestFlowMatrix(t *testing.T) {
	ns := startNATS(t, nil)
	cfg := testConfig(ns)
	a := startTestHost(t, cfg, "a")
	b := startTestHost(t, cfg, "b")
	ids := []string{QualifiedID(a.connectApp(notesApp), "a"), QualifiedID(b.connectApp(notesApp), "b")}
	c := dialClient(t, cfg)
	waitListing(t, c, 2)

	create, err := flow.Parse("create.yaml", []byte(`schema: ansight.flow/v1
name: create and read back
steps:
  - call: notes.create
    arguments: {title: Matrix, body: two hosts}
    save: note
    expect: [{path: /id, matches: "^n[0-9]+$"}]
  - call: notes.get
    arguments: {id: "${note.id}"}
    expect: [{path: /title, equals: Matrix}]
  - screenshot: far-screen
  - call: notes.delete_all
    expectError: {code: tool_policy_not_granted}
`))
	if err != nil {
		t.Fatal(err)
	}
	count, err := flow.Parse("count.yaml", []byte(`schema: ansight.flow/v1
name: the note is listed
steps:
  - call: notes.list
    expect: [{path: /notes, contains: {title: Matrix}}]
`))
	if err != nil {
		t.Fatal(err)
	}
	var jobs []flow.Job
	for _, id := range ids {
		for _, f := range []*flow.Flow{create, count} {
			_, host := SplitID(id)
			jobs = append(jobs, flow.Job{Flow: f, Target: flow.SessionTarget{Backend: c, SessionID: id}, SessionID: id, AppID: notesApp, Host: host})
		}
	}
	rep := flow.RunAll(context.Background(), jobs, flow.Options{}, 0)
	if rep.Passed != 4 {
		for _, r := range rep.Results {
			t.Logf("%s on %s: %s %+v", r.Name, r.SessionID, r.Status, r.Failure)
		}
		t.Fatalf("%d of 4 passed", rep.Passed)
	}
	var hosts []string
	for _, r := range rep.Results {
		hosts = append(hosts, r.Host)
		if r.Name == "create and read back" {
			if s := r.Steps[2].Screenshot; s == nil || len(s.PNG) < 1000 {
				t.Errorf("no screenshot from %s", r.Host)
			}
		}
	}
	if !slices.Equal(hosts, []string{"a", "a", "b", "b"}) {
		t.Errorf("hosts %v", hosts)
	}
}
