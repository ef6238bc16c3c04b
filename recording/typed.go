package recording

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/uitree"
)

// Typed values. An agent that signs in through an app's screen types the password with
// ui.perform_action (typeText or setValue on the password field): the call's arguments,
// which the host records as tool traffic, hold it, though the app never shows it. The
// screen rules therefore cover those calls too: the value of a typing action is replaced
// unless the node it types into is known not to be sensitive — known from a tree of the
// snapshot the call names (a recorded visual tree, or one in a recorded answer:
// ui.get_visual_tree, the matches of ui.query_nodes, a call's visualTree evidence).

// typingActions are the ui.perform_action actions whose value is typed text.
var typingActions = map[string]bool{"typeText": true, "setValue": true}

// performActionID is the UI tool whose calls type.
const performActionID = "ui.perform_action"

// maxKnownSnapshots bounds the snapshots a nodeIndex remembers (the app's toolkit keeps
// 32, and a reference to an older one is stale anyway).
const maxKnownSnapshots = 256

// nodeIndex remembers, per snapshot id, which node ids are sensitive (true) or not (false).
type nodeIndex struct {
	snaps map[string]map[string]bool
	order []string // oldest first, for maxKnownSnapshots
}

func (ix *nodeIndex) set(snapshot, node string, sensitive bool) {
	if snapshot == "" || node == "" {
		return
	}
	if ix.snaps == nil {
		ix.snaps = map[string]map[string]bool{}
	}
	m := ix.snaps[snapshot]
	if m == nil {
		if len(ix.order) == maxKnownSnapshots {
			delete(ix.snaps, ix.order[0])
			ix.order = ix.order[1:]
		}
		m = map[string]bool{}
		ix.snaps[snapshot] = m
		ix.order = append(ix.order, snapshot)
	}
	m[node] = m[node] || sensitive
}

// learnTree reads a visual tree payload (any form uitree reads).
func (ix *nodeIndex) learnTree(payload jsontext.Value) {
	t, err := uitree.Parse(payload)
	if err != nil || t.SnapshotID == "" {
		return
	}
	for _, n := range t.All() {
		ix.set(t.SnapshotID, n.ID, sensitiveNode(n))
	}
}

// learnAnswer reads a tool answer (a tool.result payload, or a batch's): a visual tree
// result, ui.query_nodes matches, and the visualTree evidence of any call.
func (ix *nodeIndex) learnAnswer(payload jsontext.Value) {
	obj, err := members(payload)
	if err != nil {
		return
	}
	for _, it := range arrayItems(obj.get("results")) { // tool.batch.result
		ix.learnAnswer(it)
	}
	if ev, err := members(obj.get("evidence")); err == nil {
		if vt, err := members(ev.get("visualTree")); err == nil {
			ix.learnTree(vt.get("result"))
		}
	}
	res, err := members(obj.get("result"))
	if err != nil {
		return
	}
	if res.get("root") != nil {
		ix.learnTree(obj.get("result"))
		return
	}
	snap, _ := str(res.get("snapshotId"))
	for _, m := range arrayItems(res.get("matches")) {
		node, err := members(m)
		if err != nil {
			continue
		}
		id, _ := str(node.get("id"))
		ix.set(snap, id, sensitiveInput(node) || sensitiveContent(node) || sensitiveMarker(strOf(node.get("automationId"))))
	}
}

// maskTyped replaces, in a tool.call or tool.batch request payload, the value of each
// typing ui.perform_action call whose node is not known to be harmless; it returns the
// payload and how many values it replaced.
func (ix *nodeIndex) maskTyped(payload jsontext.Value) (jsontext.Value, int) {
	obj, err := members(payload)
	if err != nil {
		return payload, 0
	}
	if calls := obj.get("calls"); calls.Kind() == '[' { // tool.batch
		n := 0
		var out []jsontext.Value
		for _, c := range arrayItems(calls) {
			m, k := ix.maskTyped(c)
			out, n = append(out, m), n+k
		}
		if n == 0 {
			return payload, 0
		}
		return obj.set("calls", jsonArray(out)).encode(), n
	}
	if id, _ := str(obj.get("toolId")); id != performActionID {
		return payload, 0
	}
	args, err := members(obj.get("arguments"))
	if err != nil || args.get("value") == nil {
		return payload, 0
	}
	if action, _ := str(args.get("action")); !typingActions[action] {
		return payload, 0
	}
	node, snap := strOf(args.get("nodeId")), strOf(args.get("snapshotId"))
	if ref, err := members(args.get("reference")); err == nil {
		node, snap = firstNonEmpty(strOf(ref.get("nodeId")), node), firstNonEmpty(strOf(ref.get("snapshotId")), snap)
	}
	if sensitive, known := ix.snaps[snap][node]; known && !sensitive {
		return payload, 0
	}
	args = args.set("value", quoted(SanitizeReplacement))
	return obj.set("arguments", args.encode()).encode(), 1
}

// learnTraffic feeds a traffic record (its data, and its payload when it is a file) to
// the index: answers teach it trees.
func (ix *nodeIndex) learnTraffic(data jsontext.Value, file []byte) {
	d, err := members(data)
	if err != nil {
		return
	}
	if dir, _ := str(d.get("direction")); dir != string(wire.TrafficResponse) {
		return
	}
	if p := d.get("payload"); p != nil {
		ix.learnAnswer(p)
	} else if file != nil {
		ix.learnAnswer(file)
	}
}

// maskTraffic applies maskTyped to a traffic record's request: its inline payload in
// data, or its file.
func (ix *nodeIndex) maskTraffic(data jsontext.Value, file []byte) (jsontext.Value, []byte, int) {
	d, err := members(data)
	if err != nil {
		return data, file, 0
	}
	if dir, _ := str(d.get("direction")); dir != string(wire.TrafficRequest) {
		return data, file, 0
	}
	if p := d.get("payload"); p != nil {
		m, n := ix.maskTyped(p)
		if n > 0 {
			data = d.set("payload", m).encode()
		}
		return data, file, n
	}
	if file != nil {
		m, n := ix.maskTyped(file)
		return data, m, n
	}
	return data, file, 0
}
