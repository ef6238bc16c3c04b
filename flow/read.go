package flow

import (
	"bytes"
	"errors"
	"io"
	"math/big"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/tailscale/hujson"
	"go.yaml.in/yaml/v3"
)

// Bounds of a flow file. A flow is written by a person or by 'ansight test record'; these
// leave room for either and refuse what only a mistake or an attack would make.
const (
	// MaxFileSize bounds a flow file (1 MiB): a larger one is refused before it is read.
	MaxFileSize = 1 << 20
	// MaxDepth bounds nesting (objects and arrays inside each other).
	MaxDepth = 64
	// MaxValues bounds the values in one file.
	MaxValues = 100_000
)

// limits bound one read.
type limits struct{ depth, values int }

var (
	fileLimits = limits{depth: MaxDepth, values: MaxValues}
	// resultLimits bound a tool result read for expectations: the host's own bounds
	// (docs/protocol/limits.md) hold it already; these only keep a reader within them.
	resultLimits = limits{depth: 256, values: 1 << 22}
)

// reader counts what one read has made.
type reader struct {
	file   string
	lim    limits
	values int
	at     *cursor // JSON
}

func (r *reader) count(pos Pos) error {
	r.values++
	if r.values > r.lim.values {
		return errorf(pos, "more than %d values in one file", r.lim.values)
	}
	return nil
}

// isJSONText reports whether a file is JSON rather than YAML: its name ends in .json, or it
// begins (after white space) with '{' or a JSON comment. A YAML flow is a mapping in block
// style; flow style at the top level is read as JSON.
func isJSONText(file string, data []byte) bool {
	if strings.EqualFold(filepath.Ext(file), ".json") {
		return true
	}
	data = bytes.TrimLeft(data, " \t\r\n")
	return bytes.HasPrefix(data, []byte("{")) || bytes.HasPrefix(data, []byte("//")) || bytes.HasPrefix(data, []byte("/*"))
}

// readFile reads a flow file's tree: JSON (with comments and trailing commas, as the CLI's
// JSON inputs) when isJSONText, YAML otherwise.
func readFile(file string, data []byte) (*value, error) {
	if len(data) > MaxFileSize {
		return nil, errorf(Pos{File: file}, "the file is %d bytes; a flow is at most %d (1 MiB)", len(data), MaxFileSize)
	}
	if !utf8.Valid(data) {
		return nil, errorf(Pos{File: file, Line: 1 + bytes.Count(data[:invalidUTF8At(data)], []byte("\n"))}, "the file is not valid UTF-8")
	}
	if isJSONText(file, data) {
		std, err := hujson.Standardize(bytes.Clone(data))
		if err != nil {
			return nil, hujsonError(file, err)
		}
		return readJSON(file, std, fileLimits)
	}
	return readYAML(file, data)
}

func invalidUTF8At(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(data)
}

// hujsonAt finds the "line L, column C: " hujson begins its errors with.
var hujsonAt = regexp.MustCompile(`line (\d+), column (\d+): `)

func hujsonError(file string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "hujson: ")
	pos := Pos{File: file}
	if m := hujsonAt.FindStringSubmatchIndex(msg); m != nil {
		pos.Line, _ = strconv.Atoi(msg[m[2]:m[3]])
		pos.Col, _ = strconv.Atoi(msg[m[4]:m[5]])
		msg = msg[:m[0]] + msg[m[1]:]
	}
	return errorf(pos, "not valid JSON: %s", msg)
}

// offsetPos converts a byte offset to a line and column.
func offsetPos(file string, data []byte, off int) Pos {
	off = min(max(off, 0), len(data))
	before := data[:off]
	line := 1 + bytes.Count(before, []byte("\n"))
	start := bytes.LastIndexByte(before, '\n') + 1
	return Pos{File: file, Line: line, Col: 1 + utf8.RuneCount(before[start:])}
}

// cursor converts increasing byte offsets to positions in one pass over the data.
type cursor struct {
	data           []byte
	off, line, col int
}

