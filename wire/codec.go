package wire

import (
	"fmt"
	"reflect"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// marshalOptions makes Marshal's output reproducible: map keys are sorted.
var marshalOptions = json.Deterministic(true)

// Unmarshal decodes the JSON value data into v (a non-nil pointer) strictly:
//   - names match Go fields case-sensitively;
//   - duplicate names are refused;
//   - in an object decoded into a struct, a name that equals a field name only under case
//     folding ("ToolId" for "toolId") is refused rather than ignored, and so are two names
//     equal under case folding;
//   - nesting deeper than [MaxDepth] and inputs above [DefaultMaxMessageBytes] are refused;
//   - invalid UTF-8 and anything after the value are refused.
//
// Unknown names are otherwise accepted and ignored: other SDKs add fields. Names of Go maps
// and of free-form values (jsontext.Value, any) are data and may differ only by case.
// Every failure is a [*DecodeError].
func Unmarshal(data []byte, v any) error {
	if len(data) > DefaultMaxMessageBytes {
		return tooLarge("input", len(data))
	}
	return decodeStrict(data, v)
}

// UnmarshalCall is Unmarshal of a tool.call payload (or a batch item) into a Call it
// returns by value. The call then stays on the caller's stack in its common form, which
// Unmarshal's interface argument does not allow: a small call costs one allocation less.
func UnmarshalCall(data []byte) (Call, error) {
	if len(data) > DefaultMaxMessageBytes {
		return Call{}, tooLarge("input", len(data))
	}
	var c Call
	err := fastInto(data, &c, callShape, (*scanner).readCall, func(s *scanner) *Call { return &s.call })
	if err != errSlowPath {
		return c, err
	}
	return unmarshalCallSlow(data)
}

// unmarshalCallSlow is UnmarshalCall's generic path, whose Call is on the heap.
func unmarshalCallSlow(data []byte) (Call, error) {
	c := new(Call)
	err := decodeStrict(data, c)
	return *c, err
}

// decodeStrict is Unmarshal without the input size limit.
func decodeStrict(data []byte, v any) error {
	if err := fastDecode(data, v); err != errSlowPath {
		return err
	}
	sh, err := shapeFor(v)
	if err != nil {
		return err
	}
	if err := scanStrict(data, sh); err != nil {
		return err
	}
	return decodeChecked(data, v)
}

// shapeFor returns the shape of the value v points to, refusing anything but a non-nil
// pointer.
func shapeFor(v any) (*shape, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return nil, &DecodeError{Offset: -1, Msg: fmt.Sprintf("Unmarshal needs a non-nil pointer, got %T", v)}
	}
	return shapeOf(rv.Type().Elem()), nil
}

// checkedOptions decode input that passed the strict scan, which has refused duplicate
// names and invalid UTF-8 in these very bytes: the decoder need not track names or check
// UTF-8 a second time.
var checkedOptions = json.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

// decodeChecked decodes data, which passed the strict scan, into v.
func decodeChecked(data []byte, v any) error {
	return asDecodeError(json.Unmarshal(data, v, checkedOptions))
}

// Marshal encodes v as compact JSON with map keys sorted, so equal values always give
// equal bytes.
func Marshal(v any) ([]byte, error) {
	switch v := v.(type) {
	case Call:
		return AppendCall(nil, &v)
	case *Call:
		if v != nil {
			return AppendCall(nil, v)
		}
	}
	return json.Marshal(v, marshalOptions)
}
