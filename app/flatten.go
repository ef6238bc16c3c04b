package app

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// flatten turns an arguments object into the string map a flattened-string tool receives
// (docs/protocol/catalog.md#argument-encoding): strings as they are, numbers and booleans as their JSON text, objects and
// arrays as compact JSON, null members dropped. obj is a valid JSON object (checked by the
// strict decoder before).
func flatten(obj jsontext.Value) (map[string]string, error) {
	var members map[string]jsontext.Value
	if err := wire.Unmarshal(obj, &members); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(members))
	for name, v := range members {
		switch v.Kind() {
		case 'n':
			continue
		case '"':
			var s string
			if err := wire.Unmarshal(v, &s); err != nil {
				return nil, err
			}
			out[name] = s
		default:
			v = append(jsontext.Value(nil), v...)
			if err := v.Compact(); err != nil {
				return nil, err
			}
			out[name] = string(v)
		}
	}
	return out, nil
}
