package control

import (
	"reflect"
	"slices"
	"testing"

	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/recording"
)

// The API names what the recorder and the host name: the same record kinds, in the same
// order, and every host event kind.
func TestVocabulariesAgree(t *testing.T) {
	t.Parallel()
	if got := kindsOf(hostapi.RecordKinds); !slices.Equal(got, recording.Kinds) {
		t.Errorf("hostapi.RecordKinds = %v, recording.Kinds = %v", got, recording.Kinds)
	}
	api := []hostapi.EventKind{hostapi.EventConnected, hostapi.EventUpdated, hostapi.EventDisconnected, hostapi.EventRemoved,
		hostapi.EventCrashReport, hostapi.EventAnnotation}
	for i, k := range []host.EventKind{host.EventConnected, host.EventUpdated, host.EventDisconnected, host.EventRemoved,
		host.EventCrashReport, host.EventAnnotation} {
		if got := eventOf(host.Event{Kind: k}).Kind; got != api[i] {
			t.Errorf("host event %d is %q in the API, want %q", k, got, api[i])
		}
	}
}

// The API's types that mirror the host's and the recorder's have the same exported fields
// (in the same order), so that a field added on one side is not silently left out by the
// copies in convert.go.
func TestMirroredTypesAgree(t *testing.T) {
	t.Parallel()
	for _, pair := range []struct{ ours, theirs any }{
		{hostapi.CrashReport{}, host.CrashReport{}},
		{hostapi.Record{}, recording.Record{}},
	} {
		a, b := exportedFields(reflect.TypeOf(pair.ours)), exportedFields(reflect.TypeOf(pair.theirs))
		if !slices.Equal(a, b) {
			t.Errorf("%T has fields %v, %T has %v", pair.ours, a, pair.theirs, b)
		}
	}
}

func exportedFields(t reflect.Type) []string {
	var names []string
	for f := range t.Fields() {
		if f.IsExported() {
			names = append(names, f.Name)
		}
	}
	return names
}
