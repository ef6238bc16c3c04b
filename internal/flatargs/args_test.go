package flatargs

import (
	"errors"
	"testing"
)

func TestArgs(t *testing.T) {
	t.Parallel()
	a, err := New(map[string]string{"MaxBytes": " 42 ", "neg": "-7", "big": "4294967296", "flag": "TRUE", "one": "1", "zero": "0",
		"blank": "  ", "word": "ten", "yes": "yes", "float": "1.5"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		got     int
		wantErr bool
		want    int
	}{
		{"maxbytes", 0, false, 42},
		{"neg", 0, false, 1},    // clamped up
		{"absent", 0, false, 9}, // default
		{"blank", 0, false, 9},
		{"big", 0, true, 0}, // beyond 32 bits: refused, as the official int.TryParse
		{"word", 0, true, 0},
		{"float", 0, true, 0},
	} {
		got, err := a.Int(tc.name, 9, 1, 100)
		var ae *Error
		if (err != nil) != tc.wantErr || (err != nil && !errors.As(err, &ae)) || (err == nil && got != tc.want) {
			t.Errorf("Int(%s) = %d, %v; want %d, error %v", tc.name, got, err, tc.want, tc.wantErr)
		}
	}
	if n, err := a.Int64("big", 0, 0, 1<<62); err != nil || n != 4294967296 {
		t.Errorf("Int64(big) = %d, %v", n, err)
	}
	for name, want := range map[string]bool{"flag": true, "one": true, "zero": false, "absent": true} {
		if got, err := a.Bool(name, true); err != nil || got != want {
			t.Errorf("Bool(%s) = %v, %v", name, got, err)
		}
	}
	if _, err := a.Bool("yes", false); err == nil || err.Error() != "The argument 'yes' must be a boolean." {
		t.Errorf("Bool(yes) = %v", err)
	}
	if _, err := a.Required("blank"); err == nil || err.Error() != "The argument 'blank' is required." {
		t.Errorf("Required(blank) = %v", err)
	}
	if _, err := New(map[string]string{"path": "a", "PATH": "b"}); err == nil {
		t.Error("two names that differ by case were accepted")
	}
}
