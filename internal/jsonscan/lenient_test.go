package jsonscan

import (
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
)

var topNames = []string{"type", "id", "action"}

func TestTopStrings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, data string
		want       [3]string
	}{
		{"all", `{"type":"CONTROL_REQ","id":"r1","action":"ping","x":{"y":[1,{"type":"no"}]}}`, [3]string{"CONTROL_REQ", "r1", "ping"}},
		{"first occurrence counts", `{"id":"first","id":"second","type":"t"}`, [3]string{"t", "first", ""}},
		{"a non-string first occurrence is empty", `{"id":5,"id":"later","type":"t"}`, [3]string{"t", "", ""}},
		{"stops at a syntax error", `{"type":"t","id":"a",`, [3]string{"t", "a", ""}},
		{"truncated value", `{"type":"t","id":"a`, [3]string{"t", "", ""}},
		{"escapes", `{"id":"\u0061b\n"}`, [3]string{"", "ab\n", ""}},
		{"invalid UTF-8 is unusable", `{"type":"t","id":"a` + "\xff" + `"}`, [3]string{"t", "", ""}},
		{"not an object", `[{"type":"t"}]`, [3]string{}},
		{"empty", ``, [3]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got [3]string
			TopStrings([]byte(tc.data), topNames, got[:], nil)
			if got != tc.want {
				t.Errorf("%s: %q, want %q", tc.data, got, tc.want)
			}
		})
	}
	t.Run("stop", func(t *testing.T) {
		t.Parallel()
		var got [3]string
		var read []int
		TopStrings([]byte(`{"id":"a","type":"t","action":"x"}`), topNames, got[:], func(i int) bool {
			read = append(read, i)
			return i == 0
		})
		if got != [3]string{"t", "a", ""} || len(read) != 2 {
			t.Errorf("read %v: %q", read, got)
		}
	})
}

// FuzzTopStrings: any input gives values (never a panic) of valid UTF-8, and on a message
// the strict decoder accepts they are what it reads.
func FuzzTopStrings(f *testing.F) {
	for _, s := range []string{`{"type":"CONTROL_REQ","id":"r1","action":"ping"}`, `{"id":1,"id":"x"}`, `{"type":"\ud800"}`, `{"a":[{"b":`, `"x"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got [3]string
		TopStrings(data, topNames, got[:], nil)
		for _, v := range got {
			if !utf8.ValidString(v) {
				t.Fatalf("%q: invalid UTF-8 value %q", data, v)
			}
		}
		var strict struct {
			Type   any `json:"type"`
			ID     any `json:"id"`
			Action any `json:"action"`
		}
		if json.Unmarshal(data, &strict) != nil {
			return
		}
		for i, v := range []any{strict.Type, strict.ID, strict.Action} {
			s, _ := v.(string)
			if got[i] != s {
				t.Fatalf("%q: %s = %q, the strict decoder reads %q", data, topNames[i], got[i], s)
			}
		}
	})
}