func (c *cursor) pos(file string, off int) Pos {
	off = min(max(off, 0), len(c.data))
	if off < c.off {
		p := offsetPos(file, c.data, off)
		return p
	}
	for _, b := range c.data[c.off:off] {
		switch {
		case b == '\n':
			c.line, c.col = c.line+1, 1
		case isRuneStart(b):
			c.col++
		}
	}
	c.off = off
	return Pos{File: file, Line: c.line, Col: c.col}
}

// readJSON reads one JSON document strictly (duplicate names and invalid UTF-8 refused),
// with every value's position.
func readJSON(file string, data []byte, lim limits) (*value, error) {
	r := &reader{file: file, lim: lim, at: &cursor{data: data, line: 1, col: 1}}
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	v, err := r.jsonValue(dec, data, 0)
	if err == nil {
		if _, err = dec.ReadToken(); err == nil {
			err = errorf(offsetPos(file, data, tokenStart(data, dec.InputOffset())), "more than one JSON value in the file")
		} else if errors.Is(err, io.EOF) {
			err = nil
		}
	}
	if err != nil {
		return nil, r.jsonError(data, err)
	}
	return v, nil
}

// tokenStart skips the white space and separators before the token that begins at or after
// off (jsontext reports where the previous one ended).
func tokenStart(data []byte, off int64) int {
	i := int(off)
	for i < len(data) && strings.IndexByte(" \t\r\n,:", data[i]) >= 0 {
		i++
	}
	return i
}

func (r *reader) jsonError(data []byte, err error) error {
	var fe *Error
	if errors.As(err, &fe) {
		return fe
	}
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		msg := se.Err.Error()
		if errors.Is(se.Err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			msg = "the file ends in the middle of a value"
		}
		if se.JSONPointer != "" {
			msg += " (at " + string(se.JSONPointer) + ")"
		}
		return errorf(offsetPos(r.file, data, int(se.ByteOffset)), "not valid JSON: %s", strings.TrimPrefix(msg, "jsontext: "))
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return errorf(offsetPos(r.file, data, len(data)), "not valid JSON: the file ends in the middle of a value")
	}
	return errorf(Pos{File: r.file}, "not valid JSON: %v", err)
}

