package hostapi

import (
	"strings"
	"testing"

	"github.com/ansight-go/ansight/recording"
)

// An imported archive's label is checked by recording.CheckLabel (package recording does
// not import this one): it must take and refuse exactly what CheckLabel does, so that no
// label enters by an import that a rename would refuse.
func TestCheckLabelAgreesWithRecording(t *testing.T) {
	t.Parallel()
	if recording.MaxLabel != MaxLabel {
		t.Fatalf("recording.MaxLabel %d, MaxLabel %d", recording.MaxLabel, MaxLabel)
	}
	for _, in := range []string{"", "  a b  ", "Pixel 8 — checkout", strings.Repeat("é", MaxLabel/2), strings.Repeat("x", MaxLabel+1),
		" " + strings.Repeat("x", MaxLabel) + " ", "a\tb", "a\x1b[31mb", "\xff", "bug \u202egnp.exe", "a\u200bb", "a\u2066b\u2069",
		"tag\U000E0041", "line\u2028two", "para\u2029two", "soft\u00adhyphen", "a\u0085b", "👩\u200d💻"} {
		want, werr := CheckLabel(in)
		got, gerr := recording.CheckLabel(in)
		if got != want || (werr == nil) != (gerr == nil) {
			t.Errorf("%q: recording.CheckLabel = %q, %v; CheckLabel = %q, %v", in, got, gerr, want, werr)
		}
	}
}
