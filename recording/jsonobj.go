package recording

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// member is one name and value of a JSON object, kept in the order the app wrote it so
// that a stored object reads as it was sent.
type member struct {
	name  string
	value jsontext.Value
}

// object is a JSON object's members in order.
type object []member

var errNotObject = errors.New("not a JSON object")

// parseObject reads data, which must be one JSON object, checked by the wire package's
// strict scan first: valid UTF-8, no duplicate names, nesting at most wire.MaxDepth,
// at most wire.DefaultMaxMessageBytes.
func parseObject(data []byte) (object, error) {
	var v jsontext.Value
	if err := wire.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	return members(v)
}

// members splits a checked JSON value into its members; it fails unless v is an object.
// Each member's value is a slice of v (the recorder owns the messages it parses, and
// nothing changes them), read with a pooled decoder that parses v in place: the writer
// parses thousands of messages a second, and a decoder and a copy of each value per
// object were most of a recording host's garbage.
func members(v jsontext.Value) (object, error) {
	if v.Kind() != '{' {
		return nil, errNotObject
	}
	d := decoders.Get().(*inPlaceDecoder)
	defer d.put()
	d.buf = *bytes.NewBuffer(v)
	d.dec.Reset(&d.buf, jsontext.AllowDuplicateNames(true))
	if _, err := d.dec.ReadToken(); err != nil {
		return nil, err
	}
	var obj object
	for d.dec.PeekKind() != '}' {
		tok, err := d.dec.ReadToken()
		if err != nil {
			return nil, err
		}
		name := tok.String() // before the next read voids the token
		val, err := d.dec.ReadValue()
		if err != nil {
			return nil, err
		}
		end := int(d.dec.InputOffset())
		obj = append(obj, member{name, v[end-len(val) : end : end]})
	}
	return obj, nil
}

// inPlaceDecoder is a decoder that reads a bytes.Buffer over a value: jsontext then
// parses the value's own bytes rather than copying them.
type inPlaceDecoder struct {
	buf bytes.Buffer
	dec jsontext.Decoder
}

var decoders = sync.Pool{New: func() any { return new(inPlaceDecoder) }}

// put returns d to the pool without a reference to the value it read.
func (d *inPlaceDecoder) put() {
	d.buf = bytes.Buffer{}
	d.dec.Reset(&d.buf)
	decoders.Put(d)
}

// get returns the value of name, or nil.
func (o object) get(name string) jsontext.Value {
	for _, m := range o {
		if m.name == name {
			return m.value
		}
	}
	return nil
}

// set replaces the value of name, or appends it.
func (o object) set(name string, v jsontext.Value) object {
	for i := range o {
		if o[i].name == name {
			o[i].value = v
			return o
		}
	}
	return append(o, member{name, v})
}

// without returns the members other than name (a new slice).
func (o object) without(name string) object {
	out := make(object, 0, len(o))
	for _, m := range o {
		if m.name != name {
			out = append(out, m)
		}
	}
	return out
}

// encode writes the object back as compact JSON.
func (o object) encode() []byte {
	b := make([]byte, 0, 64)
	b = append(b, '{')
	for i, m := range o {
		if i > 0 {
			b = append(b, ',')
		}
		b, _ = jsontext.AppendQuote(b, m.name)
		b = append(b, ':')
		b = append(b, compact(m.value)...)
	}
	return append(b, '}')
}

// compact returns v without insignificant white space.
func compact(v jsontext.Value) []byte {
	if bytes.ContainsAny(v, " \t\r\n") {
		c := v.Clone()
		if c.Compact() == nil {
			return c
		}
	}
	return v
}

// str returns a JSON string's value.
func str(v jsontext.Value) (string, bool) {
	if v.Kind() != '"' {
		return "", false
	}
	b, err := jsontext.AppendUnquote(nil, bytes.Trim(v, " \t\r\n"))
	if err != nil {
		return "", false
	}
	return string(b), true
}

// num returns a JSON number's value, or that of a string holding a number (some SDKs
// quote numbers); NaN and infinities are refused.
func num(v jsontext.Value) (float64, bool) {
	var s string
	switch v.Kind() {
	case '0':
		s = string(v)
	case '"':
		var ok bool
		if s, ok = str(v); !ok {
			return 0, false
		}
		s = strings.TrimSpace(s)
	default:
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// integer returns a JSON number (or numeric string) that is a whole number within
// [lo, hi].
func integer(v jsontext.Value, lo, hi int64) (int64, bool) {
	f, ok := num(v)
	if !ok || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		return 0, false
	}
	return int64(f), true
}

// timeLayouts are the date-time forms the SDKs write: RFC 3339 with Z or an offset, and
// .NET's DateTime without a zone (taken as UTC).
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.9999999", "2006-01-02 15:04:05.9999999Z07:00", "2006-01-02 15:04:05.9999999"}

// parseTime reads a date-time string, or a number of Unix milliseconds.
func parseTime(v jsontext.Value) (time.Time, bool) {
	if v.Kind() == '0' {
		ms, ok := integer(v, 0, 1<<53)
		if !ok {
			return time.Time{}, false
		}
		return time.UnixMilli(ms).UTC(), true
	}
	s, ok := str(v)
	if !ok {
		return time.Time{}, false
	}
	return parseTimeString(s)
}

func parseTimeString(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 64 {
		return time.Time{}, false
	}
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// quoted returns s as a JSON string.
func quoted(s string) jsontext.Value {
	b, _ := jsontext.AppendQuote(nil, s)
	return b
}

// jsonNumber returns f as a JSON number.
func jsonNumber(f float64) jsontext.Value {
	return strconv.AppendFloat(nil, f, 'g', -1, 64)
}

func quote(s string) string { return strconv.Quote(s) }

func lower(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// unmarshalChecked decodes a value that already passed the strict scan (a part of a
// message parseObject read) into out, typically a []jsontext.Value.
func unmarshalChecked(v jsontext.Value, out any) error { return json.Unmarshal(v, out) }
