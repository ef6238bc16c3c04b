package uitree

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/go-json-experiment/json/jsontext"
)

// Error is a payload Parse cannot read as a tree, with the JSON Pointer of the offending
// value.
type Error struct {
	Pointer string
	Msg     string
	Err     error // the JSON syntax error, when that is the cause
}

func (e *Error) Error() string {
	if e.Pointer == "" {
		return "uitree: " + e.Msg
	}
	return "uitree: " + e.Pointer + ": " + e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// errNotObject is the payload that is not an object (the gate's first rule).
var errNotObject = &Error{Msg: "the payload is not a JSON object"}

// Types the official host and SDKs treat as their own overlay surfaces: never enumerated.
const (
	androidOverlayType   = "ai.ansight.runtime.AndroidUiEvidence$OverlaySurface"
	overlayAutomationID  = "ansight.overlay.surface"
	explicitVisible      = 1 << 0
	explicitEnabled      = 1 << 1
	explicitCurrentPage  = 1 << 2
	explicitActivePage   = 1 << 3
	defaultVisibleBit    = 1
	defaultEnabledBit    = 2
	defaultCurrentPageBt = 4
	defaultActivePageBit = 8
)

// Parse reads a visual-tree payload (the result of ui.get_visual_tree, or a framework's
// tree tool) in compact v2 or the legacy form. It fails only on what it cannot read as a
// tree: invalid or too large JSON, a payload that is not an object, a root that is not an
// object, or a bound exceeded ([MaxBytes], [MaxDepth], [MaxNodes]). Everything else is
// read leniently, as the official host does; [Validate] says whether the official gate
// would accept it.
func Parse(data []byte) (*Tree, error) {
	r, err := read(data)
	if err != nil {
		return nil, err
	}
	if r.root == nil {
		return nil, &Error{Pointer: "/root", Msg: "the payload has no root node object"}
	}
	return r.tree, nil
}

// reader holds one Parse's state. The members of a payload come in any order, so what
// depends on the payload (types, flag bits, page context) is resolved after the read.
type reader struct {
	dec  *jsontext.Decoder
	tree *Tree
	root *Node

	types       []string
	typesSeen   bool
	typesKind   jsontext.Kind
	typesBlank  bool // an element of types is not a non-blank string
	formatKind  jsontext.Kind
	rootKind    jsontext.Kind
	bits        [4]int64 // visible, enabled, currentPage, activePage
	bitsSet     [4]bool  // which flagBits members were integers (else the default bit)
	bitsPresent [4]bool  // which were there and not null (MAUI's page context)
	hasFlagBits bool
	pageObject  bool // the payload has a currentPage object
	nodeCount   int
	countSeen   bool

	// gate collects the compact v2 gate's node violations in document order.
	gate []violation
	// path is the JSON Pointer of the node being read, as child indexes below root.
	path []int
}

// violation is one node that breaks a gate rule.
type violation struct {
	rule    Rule
	pointer string
	msg     string
}

// Names the reader knows, by lower-cased name: a member that matches one only by case is
// refused, so that no second reader can see another value under the same name.
var payloadNames = foldSet("format", "platform", "source", "adapter", "capturedAtUtc", "snapshotId", "revision",
	"nodeIdentity", "types", "flagBits", "coordinateSpace", "root", "nodeCount", "totalNodes", "truncated",
	"rootScope", "currentPage")

var nodeNames = foldSet("id", "typeId", "type", "kind", "styleId", "stacking", "children", "automationId",
	"accessibilityIdentifier", "testID", "nativeID", "text", "label", "value", "role", "supportedActions",
	"visible", "enabled", "currentPage", "activePage", "flags", "bounds", "visual", "properties", "props", "z",
	"focusable", "focused", "checked", "truncated", "isPassword", "isSecure", "secureTextEntry", "password", "navigatesBack",
	"childCount")

// names is a set of member names, by exact name and by lower-cased name.
type names struct {
	exact map[string]bool
	fold  map[string]string
}

func foldSet(list ...string) *names {
	ns := &names{exact: make(map[string]bool, len(list)), fold: make(map[string]string, len(list))}
	for _, n := range list {
		ns.exact[n] = true
		ns.fold[strings.ToLower(n)] = n
	}
	return ns
}

func read(data []byte) (*reader, error) {
	if len(data) > MaxBytes {
		return nil, &Error{Msg: fmt.Sprintf("the payload is %d bytes, more than %d", len(data), MaxBytes)}
	}
	r := &reader{dec: jsontext.NewDecoder(bytes.NewReader(data)), tree: &Tree{}}
	if err := r.payload(); err != nil {
		return nil, err
	}
	if _, err := r.dec.ReadToken(); err == nil {
		return nil, &Error{Msg: "data after the payload"}
	} else if !errors.Is(err, io.EOF) {
		return nil, r.syntax(err)
	}
	r.resolve()
	return r, nil
}

// syntax wraps a JSON error with where it happened.
func (r *reader) syntax(err error) error {
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		return &Error{Pointer: string(se.JSONPointer), Msg: "invalid JSON: " + se.Err.Error(), Err: err}
	}
	return &Error{Msg: "invalid JSON: " + err.Error(), Err: err}
}

