package control

import (
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
