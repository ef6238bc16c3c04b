package wire_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

func TestCodeKind(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		code wire.Code
		want wire.Kind
	}{
		{wire.CodePolicyNotGranted, wire.KindDenied},
		{wire.CodeExecutionDenied, wire.KindDenied},
		{wire.CodeCriticalNotAllowed, wire.KindDenied},
		{wire.CodeNotFound, wire.KindUnavailable},
		{wire.CodeSchemaTooComplex, wire.KindUnavailable},
		{wire.CodeSessionClosed, wire.KindUnavailable},
		{wire.CodeHostUnavailable, wire.KindUnavailable},
		{wire.CodeArgumentsSchemaInvalid, wire.KindInvalid},
		{wire.CodeSessionAmbiguous, wire.KindInvalid},
		{wire.CodeExecutionFailed, wire.KindFailed},
		{wire.CodeTimeout, wire.KindFailed},
		{wire.CodeResourceNotFound, wire.KindFailed},
		{"note_not_found", wire.KindFailed}, // a tool's own code
	} {
		t.Run(string(tc.code), func(t *testing.T) {
			t.Parallel()
			if got := tc.code.Kind(); got != tc.want {
				t.Errorf("%s.Kind() = %s, want %s", tc.code, got, tc.want)
			}
		})
	}
}

// An app's tool.error is classified by its code, and a tool's own code is "unavailable"
// when its details are the runtime object of an unavailable tool.
func TestErrorKind(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  wire.Error
		want wire.Kind
	}{
		{"guard", wire.Error{Code: wire.CodeExecutionDenied}, wire.KindDenied},
		{"unknown tool", wire.Error{Code: wire.CodeNotFound}, wire.KindUnavailable},
		{"runtime details", wire.Error{Code: "map_not_loaded", Details: jsontext.Value(`{"available":false,"reason":"load a map"}`)}, wire.KindUnavailable},
		{"available details", wire.Error{Code: "map_not_loaded", Details: jsontext.Value(`{"available":true}`)}, wire.KindFailed},
		{"schema", wire.Error{Code: wire.CodeArgumentsSchemaInvalid}, wire.KindInvalid},
		{"tool's own details", wire.Error{Code: "note_not_found", Details: jsontext.Value(`{"id":"n9"}`)}, wire.KindFailed},
		{"plain failure", wire.Error{Code: wire.CodeExecutionFailed}, wire.KindFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.err.Kind(); got != tc.want {
				t.Errorf("%s: %s, want %s", tc.err.Code, got, tc.want)
			}
		})
	}
}

// Kinds are written by name in JSON (the host API's and the bridge's "kind" members).
func TestKindText(t *testing.T) {
	t.Parallel()
	for k, name := range map[wire.Kind]string{0: "", wire.KindFailed: "failed", wire.KindDenied: "denied",
		wire.KindUnavailable: "unavailable", wire.KindInvalid: "invalid"} {
		b, err := wire.Marshal(struct {
			Kind wire.Kind `json:"kind"`
		}{k})
		if want := `{"kind":"` + name + `"}`; err != nil || string(b) != want {
			t.Errorf("Marshal(%d) = %s, %v; want %s", k, b, err, want)
		}
		var back struct {
			Kind wire.Kind `json:"kind"`
		}
		if err := wire.Unmarshal(b, &back); err != nil || back.Kind != k || k.String() != name {
			t.Errorf("Unmarshal(%s) = %d, %v (String %q)", b, back.Kind, err, k.String())
		}
	}
	var k wire.Kind
	if err := k.UnmarshalText([]byte("forbidden")); err == nil {
		t.Error(`UnmarshalText("forbidden") accepted an unknown kind`)
	}
}

// apiError stands for another layer's error type (hostapi.APIError): CodeOf reads its code.
type apiError struct{ code wire.Code }

func (e *apiError) Error() string        { return "api: " + string(e.code) }
func (e *apiError) ErrorCode() wire.Code { return e.code }

func TestCodeOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want wire.Code
	}{
		{"nil", nil, ""},
		{"plain", errors.New("boom"), ""},
		{"wire error", wire.NewError(wire.CodeNotFound, "no %s", "x"), wire.CodeNotFound},
		{"wrapped", fmt.Errorf("call: %w", &wire.Error{Code: "note_not_found"}), "note_not_found"},
		{"another layer's", fmt.Errorf("host: %w", &apiError{wire.CodeSessionClosed}), wire.CodeSessionClosed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := wire.CodeOf(tc.err); got != tc.want {
				t.Errorf("CodeOf = %q, want %q", got, tc.want)
			}
		})
	}
}