// members reads an object's members, calling member for each name; the value is the next
// token. known, when set, is checked for names that differ from a known one only by case.
func (r *reader) members(where func() string, known *names, member func(name string) error) error {
	if _, err := r.dec.ReadToken(); err != nil { // '{'
		return r.syntax(err)
	}
	for {
		switch r.dec.PeekKind() {
		case '}':
			if _, err := r.dec.ReadToken(); err != nil {
				return r.syntax(err)
			}
			return nil
		case 0:
			_, err := r.dec.ReadToken()
			return r.syntax(err)
		}
		tok, err := r.dec.ReadToken()
		if err != nil {
			return r.syntax(err)
		}
		name := tok.String()
		if known != nil && !known.exact[name] {
			if canon, ok := known.fold[strings.ToLower(name)]; ok {
				return &Error{Pointer: where(), Msg: fmt.Sprintf("member %q differs from %q only by case", name, canon)}
			}
		}
		if err := member(name); err != nil {
			return err
		}
	}
}

// skip skips the next value.
func (r *reader) skip() error {
	if err := r.dec.SkipValue(); err != nil {
		return r.syntax(err)
	}
	return nil
}

// str reads the next value as a string ("", false when it is not one; it is skipped).
func (r *reader) str() (string, bool, error) {
	if r.dec.PeekKind() != '"' {
		return "", false, r.skip()
	}
	tok, err := r.dec.ReadToken()
	if err != nil {
		return "", false, r.syntax(err)
	}
	return tok.String(), true, nil
}

// boolean reads the next value as a boolean (false, false when it is not one).
func (r *reader) boolean() (v, ok bool, err error) {
	switch r.dec.PeekKind() {
	case 't', 'f':
		tok, err := r.dec.ReadToken()
		if err != nil {
			return false, false, r.syntax(err)
		}
		return tok.Bool(), true, nil
	}
	return false, false, r.skip()
}

// number reads the next value as a number (its raw text and value; ok false when it is
// not a number).
func (r *reader) number() (raw string, v float64, ok bool, err error) {
	if r.dec.PeekKind() != '0' {
		return "", 0, false, r.skip()
	}
	tok, err := r.dec.ReadToken()
	if err != nil {
		return "", 0, false, r.syntax(err)
	}
	raw = tok.String()
	v, ferr := strconv.ParseFloat(raw, 64)
	if ferr != nil || math.IsInf(v, 0) {
		return raw, 0, false, nil // out of float64's range: not a usable number
	}
	return raw, v + 0, true, nil // + 0 turns -0 into 0
}

