package uiauto_test

import (
	"context"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/uiauto"
	"github.com/ansight-go/ansight/wire/uitree"
)

// BenchmarkResolveTap measures what a tap adds on the host to the two calls it makes:
// reading the tree, resolving the selector, writing the action's arguments. The tree is
// the form screen's (17 nodes) as the SDK writes it; the calls answer at once.
func BenchmarkResolveTap(b *testing.B) {
	tree, _ := caller(b, &form{name: "x"})(context.Background(), uiauto.VisualTreeToolID, jsontext.Value(`{}`))
	done := jsontext.Value(`{"done":true}`)
	call := func(_ context.Context, toolID string, _ jsontext.Value) (jsontext.Value, error) {
		if toolID == uiauto.VisualTreeToolID {
			return tree, nil
		}
		return done, nil
	}
	req := uiauto.Request{Operation: uiauto.OpTap, Selector: uitree.Selector{AutomationID: "saveButton"}}
	b.ReportAllocs()
	for b.Loop() {
		if out, err := uiauto.Run(context.Background(), call, req); err != nil || !out.Succeeded {
			b.Fatal(out, err)
		}
	}
}