func (r *reader) jsonValue(dec *jsontext.Decoder, data []byte, depth int) (*value, error) {
	pos := r.at.pos(r.file, tokenStart(data, dec.InputOffset()))
	if err := r.count(pos); err != nil {
		return nil, err
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	v := &value{pos: pos}
	switch tok.Kind() {
	case 'n':
		v.kind = kindNull
	case 't', 'f':
		v.kind, v.text = kindBool, strconv.FormatBool(tok.Bool())
	case '"':
		v.kind, v.text = kindString, tok.String()
	case '0':
		v.kind, v.text = kindNumber, tok.String()
	case '[', '{':
		if depth >= r.lim.depth {
			return nil, errorf(pos, "nested more than %d deep", r.lim.depth)
		}
		obj := tok.Kind() == '{'
		v.kind = kindArray
		if obj {
			v.kind = kindObject
		}
		for dec.PeekKind() != ']' && dec.PeekKind() != '}' {
			if dec.PeekKind() == 0 {
				_, err := dec.ReadToken()
				return nil, err
			}
			if obj {
				name, err := r.jsonValue(dec, data, depth+1)
				if err != nil {
					return nil, err
				}
				v.names = append(v.names, name)
			}
			e, err := r.jsonValue(dec, data, depth+1)
			if err != nil {
				return nil, err
			}
			v.elems = append(v.elems, e)
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// readYAML reads one YAML document into the same tree. What YAML has beyond JSON's values
// is refused: anchors and aliases (a few bytes could expand without bound; 'include' shares
// steps), merge keys, tags other than the core schema's, non-string keys, and infinities.
func readYAML(file string, data []byte) (*value, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errorf(Pos{File: file, Line: 1}, "the file is empty")
		}
		return nil, yamlError(file, err)
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		line := more.Line
		if err != nil {
			return nil, yamlError(file, err)
		}
		return nil, errorf(Pos{File: file, Line: line}, "more than one YAML document in the file (a flow is one)")
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, errorf(Pos{File: file, Line: 1}, "the file holds no YAML document")
	}
	r := &reader{file: file, lim: fileLimits}
	return r.yamlValue(doc.Content[0], 0)
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

func yamlError(file string, err error) error {
	msg := err.Error()
	pos := Pos{File: file}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		pos.Line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	return errorf(pos, "not valid YAML: %s", msg)
}

func (r *reader) yamlValue(n *yaml.Node, depth int) (*value, error) {
	pos := Pos{File: r.file, Line: n.Line, Col: n.Column}
	if err := r.count(pos); err != nil {
		return nil, err
	}
	if n.Anchor != "" || n.Kind == yaml.AliasNode {
		return nil, errorf(pos, "YAML anchors and aliases are not supported in flows (use include: to share steps)")
	}
	v := &value{pos: pos}
	switch n.Kind {
	case yaml.ScalarNode:
		return v, r.yamlScalar(n, v)
	case yaml.SequenceNode, yaml.MappingNode:
		if n.Tag != "" && n.Tag != "!!seq" && n.Tag != "!!map" && n.ShortTag() != "!!seq" && n.ShortTag() != "!!map" {
			return nil, errorf(pos, "the YAML tag %s is not supported in flows", n.Tag)
		}
		if depth >= r.lim.depth {
			return nil, errorf(pos, "nested more than %d deep", r.lim.depth)
		}
		if n.Kind == yaml.SequenceNode {
			v.kind = kindArray
			for _, c := range n.Content {
				e, err := r.yamlValue(c, depth+1)
				if err != nil {
					return nil, err
				}
				v.elems = append(v.elems, e)
			}
			return v, nil
		}
		v.kind = kindObject
		seen := make(map[string]Pos, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, c := n.Content[i], n.Content[i+1]
			kpos := Pos{File: r.file, Line: k.Line, Col: k.Column}
			if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!merge" {
				return nil, errorf(kpos, "a key must be a plain string (YAML merge keys and complex keys are not supported)")
			}
			if k.ShortTag() != "!!str" && k.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0 {
				switch k.ShortTag() {
				case "!!int", "!!float", "!!bool", "!!null":
					// JSON names are strings: a key written 1 or true is that text.
				default:
					return nil, errorf(kpos, "the key %q is not a string", k.Value)
				}
			}
			if first, dup := seen[k.Value]; dup {
				return nil, errorf(kpos, "the key %q is given twice (first at line %d)", k.Value, first.Line)
			}
			seen[k.Value] = kpos
			if err := r.count(kpos); err != nil {
				return nil, err
			}
			e, err := r.yamlValue(c, depth+1)
			if err != nil {
				return nil, err
			}
			v.names = append(v.names, &value{kind: kindString, text: k.Value, pos: kpos})
			v.elems = append(v.elems, e)
		}
		return v, nil
	}
	return nil, errorf(pos, "unexpected YAML node")
}

// yamlScalar resolves a scalar by the YAML core schema into a JSON value.
func (r *reader) yamlScalar(n *yaml.Node, v *value) error {
	switch n.ShortTag() {
	case "!!null":
		v.kind = kindNull
	case "!!bool":
		b, err := strconv.ParseBool(strings.ToLower(n.Value))
		if err != nil {
			return errorf(v.pos, "%q is not a boolean", n.Value)
		}
		v.kind, v.text = kindBool, strconv.FormatBool(b)
	case "!!int":
		v.kind = kindNumber
		if isJSONNumber(n.Value) {
			v.text = n.Value
			return nil
		}
		i, ok := new(big.Int).SetString(strings.ReplaceAll(n.Value, "_", ""), 0)
		if !ok {
			return errorf(v.pos, "%q is not a number JSON can hold", n.Value)
		}
		v.text = i.String()
	case "!!float":
		v.kind = kindNumber
		if isJSONNumber(n.Value) {
			v.text = n.Value
			return nil
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		if err != nil || f != f || f > 1e308 || f < -1e308 {
			return errorf(v.pos, "%q is not a number JSON can hold (no infinities or NaN)", n.Value)
		}
		v.text = strconv.FormatFloat(f, 'g', -1, 64)
	case "!!str", "!!timestamp":
		// A date is kept as written: JSON has no dates, and a tool reads them as text.
		v.kind, v.text = kindString, n.Value
	default:
		return errorf(v.pos, "the YAML tag %s is not supported in flows", n.Tag)
	}
	return nil
}