// int32Of reads raw as the official host's TryGetValue<int>: a JSON integer without
// fraction or exponent that fits 32 bits.
func int32Of(raw string) (int64, bool) {
	if raw == "" {
		return 0, false
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; (c < '0' || c > '9') && !(i == 0 && c == '-') {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(raw, 10, 32)
	return v, err == nil
}

// integer reads the next value as a 32-bit integer.
func (r *reader) integer() (int64, bool, error) {
	raw, _, ok, err := r.number()
	if err != nil || !ok {
		return 0, false, err
	}
	v, ok := int32Of(raw)
	return v, ok, nil
}

// payload reads the top-level object.
func (r *reader) payload() error {
	if k := r.dec.PeekKind(); k != '{' {
		if k == 0 {
			_, err := r.dec.ReadToken()
			return r.syntax(err)
		}
		return errNotObject
	}
	t := r.tree
	return r.members(func() string { return "" }, payloadNames, func(name string) error {
		var err error
		switch name {
		case "format":
			r.formatKind = r.dec.PeekKind()
			t.Format, _, err = r.str()
		case "platform":
			t.Platform, _, err = r.str()
		case "source":
			t.Source, _, err = r.str()
		case "adapter":
			t.Adapter, _, err = r.str()
		case "snapshotId":
			t.SnapshotID, _, err = r.str()
		case "rootScope":
			t.RootScope, _, err = r.str()
		case "capturedAtUtc":
			var s string
			if s, _, err = r.str(); err == nil {
				t.CapturedAt = parseTime(s)
			}
		case "revision":
			var raw string
			var ok bool
			if raw, _, ok, err = r.number(); err == nil && ok {
				t.Revision, _ = strconv.ParseInt(raw, 10, 64)
			}
		case "nodeCount", "totalNodes":
			var v int64
			var ok bool
			if v, ok, err = r.integer(); err == nil && ok && v >= 0 {
				if name == "nodeCount" {
					r.nodeCount, r.countSeen = int(v), true
				} else {
					t.TotalNodes = int(v)
				}
			}
		case "truncated":
			t.Truncated, _, err = r.boolean()
		case "types":
			err = r.readTypes()
		case "flagBits":
			err = r.readFlagBits()
		case "coordinateSpace":
			var raw jsontext.Value
			if raw, err = r.value(); err == nil && raw.Kind() == '{' {
				if rect, ok := rectOf(raw, false); ok {
					t.CoordinateSpace = &rect
				}
			}
		case "currentPage":
			if r.dec.PeekKind() != '{' {
				return r.skip()
			}
			r.pageObject = true
			err = r.members(func() string { return "/currentPage" }, nil, func(name string) error {
				if name == "id" {
					var e error
					t.CurrentPageID, _, e = r.str()
					return e
				}
				return r.skip()
			})
		case "root":
			r.rootKind = r.dec.PeekKind()
			if r.rootKind != '{' {
				return r.skip()
			}
			if r.root != nil { // unreachable: duplicate names are refused
				return &Error{Pointer: "/root", Msg: "two roots"}
			}
			r.root, err = r.node(nil, 0)
		default:
			err = r.skip()
		}
		return err
	})
}

// value reads the next value whole.
func (r *reader) value() (jsontext.Value, error) {
	v, err := r.dec.ReadValue()
	if err != nil {
		return nil, r.syntax(err)
	}
	return v, nil
}

func (r *reader) readTypes() error {
	r.typesSeen = true
	r.typesKind = r.dec.PeekKind()
	if r.typesKind != '[' {
		return r.skip()
	}
	if _, err := r.dec.ReadToken(); err != nil {
		return r.syntax(err)
	}
	for {
		switch r.dec.PeekKind() {
		case ']':
			_, err := r.dec.ReadToken()
			if err != nil {
				return r.syntax(err)
			}
			return nil
		case 0:
			_, err := r.dec.ReadToken()
			return r.syntax(err)
		}
		if len(r.types) >= MaxNodes {
			return &Error{Pointer: "/types", Msg: fmt.Sprintf("more than %d types", MaxNodes)}
		}
		s, ok, err := r.str()
		if err != nil {
			return err
		}
		if !ok || isBlank(s) {
			r.typesBlank = true
		}
		r.types = append(r.types, s)
	}
}

func (r *reader) readFlagBits() error {
	if r.dec.PeekKind() != '{' {
		return r.skip()
	}
	r.hasFlagBits = true
	return r.members(func() string { return "/flagBits" }, nil, func(name string) error {
		i := -1
		switch name {
		case "visible":
			i = 0
		case "enabled":
			i = 1
		case "currentPage":
			i = 2
		case "activePage":
			i = 3
		}
		if i < 0 {
			return r.skip()
		}
		r.bitsPresent[i] = r.dec.PeekKind() != 'n'
		v, ok, err := r.integer()
		if err == nil && ok {
			r.bits[i], r.bitsSet[i] = v, true
		}
		return err
	})
}

// pointer is the JSON Pointer of the node being read.
func (r *reader) pointer() string {
	var b strings.Builder
	b.WriteString("/root")
	for _, i := range r.path {
		b.WriteString("/children/")
		b.WriteString(strconv.Itoa(i))
	}
	return b.String()
}

func (r *reader) violate(rule Rule, msg string) {
	r.gate = append(r.gate, violation{rule: rule, pointer: r.pointer(), msg: msg})
}

// rawNode is what a node's members say before the payload is known.
type rawNode struct {
	typeIDRaw   string // the typeId token ("" when absent or not a number)
	typeIDKind  jsontext.Kind
	typeName    string // the legacy type member
	automation  [7]string
	label, role string
	propsRole   string
	propsLabel  string
	propsTitle  string
	propsValue  string
	propsSecure bool
	propsValue2 string // properties.value
	explicit    uint8
	visible     bool
	enabled     bool
	current     bool
	active      bool
	childCount  int
	countSet    bool
}

// node reads one node object and its subtree.
func (r *reader) node(parent *Node, depth int) (*Node, error) {
	if len(r.tree.nodes) >= MaxNodes {
		return nil, &Error{Pointer: r.pointer(), Msg: fmt.Sprintf("more than %d nodes", MaxNodes)}
	}
	if r.dec.StackDepth()+2 > MaxDepth {
		return nil, &Error{Pointer: r.pointer(), Msg: fmt.Sprintf("nesting deeper than %d", MaxDepth)}
	}
	n := &Node{TypeID: -1, Parent: parent, depth: depth, index: len(r.tree.nodes)}
	r.tree.nodes = append(r.tree.nodes, n)
	var raw rawNode
	forbidden := ""
	err := r.members(r.pointer, nodeNames, func(name string) error {
		var err error
		switch name {
		case "id":
			n.ID, _, err = r.str()
		case "typeId":
			raw.typeIDKind = r.dec.PeekKind()
			raw.typeIDRaw, _, _, err = r.number()
		case "type", "kind", "styleId", "stacking":
			if forbidden == "" {
				forbidden = name
			}
			if name == "type" {
				raw.typeName, _, err = r.str()
			} else {
				err = r.skip()
			}
		case "children":
			err = r.children(n, depth)
		case "automationId":
			raw.automation[0], _, err = r.str()
		case "accessibilityIdentifier":
			raw.automation[1], _, err = r.str()
		case "testID":
			raw.automation[2], _, err = r.str()
		case "nativeID":
			raw.automation[3], _, err = r.str()
		case "text":
			n.textMember, _, err = r.str()
		case "label":
			raw.label, _, err = r.str()
		case "value":
			n.valueMember, _, err = r.str()
		case "role":
			raw.role, _, err = r.str()
		case "supportedActions":
			err = r.actions(n)
		case "visible", "enabled", "currentPage", "activePage":
			var v, ok bool
			if v, ok, err = r.boolean(); err == nil && ok {
				switch name {
				case "visible":
					raw.explicit |= explicitVisible
					raw.visible = v
				case "enabled":
					raw.explicit |= explicitEnabled
					raw.enabled = v
				case "currentPage":
					raw.explicit |= explicitCurrentPage
					raw.current = v
				default:
					raw.explicit |= explicitActivePage
					raw.active = v
				}
			}
		case "flags":
			var v int64
			var ok bool
			if v, ok, err = r.integer(); err == nil && ok {
				n.flags, n.flagsSet = v, true
			}
		case "bounds":
			var rect Rect
			var ok bool
			if rect, ok, err = r.bounds(); err == nil && ok {
				n.Bounds = &rect
			}
		case "visual":
			err = r.visual(n)
		case "properties":
			var v jsontext.Value
			if v, err = r.value(); err == nil && v.Kind() == '{' {
				// The decoder's buffer is reused by the next read: keep a compact copy.
				n.Properties = v.Clone()
				_ = n.Properties.Compact()
				raw.automation[4], raw.propsValue2, n.Background = propertiesOf(n.Properties, n.Background)
			}
		case "props":
			err = r.props(&raw)
		case "z":
			var v float64
			var ok bool
			if _, v, ok, err = r.number(); err == nil && ok {
				n.Z = v
			}
		case "childCount":
			var v int64
			var ok bool
			if v, ok, err = r.integer(); err == nil && ok && v >= 0 {
				raw.childCount, raw.countSet = int(v), true
			}
		case "focusable":
			n.Focusable, _, err = r.boolean()
		case "focused":
			n.Focused, _, err = r.boolean()
		case "truncated":
			n.Stub, _, err = r.boolean()
		case "checked":
			var v, ok bool
			if v, ok, err = r.boolean(); err == nil && ok {
				n.Checked = &v
			}
		case "isPassword", "isSecure", "secureTextEntry", "password":
			var v bool
			if v, _, err = r.boolean(); err == nil && v {
				n.Secure = true
			}
		case "navigatesBack":
			n.NavigatesBack, _, err = r.boolean()
		default:
			err = r.skip()
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	n.Label = trim(raw.label)
	n.AutomationID = firstNonBlank(raw.automation[0], raw.automation[1], raw.automation[2], raw.automation[3],
		raw.automation[4], raw.automation[5], raw.automation[6])
	if raw.propsSecure {
		n.Secure = true
	}
	if n.Secure {
		// A secure entry's value never leaves the reader, whatever the app sent: the
		// official SDKs omit it, and nothing downstream (player, recordings, agents)
		// may show it.
		n.valueMember, n.visualValue, raw.propsValue, raw.propsValue2 = "", "", "", ""
	}
	n.VisualText = trim(n.VisualText)
	n.Text = firstNonBlank(n.textMember, raw.label, n.valueMember, n.VisualText, n.visualValue, raw.propsLabel, raw.propsTitle)
	n.Value = firstNonBlank(n.valueMember, n.visualValue, raw.propsValue2, raw.propsValue)
	if role := firstNonBlank(raw.role, raw.propsRole); role != "" {
		n.Role = strings.ToLower(role)
	}
	n.explicitState = raw.explicit
	n.Visible, n.Enabled, n.CurrentPage, n.ActivePage = raw.visible, raw.enabled, raw.current, raw.active
	if raw.countSet {
		n.ChildCount = raw.childCount
	} else {
		n.ChildCount = len(n.Children)
	}
	n.Type = raw.typeName
	if v, ok := int32Of(raw.typeIDRaw); ok {
		n.TypeID = int(v)
	} else if raw.typeIDKind != 0 {
		n.TypeID = -2 // present but not an integer: the gate refuses it
	}
	switch {
	case raw.typeIDKind == 0:
		r.violate(RuleTypeID, "the node has no typeId")
	case n.TypeID == -2:
		r.violate(RuleTypeID, "typeId is not a JSON integer")
	}
	if forbidden != "" {
		r.violate(RuleForbidden, fmt.Sprintf("the node has a %q member", forbidden))
	}
	return n, nil
}

// children reads a node's children member: null, or an array of node objects.
func (r *reader) children(n *Node, depth int) error {
	switch r.dec.PeekKind() {
	case 'n':
		return r.skip()
	case '[':
	default:
		r.violate(RuleChildren, "children is neither null nor an array")
		return r.skip()
	}
	if _, err := r.dec.ReadToken(); err != nil {
		return r.syntax(err)
	}
	for i := 0; ; i++ {
		switch r.dec.PeekKind() {
		case ']':
			if _, err := r.dec.ReadToken(); err != nil {
				return r.syntax(err)
			}
			return nil
		case 0:
			_, err := r.dec.ReadToken()
			return r.syntax(err)
		case '{':
			r.path = append(r.path, i)
			c, err := r.node(n, depth+1)
			r.path = r.path[:len(r.path)-1]
			if err != nil {
				return err
			}
			n.Children = append(n.Children, c)
		default:
			r.path = append(r.path, i)
			r.violate(RuleChildren, "a child is not an object")
			r.path = r.path[:len(r.path)-1]
			if err := r.skip(); err != nil {
				return err
			}
		}
	}
}

// actions reads supportedActions: the strings of an array, de-duplicated
// case-insensitively (the first spelling wins), blanks dropped.
func (r *reader) actions(n *Node) error {
	if r.dec.PeekKind() != '[' {
		return r.skip()
	}
	n.explicitAction = true
	n.Actions = []string{}
	if _, err := r.dec.ReadToken(); err != nil {
		return r.syntax(err)
	}
	for {
		switch r.dec.PeekKind() {
		case ']':
			_, err := r.dec.ReadToken()
			if err != nil {
				return r.syntax(err)
			}
			return nil
		case 0:
			_, err := r.dec.ReadToken()
			return r.syntax(err)
		}
		s, ok, err := r.str()
		if err != nil {
			return err
		}
		if s = trim(s); ok && s != "" && !n.Supports(s) {
			if len(n.Actions) >= 256 {
				continue // a node lists a handful; more is noise, not a reason to refuse the tree
			}
			n.Actions = append(n.Actions, s)
		}
	}
}

// visual reads the visual object's members the readings use.
func (r *reader) visual(n *Node) error {
	if r.dec.PeekKind() != '{' {
		return r.skip()
	}
	return r.members(func() string { return r.pointer() + "/visual" }, nil, func(name string) error {
		var err error
		switch name {
		case "text":
			n.VisualText, _, err = r.str()
		case "value":
			n.visualValue, _, err = r.str()
		case "foreground":
			n.Foreground, _, err = r.str()
		case "background", "backgroundColor":
			var s string
			var ok bool
			if s, ok, err = r.str(); err == nil && ok && (name == "background" || n.Background == "") {
				n.Background = s
			}
		case "opacity":
			var v float64
			var ok bool
			if _, v, ok, err = r.number(); err == nil && ok {
				n.Opacity = &v
			}
		default:
			err = r.skip()
		}
		return err
	})
}

// props reads a React node's props the readings use.
func (r *reader) props(raw *rawNode) error {
	if r.dec.PeekKind() != '{' {
		return r.skip()
	}
	return r.members(func() string { return r.pointer() + "/props" }, nil, func(name string) error {
		var err error
		switch name {
		case "testID":
			raw.automation[5], _, err = r.str()
		case "nativeID":
			raw.automation[6], _, err = r.str()
		case "accessibilityLabel":
			raw.propsLabel, _, err = r.str()
		case "title":
			raw.propsTitle, _, err = r.str()
		case "value":
			raw.propsValue, _, err = r.str()
		case "accessibilityRole":
			raw.propsRole, _, err = r.str()
		case "secureTextEntry":
			raw.propsSecure, _, err = r.boolean()
		default:
			err = r.skip()
		}
		return err
	})
}

// propertiesOf reads properties.accessibilityIdentifier, properties.value and
// properties.backgroundColor (the last only when visual had no background).
func propertiesOf(v jsontext.Value, background string) (automationID, value, bg string) {
	bg = background
	d := jsontext.NewDecoder(bytes.NewReader(v))
	if _, err := d.ReadToken(); err != nil {
		return
	}
	for d.PeekKind() == '"' {
		tok, err := d.ReadToken()
		if err != nil {
			return
		}
		name := tok.String()
		if d.PeekKind() != '"' {
			if d.SkipValue() != nil {
				return
			}
			continue
		}
		if tok, err = d.ReadToken(); err != nil {
			return
		}
		switch name {
		case "accessibilityIdentifier":
			automationID = tok.String()
		case "value":
			value = tok.String()
		case "backgroundColor":
			if bg == "" {
				bg = tok.String()
			}
		}
	}
	return
}

// bounds reads a node's bounds from the decoder (see boundsOf).
func (r *reader) bounds() (Rect, bool, error) {
	switch r.dec.PeekKind() {
	case '{':
		var vals [8]float64
		var have, present [8]bool
		err := r.members(func() string { return r.pointer() + "/bounds" }, nil, func(name string) error {
			i := rectIndex(name)
			if i < 0 {
				return r.skip()
			}
			present[i] = r.dec.PeekKind() != 'n'
			_, v, ok, err := r.number()
			vals[i], have[i] = v, ok
			return err
		})
		if err != nil {
			return Rect{}, false, err
		}
		rect, ok := pickRect(vals, have, present, true)
		return rect, ok, nil
	case '[':
		v, err := r.value()
		if err != nil {
			return Rect{}, false, err
		}
		rect, ok := boundsOf(v)
		return rect, ok, nil
	}
	return Rect{}, false, r.skip()
}

// rectIndex is the slot of a rectangle member: x y width height, then the absolute ones.
func rectIndex(name string) int {
	switch name {
	case "x":
		return 0
	case "y":
		return 1
	case "width":
		return 2
	case "height":
		return 3
	case "absoluteX":
		return 4
	case "absoluteY":
		return 5
	case "absoluteWidth":
		return 6
	case "absoluteHeight":
		return 7
	}
	return -1
}

// pickRect is the rectangle of the members read: the absolute ones when absolute is
// allowed and all four are present (not null), else x, y, width, height; each a number.
func pickRect(vals [8]float64, have, present [8]bool, absolute bool) (Rect, bool) {
	base := 0
	if absolute && present[4] && present[5] && present[6] && present[7] {
		base = 4
	}
	for i := base; i < base+4; i++ {
		if !have[i] {
			return Rect{}, false
		}
	}
	return Rect{vals[base], vals[base+1], vals[base+2], vals[base+3]}, true
}

// boundsOf reads a node's bounds: {x,y,width,height}, {absoluteX,absoluteY,
// absoluteWidth,absoluteHeight} (preferred when all four are there), [x,y,w,h], or an
// array of eight whose elements 4–7 are used.
func boundsOf(v jsontext.Value) (Rect, bool) {
	switch v.Kind() {
	case '{':
		return rectOf(v, true)
	case '[':
		var nums []float64
		d := jsontext.NewDecoder(bytes.NewReader(v))
		if _, err := d.ReadToken(); err != nil {
			return Rect{}, false
		}
		for d.PeekKind() != ']' && d.PeekKind() != 0 && len(nums) < 16 {
			tok, err := d.ReadToken()
			if err != nil {
				return Rect{}, false
			}
			f := math.NaN()
			if tok.Kind() == '0' {
				if x, err := tok.Float(); err == nil && !math.IsInf(x, 0) {
					f = x + 0
				}
			} else if tok.Kind() == '{' || tok.Kind() == '[' {
				return Rect{}, false
			}
			nums = append(nums, f)
		}
		off := 0
		if len(nums) >= 8 {
			off = 4
		}
		if len(nums) < off+4 {
			return Rect{}, false
		}
		r := Rect{nums[off], nums[off+1], nums[off+2], nums[off+3]}
		if math.IsNaN(r.X) || math.IsNaN(r.Y) || math.IsNaN(r.Width) || math.IsNaN(r.Height) {
			return Rect{}, false
		}
		return r, true
	}
	return Rect{}, false
}

// rectOf reads {x,y,width,height}, or with absolute the absolute* members when all four
// are present (not null).
func rectOf(v jsontext.Value, absolute bool) (Rect, bool) {
	var vals [8]float64
	var have, present [8]bool
	d := jsontext.NewDecoder(bytes.NewReader(v))
	if _, err := d.ReadToken(); err != nil {
		return Rect{}, false
	}
	for d.PeekKind() == '"' {
		name, err := d.ReadToken()
		if err != nil {
			return Rect{}, false
		}
		i := rectIndex(name.String())
		if i < 0 || d.PeekKind() != '0' {
			if i >= 0 && d.PeekKind() != 'n' {
				present[i] = true
			}
			if d.SkipValue() != nil {
				return Rect{}, false
			}
			continue
		}
		tok, err := d.ReadToken()
		if err != nil {
			return Rect{}, false
		}
		if f, err := tok.Float(); err == nil && !math.IsInf(f, 0) {
			vals[i], have[i] = f+0, true
		}
		present[i] = true
	}
	return pickRect(vals, have, present, absolute)
}

// resolve fills in what depends on the whole payload: type names, states from flag bits,
// inferred roles and actions, state with ancestors, overlay surfaces and the page context.
func (r *reader) resolve() {
	t := r.tree
	t.Root = r.root
	if r.countSeen {
		t.NodeCount = r.nodeCount
	} else {
		t.NodeCount = len(t.nodes)
	}
	bit := func(i int, def int64) int64 {
		if r.bitsSet[i] {
			return r.bits[i]
		}
		return def
	}
	bits := [4]int64{bit(0, defaultVisibleBit), bit(1, defaultEnabledBit), bit(2, defaultCurrentPageBt), bit(3, defaultActivePageBit)}
	maui := strings.Contains(strings.ToLower(t.Format), ".maui.") || strings.EqualFold(t.Source, "maui")
	pageContext := maui && (t.RootScope == "currentPage" || r.pageObject ||
		r.hasFlagBits && (r.bitsPresent[2] || r.bitsPresent[3]))
	t.pageContext = pageContext
	for _, n := range t.nodes { // pre-order: parents before children
		if n.TypeID >= 0 && n.TypeID < len(r.types) && !isBlank(r.types[n.TypeID]) {
			n.Type = r.types[n.TypeID]
		}
		state := func(explicit uint8, v bool, i int, def bool) bool {
			if n.explicitState&explicit != 0 {
				return v
			}
			if n.flagsSet && bits[i] != 0 {
				return n.flags&bits[i] == bits[i]
			}
			return def
		}
		n.Visible = state(explicitVisible, n.Visible, 0, true)
		n.Enabled = state(explicitEnabled, n.Enabled, 1, true)
		n.CurrentPage = state(explicitCurrentPage, n.CurrentPage, 2, false)
		n.ActivePage = state(explicitActivePage, n.ActivePage, 3, false)
		if n.Role == "" {
			n.Role = inferRole(n.Type)
		}
		if !n.explicitAction {
			n.Actions = inferActions(n.Role)
		}
		n.shown, n.usable = n.Visible, n.Enabled
		n.injected = n.Type == androidOverlayType || n.AutomationID == overlayAutomationID
		if p := n.Parent; p != nil {
			n.shown = n.shown && p.shown
			n.usable = n.usable && p.usable
			n.injected = n.injected || p.injected
		}
		if pageContext {
			n.inActivePage = t.RootScope == "currentPage" ||
				t.CurrentPageID != "" && n.ID == t.CurrentPageID || n.CurrentPage || n.ActivePage ||
				n.Parent != nil && n.Parent.inActivePage
		}
	}
}

// inferRole is the official host's role for a node without one, from its type name.
func inferRole(typ string) string {
	t := strings.ToLower(typ)
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(t, s) {
				return true
			}
		}
		return false
	}
	switch {
	case has("button", "gesture", "inkwell"):
		return "button"
	case has("textfield", "textinput", "edittext", "searchbar", "entry", "editor"):
		return "textbox"
	case has("scroll", "listview", "collectionview"):
		return "scrollview"
	case has("label", "textview") || t == "text":
		return "text"
	}
	return "view"
}

// inferActions is the official host's actions for a node without supportedActions.
func inferActions(role string) []string {
	switch role {
	case "button", "switch", "checkbox", "radio":
		return []string{"tap"}
	case "textbox":
		return []string{"tap", "typeText", "focus"}
	case "scrollview":
		return []string{"scroll", "swipe"}
	}
	return []string{}
}

// timeLayouts are the capturedAtUtc forms read, tried in order.
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.9999999", "2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05.9999999Z07:00", "2006-01-02 15:04:05", "2006-01-02T15:04:05Z0700"}

// parseTime reads a timestamp leniently (a zone-less one is UTC); zero when unreadable.
func parseTime(s string) time.Time {
	s = strings.TrimSpace(s)
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

func trim(s string) string { return strings.TrimSpace(s) }

func isBlank(s string) bool { return strings.TrimFunc(s, unicode.IsSpace) == "" }

// firstNonBlank is the first argument that is not blank, trimmed (the official readers
// trim strings and read a blank one as absent).
func firstNonBlank(vals ...string) string {
	for _, v := range vals {
		if v = trim(v); v != "" {
			return v
		}
	}
	return ""
}

func hasSuffix(s, suffix string) bool { return strings.HasSuffix(s, suffix) }

func equalFold(a, b string) bool { return strings.EqualFold(a, b) }
