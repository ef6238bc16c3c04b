package hostapi

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/ansight-go/ansight/wire"
)

// renameBackend keeps the label a rename asked for.
type renameBackend struct {
	fakeBackend
	id, label string
}

func (b *renameBackend) Rename(_ context.Context, id string, req RenameRequest) (*Renaming, error) {
	label, err := CheckLabel(req.Label)
	if err != nil {
		return nil, err
	}
	b.id, b.label = id, label
	return &Renaming{Schema: SchemaRename, SessionID: id, Label: label}, nil
}

// Rename goes over the socket through the one route table: the session id as one path
// segment, the label in the body, the answer back; a refused label comes back as the
// backend's *APIError, and a body with an unknown key is refused before the backend.
func TestRenameOverTheSocket(t *testing.T) { // not parallel: Listen sets the process umask for a moment
	b := &renameBackend{}
	c := serve(t, b)
	ctx := t.Context()
	got, err := c.Rename(ctx, "app/001", RenameRequest{Label: "  checkout on the Pixel "})
	if err != nil {
		t.Fatal(err)
	}
	if *got != (Renaming{Schema: SchemaRename, SessionID: "app/001", Label: "checkout on the Pixel"}) || b.id != "app/001" {
		t.Errorf("Rename = %+v (backend saw %q, %q)", got, b.id, b.label)
	}
	_, err = c.Rename(ctx, "app-001", RenameRequest{Label: "two\nlines"})
	if e, ok := err.(*APIError); !ok || e.Status != http.StatusBadRequest || e.Code != wire.CodeBadRequest {
		t.Errorf("a label with a newline: %v, want 400 %s", err, wire.CodeBadRequest)
	}
	resp, err := c.http.Post("http://ansight/v1/sessions/app-001/rename", "application/json", strings.NewReader(`{"label":"x","Label":"y"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || b.label == "x" || b.label == "y" {
		t.Errorf("a body with a case-variant key: %d (backend label %q), want 400 before the backend", resp.StatusCode, b.label)
	}
}

func TestCheckLabel(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": "", "  a b  ": "a b", "Pixel 8 — checkout": "Pixel 8 — checkout", strings.Repeat("é", MaxLabel/2): strings.Repeat("é", MaxLabel/2)} {
		if got, err := CheckLabel(in); err != nil || got != want {
			t.Errorf("CheckLabel(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{strings.Repeat("x", MaxLabel+1), "a\tb", "a\x1b[31mb", "\xff",
		"bug \u202egnp.exe", "a\u200bb", "a\u2066b\u2069", "tag\U000E0041", "line\u2028two"} {
		if _, err := CheckLabel(bad); wire.CodeOf(err) != wire.CodeBadRequest {
			t.Errorf("CheckLabel(%q) = %v, want %s", bad, err, wire.CodeBadRequest)
		}
	}
}
