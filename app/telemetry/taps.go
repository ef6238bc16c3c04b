package telemetry

import (
	"context"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/transport"
)

// maxPendingTaps bounds the tap messages waiting to be sent; beyond, new ones are dropped.
const maxPendingTaps = 256

// treeMessage is CLIENT_VISUAL_TREE as the official SDKs send it on a touch: the tree the
// touch landed on, its trigger and its time.
type treeMessage struct {
	Type               string         `json:"type"`
	CapturedAtUTC      string         `json:"capturedAtUtc"`
	Source             string         `json:"source"`
	CaptureTrigger     string         `json:"captureTrigger"`
	TouchAction        string         `json:"touchAction"`
	TouchCapturedAtUTC string         `json:"touchCapturedAtUtc"`
	SnapshotID         string         `json:"snapshotId,omitzero"`
	Payload            jsontext.Value `json:"payload"`
}

// touchMessage is CLIENT_TOUCH_INPUT: one ansight.touches.v1 batch.
type touchMessage struct {
	Type    string       `json:"type"`
	Schema  string       `json:"schema"`
	T0      string       `json:"t0"`
	Space   string       `json:"space"`
	Unit    string       `json:"unit"`
	Surface [3]float64   `json:"surface"`
	Rows    [][5]float64 `json:"rows"`
}

// RecordTap reports a tap the app performed (ui.perform_action, through
// ui.Options.Taps): the visual tree it landed on as CLIENT_VISUAL_TREE (touchAction
// "down"; RecordTapUp sends the tree after it), then the touch —
// down and up at (x, y) in points of a width×height screen — as CLIENT_TOUCH_INPUT, as
// the official SDKs report their touches. A tap on a secure node is masked at the source:
// its tree is sent, its touch never leaves the app (Stats.TapsMasked). It never blocks; a
// full queue drops the tap.
func (t *Telemetry) RecordTap(at time.Time, x, y, width, height float64, secure bool, tree []byte) {
	var head struct {
		SnapshotID string `json:"snapshotId"`
	}
	json.Unmarshal(tree, &head) // the app's own tree; a missing id is only left out
	tm, err := json.Marshal(treeMessage{Type: "CLIENT_VISUAL_TREE", CapturedAtUTC: utc(at), Source: "sdk.touchCapture",
		CaptureTrigger: "touch", TouchAction: "down", TouchCapturedAtUTC: utc(at), SnapshotID: head.SnapshotID, Payload: tree})
	if err != nil {
		return
	}
	t.queueTap(tm)
	if secure {
		t.tapsMasked.Add(1)
		return
	}
	msg, err := json.Marshal(touchMessage{Type: "CLIENT_TOUCH_INPUT", Schema: "ansight.touches.v1", T0: utc(at), Space: "w", Unit: "pt",
		Surface: [3]float64{width, height, 1}, Rows: [][5]float64{{0, 0, 0, x, y}, {0, 2, 0, x, y}}})
	if err == nil {
		t.queueTap(msg)
	}
}

// RecordTapUp reports the visual tree once a tap is done (ui.TapTreeRecorder) as
// CLIENT_VISUAL_TREE with touchAction "up", as the official SDKs send one on touch up: a
// recording then knows the screen the tap led to (and where its sensitive nodes are) from
// the moment it shows. It never blocks; a full queue drops it.
func (t *Telemetry) RecordTapUp(at time.Time, tree []byte) {
	var head struct {
		SnapshotID string `json:"snapshotId"`
	}
	json.Unmarshal(tree, &head) // the app's own tree; a missing id is only left out
	tm, err := json.Marshal(treeMessage{Type: "CLIENT_VISUAL_TREE", CapturedAtUTC: utc(at), Source: "sdk.touchCapture",
		CaptureTrigger: "touch", TouchAction: "up", TouchCapturedAtUTC: utc(at), SnapshotID: head.SnapshotID, Payload: tree})
	if err == nil {
		t.queueTap(tm)
	}
}

func (t *Telemetry) queueTap(msg []byte) {
	select {
	case t.taps <- msg:
	default:
		t.tapsDropped.Add(1)
	}
}

// pumpTaps sends queued tap messages.
func (t *Telemetry) pumpTaps(ctx context.Context, link Link) {
	for {
		select {
		case <-ctx.Done():
			return
		case msg := <-t.taps:
			if err := send(ctx, link, transport.MessageText, msg); err != nil {
				t.tapsDropped.Add(1)
				continue
			}
			t.tapsSent.Add(1)
		}
	}
}
