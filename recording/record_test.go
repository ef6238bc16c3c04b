package recording

import (
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
)

// TestRecordJSONValue: a metric sample of 0 keeps its "value" (the control API documents
// it for every metric record), other kinds leave a zero value out, and records read back
// as they were written.
func TestRecordJSONValue(t *testing.T) {
	at := time.Date(2026, 3, 20, 10, 0, 0, 0, time.UTC)
	ch := 11
	for _, tc := range []struct {
		name string
		rec  Record
		want string // a substring of the encoding, or "" for none
		not  string // a substring that must be absent
	}{
		{"metric zero", Record{Seq: 1, Kind: KindMetric, At: at, Channel: &ch, Value: 0}, `"value":0`, ""},
		{"metric", Record{Seq: 2, Kind: KindMetric, At: at, Channel: &ch, Value: 59.5}, `"value":59.5`, ""},
		{"log", Record{Seq: 3, Kind: KindLog, At: at, Level: LevelInfo, Text: "hello"}, `"text":"hello"`, `"value"`},
		{"network without duration", Record{Seq: 4, Kind: KindNetwork, At: at}, `"kind":"network"`, `"value"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.rec)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), tc.want) || tc.not != "" && strings.Contains(string(b), tc.not) {
				t.Fatalf("%s", b)
			}
			if strings.Count(string(b), `"value"`) > 1 {
				t.Fatalf("value twice: %s", b)
			}
			var back Record
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			if back.Seq != tc.rec.Seq || back.Kind != tc.rec.Kind || back.Value != tc.rec.Value || !back.At.Equal(tc.rec.At) {
				t.Fatalf("read back %+v from %s", back, b)
			}
		})
	}
}

// TestTreeNodeCountFromPayload: a touch tree whose message has no nodeCount (the SDKs put
// it in the tree alone) is recorded with the tree's, for 'session trees' and the player.
func TestTreeNodeCountFromPayload(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 20, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct{ msg, want string }{
		{`{"type":"CLIENT_VISUAL_TREE","source":"sdk.touchCapture","payload":{"format":"x","nodeCount":14,"root":{}}}`, `"nodeCount":14`},
		{`{"type":"CLIENT_VISUAL_TREE","nodeCount":3,"payload":{"nodeCount":14}}`, `"nodeCount":3`},
		{`{"type":"CLIENT_VISUAL_TREE","payload":{"nodeCount":-1}}`, ``},
	} {
		es := parser{}.text([]byte(tc.msg), at)
		if len(es) != 1 || es[0].kind != KindTree {
			t.Fatalf("%s: %+v", tc.msg, es)
		}
		if got := string(es[0].data); (tc.want == "" && strings.Contains(got, "nodeCount")) || !strings.Contains(got, tc.want) || strings.Count(got, "nodeCount") > 1 {
			t.Errorf("%s: data %s, want %s", tc.msg, got, tc.want)
		}
	}
}
