package uiauto_test

import (
	"strings"
	"testing"

	"github.com/ansight-go/ansight/uiauto"
	"github.com/ansight-go/ansight/wire/uitree"
)

// TestValidate: the request checks the official CLI makes of its flags — ranges, required
// options and contradictions — each refusal naming the option, and the edge values it
// accepts.
func TestValidate(t *testing.T) {
	t.Parallel()
	sel := uitree.Selector{Text: "Save"}
	for _, tt := range []struct {
		name string
		req  uiauto.Request
		want string // "" when the request is valid
	}{
		{"assert exists", uiauto.Request{Operation: uiauto.OpAssert, Selector: sel, Exists: ptr(true)}, ""},
		{"assert absent", uiauto.Request{Operation: uiauto.OpAssert, Selector: sel, Exists: ptr(false), Count: ptr(0)}, ""},
		{"assert exists and a count", uiauto.Request{Operation: uiauto.OpAssert, Selector: sel, Exists: ptr(true), Count: ptr(2), ExpectedText: ptr("Save")}, ""},
		{"assert exists with count 0", uiauto.Request{Operation: uiauto.OpAssert, Selector: sel, Exists: ptr(true), Count: ptr(0)}, "exists and count describe contradictory expectations"},
		{"assert not exists with a count", uiauto.Request{Operation: uiauto.OpAssert, Selector: sel, Exists: ptr(false), Count: ptr(2)}, "exists and count describe contradictory expectations"},
		{"assert a node's text when none exists", uiauto.Request{Operation: uiauto.OpAssert, Selector: sel, Exists: ptr(false), ExpectedText: ptr("Save")}, "cannot be combined with exists false or count 0"},
		{"assert a node's state with count 0", uiauto.Request{Operation: uiauto.OpAssert, Selector: sel, Count: ptr(0), ExpectedEnabled: ptr(true)}, "cannot be combined with exists false or count 0"},
		{"assert a negative count", uiauto.Request{Operation: uiauto.OpAssert, Selector: sel, Count: ptr(-1)}, "count must be 0 or more"},
		{"assert without a selector", uiauto.Request{Operation: uiauto.OpAssert, Exists: ptr(true)}, "requires at least one selector"},
		{"find limit", uiauto.Request{Operation: uiauto.OpFind, Selector: sel, Limit: 1001}, "limit must be between 1 and 1000"},
		{"snapshot max nodes", uiauto.Request{Operation: uiauto.OpSnapshot, MaxNodes: 2000, MaxDepth: 64}, ""},
		{"snapshot max depth", uiauto.Request{Operation: uiauto.OpSnapshot, MaxDepth: 65}, "max-depth must be between 1 and 64"},
		{"wait timeout", uiauto.Request{Operation: uiauto.OpWait, Selector: sel, TimeoutMs: ptr(99)}, "timeout-ms must be between 100 and 60000"},
		{"tap timeout 0", uiauto.Request{Operation: uiauto.OpTap, Selector: sel, TimeoutMs: ptr(0)}, ""},
		{"wait stable needs no selector", uiauto.Request{Operation: uiauto.OpWait, Condition: uiauto.ConditionStable, StableSamples: 20}, ""},
		{"wait visible needs one", uiauto.Request{Operation: uiauto.OpWait}, "requires at least one selector"},
		{"index without a criterion", uiauto.Request{Operation: uiauto.OpFind, Selector: uitree.Selector{Index: ptr(1)}}, "require an automation-id, text, role or ancestor"},
		{"swipe direction and orientation", uiauto.Request{Operation: uiauto.OpSwipe, Direction: "up", Orientation: "N"}, "orientation or direction, not both"},
		{"swipe half the coordinates", uiauto.Request{Operation: uiauto.OpSwipe, StartX: ptr(0.5), StartY: ptr(0.5)}, "must be supplied together"},
		{"swipe length", uiauto.Request{Operation: uiauto.OpSwipe, Length: 0.95}, "length must be a number between 0.05 and 0.9"},
		{"pinch scale", uiauto.Request{Operation: uiauto.OpPinch, Scale: 4.5}, "scale must be a number between 0.1 and 4"},
		{"pinch one centre coordinate", uiauto.Request{Operation: uiauto.OpPinch, Scale: 2, CenterX: ptr(0.5)}, "must be supplied together"},
		{"type without a value", uiauto.Request{Operation: uiauto.OpType, Selector: sel}, "requires --value"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.req.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Validate = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
