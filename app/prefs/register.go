package prefs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/internal/flatargs"
	"github.com/ansight-go/ansight/wire"
)

// Store holds preferences. Its methods may be called concurrently, from tool calls.
type Store interface {
	// Keys returns every key, in any order.
	Keys(ctx context.Context) ([]string, error)
	// Get returns the value of key and whether it exists.
	Get(ctx context.Context, key string) (Value, bool, error)
	// Set writes the value of key (never of type Unsupported).
	Set(ctx context.Context, key string, v Value) error
	// Remove removes key and reports whether it was there.
	Remove(ctx context.Context, key string) (bool, error)
}

// Ids of the prefs tools.
const (
	ListKeysToolID  = "prefs.list_keys"
	GetValueToolID  = "prefs.get_value"
	SetValueToolID  = "prefs.set_value"
	RemoveKeyToolID = "prefs.remove_key"
)

// Failure codes: the official SDKs' codes, one per tool.
const (
	CodeListFailed   wire.Code = "prefs_list_failed"
	CodeGetFailed    wire.Code = "prefs_get_failed"
	CodeSetFailed    wire.Code = "prefs_set_failed"
	CodeRemoveFailed wire.Code = "prefs_remove_failed"
)

// Options configures the prefs tools.
type Options struct {
	// Stores are the stores by name ("settings"); at least one. Names are plain names,
	// matched regardless of case.
	Stores map[string]Store
	// Default is the store of a request that names none; the only store when there is one.
	Default string
	// AllowKeys and AllowKeyPrefixes, when either is set, are the only keys the tools see
	// (list) and touch (get, set, remove): the keys listed, and those with a prefix listed.
	AllowKeys        []string
	AllowKeyPrefixes []string
	// ReadOnly registers prefs.list_keys and prefs.get_value only.
	ReadOnly bool
}

// Register adds prefs.list_keys and prefs.get_value (read), prefs.set_value (write) and
// prefs.remove_key (critical: hidden by the default guard) over opts.Stores to a.
func Register(a *app.App, opts Options) error {
	p, err := newPrefs(opts)
	if err != nil {
		return err
	}
	def := func(id, name, keywords, description string, policy wire.Policy, schema string) catalog.Definition {
		return catalog.Definition{ID: id, Name: name, Category: "prefs", Policy: policy, Keywords: keywords,
			Description: description + " Stores: " + strings.Join(p.names, ", ") + ".", ArgumentEncoding: wire.ArgumentEncodingFlattenedString,
			ArgumentsSchema: jsontext.Value(schema)}
	}
	regs := []func() error{
		func() error {
			return app.Register(a, def(ListKeysToolID, "List preference keys", "preferences settings storage keys list",
				"Lists the keys of a preferences store (with a prefix, at most maxResults).", wire.PolicyRead, listSchema), p.list)
		},
		func() error {
			return app.Register(a, def(GetValueToolID, "Get preference value", "preferences settings storage get read",
				"Reads one preference value, as text with its type.", wire.PolicyRead, getSchema), p.get)
		},
	}
	if !opts.ReadOnly {
		regs = append(regs, func() error {
			return app.Register(a, def(SetValueToolID, "Set preference value", "preferences settings storage write set",
				"Writes one preference value, given as text and a type.", wire.PolicyWrite, setSchema), p.set)
		}, func() error {
			return app.Register(a, def(RemoveKeyToolID, "Remove preference key", "preferences settings storage delete remove",
				"Removes one preference key.", wire.PolicyCritical, getSchema), p.remove)
		})
	}
	for _, r := range regs {
		if err := r(); err != nil {
			return fmt.Errorf("prefs: %w", err)
		}
	}
	return nil
}

type prefs struct {
	stores map[string]Store // by lower-cased name
	names  []string         // as registered, sorted
	opts   Options
}

func newPrefs(opts Options) (*prefs, error) {
	if len(opts.Stores) == 0 {
		return nil, errors.New("prefs: Options.Stores is empty")
	}
	p := &prefs{stores: map[string]Store{}, opts: opts}
	for name, st := range opts.Stores {
		if err := catalog.CheckID(name); err != nil || strings.ContainsAny(name, `/\`) {
			return nil, fmt.Errorf("prefs: store name %q is not a plain name", name)
		}
		if st == nil {
			return nil, fmt.Errorf("prefs: store %q is nil", name)
		}
		if _, dup := p.stores[strings.ToLower(name)]; dup {
			return nil, fmt.Errorf("prefs: two stores are called %q", name)
		}
		p.stores[strings.ToLower(name)] = st
		p.names = append(p.names, name)
	}
	sort.Strings(p.names)
	switch {
	case opts.Default != "" && p.stores[strings.ToLower(opts.Default)] == nil:
		return nil, fmt.Errorf("prefs: the default store %q is not in Options.Stores", opts.Default)
	case opts.Default == "" && len(p.names) > 1:
		return nil, errors.New("prefs: several stores and no Options.Default")
	case opts.Default == "":
		p.opts.Default = p.names[0]
	}
	return p, nil
}

// store resolves a request's store argument.
func (p *prefs) store(a flatargs.Args) (string, Store, error) {
	name := a.Str("store")
	if name == "" {
		name = p.opts.Default
	}
	st := p.stores[strings.ToLower(name)]
	if st == nil {
		return "", nil, flatargs.Invalid("The preferences store '%s' is not allowed by the current registration (stores: %s).", name, strings.Join(p.names, ", "))
	}
	for _, n := range p.names {
		if strings.EqualFold(n, name) {
			name = n
		}
	}
	return name, st, nil
}

// allowed reports whether the tools may see key.
func (p *prefs) allowed(key string) bool {
	if len(p.opts.AllowKeys) == 0 && len(p.opts.AllowKeyPrefixes) == 0 {
		return true
	}
	if slices.Contains(p.opts.AllowKeys, key) {
		return true
	}
	for _, prefix := range p.opts.AllowKeyPrefixes {
		if strings.HasPrefix(key, prefix) {
			return true
		}
	}
	return false
}

// key reads a request's key, refusing one the registration does not allow.
func (p *prefs) key(a flatargs.Args) (string, error) {
	key, err := a.Required("key")
	if err != nil {
		return "", err
	}
	if !p.allowed(key) {
		return "", flatargs.Invalid("The preferences key '%s' is not allowed by the current registration.", key)
	}
	return key, nil
}

// fail is a tool failure with code and the error's text.
func fail(code wire.Code, err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	return app.ToolErrorf(code, "%s", err.Error())
}

type listResult struct {
	Store         string    `json:"store"`
	Keys          []string  `json:"keys" jsonschema:"in ordinal order"`
	Truncated     bool      `json:"truncated"`
	CapturedAtUtc time.Time `json:"capturedAtUtc"`
}

func (p *prefs) list(ctx context.Context, c *app.Call, in map[string]string) (*listResult, error) {
	a, err := flatargs.New(in)
	if err != nil {
		return nil, fail(CodeListFailed, err)
	}
	max, err := a.Int("maxResults", 200, 1, 1000)
	if err != nil {
		return nil, fail(CodeListFailed, err)
	}
	name, st, err := p.store(a)
	if err != nil {
		return nil, fail(CodeListFailed, err)
	}
	all, err := st.Keys(ctx)
	if err != nil {
		return nil, fail(CodeListFailed, err)
	}
	prefix := a.Str("prefix")
	keys := []string{}
	for _, k := range all {
		if p.allowed(k) && strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	res := &listResult{Store: name, Keys: keys, CapturedAtUtc: c.Now().UTC()}
	if len(keys) > max {
		res.Keys, res.Truncated = keys[:max], true
	}
	return res, nil
}

type getResult struct {
	Store         string    `json:"store"`
	Key           string    `json:"key"`
	Exists        bool      `json:"exists"`
	Value         *string   `json:"value" jsonschema:"the value as text (a string array as JSON text), or null"`
	ValueType     *Type     `json:"valueType" jsonschema:"string, boolean, integer, number, string_array or unsupported; null when the key does not exist"`
	CapturedAtUtc time.Time `json:"capturedAtUtc"`
}

func (p *prefs) get(ctx context.Context, c *app.Call, in map[string]string) (*getResult, error) {
	a, err := flatargs.New(in)
	if err != nil {
		return nil, fail(CodeGetFailed, err)
	}
	key, err := p.key(a)
	if err != nil {
		return nil, fail(CodeGetFailed, err)
	}
	name, st, err := p.store(a)
	if err != nil {
		return nil, fail(CodeGetFailed, err)
	}
	v, ok, err := st.Get(ctx, key)
	if err != nil {
		return nil, fail(CodeGetFailed, err)
	}
	res := &getResult{Store: name, Key: key, Exists: ok, CapturedAtUtc: c.Now().UTC()}
	if ok {
		text, t := v.Text(), v.Type
		res.Value, res.ValueType = &text, &t
	}
	return res, nil
}

type setResult struct {
	Store         string    `json:"store"`
	Key           string    `json:"key"`
	ValueType     Type      `json:"valueType"`
	Updated       bool      `json:"updated"`
	CapturedAtUtc time.Time `json:"capturedAtUtc"`
}

func (p *prefs) set(ctx context.Context, c *app.Call, in map[string]string) (*setResult, error) {
	a, err := flatargs.New(in)
	if err != nil {
		return nil, fail(CodeSetFailed, err)
	}
	key, err := p.key(a)
	if err != nil {
		return nil, fail(CodeSetFailed, err)
	}
	text, err := a.Required("value")
	if err != nil {
		return nil, fail(CodeSetFailed, err)
	}
	typ, err := a.Required("valueType")
	if err != nil {
		return nil, fail(CodeSetFailed, err)
	}
	v, err := parseValue(Type(strings.ToLower(typ)), text)
	if err != nil {
		return nil, fail(CodeSetFailed, err)
	}
	name, st, err := p.store(a)
	if err != nil {
		return nil, fail(CodeSetFailed, err)
	}
	if err := st.Set(ctx, key, v); err != nil {
		return nil, fail(CodeSetFailed, err)
	}
	return &setResult{Store: name, Key: key, ValueType: v.Type, Updated: true, CapturedAtUtc: c.Now().UTC()}, nil
}

type removeResult struct {
	Store         string    `json:"store"`
	Key           string    `json:"key"`
	Removed       bool      `json:"removed" jsonschema:"false when the key was not there"`
	CapturedAtUtc time.Time `json:"capturedAtUtc"`
}

func (p *prefs) remove(ctx context.Context, c *app.Call, in map[string]string) (*removeResult, error) {
	a, err := flatargs.New(in)
	if err != nil {
		return nil, fail(CodeRemoveFailed, err)
	}
	key, err := p.key(a)
	if err != nil {
		return nil, fail(CodeRemoveFailed, err)
	}
	name, st, err := p.store(a)
	if err != nil {
		return nil, fail(CodeRemoveFailed, err)
	}
	removed, err := st.Remove(ctx, key)
	if err != nil {
		return nil, fail(CodeRemoveFailed, err)
	}
	return &removeResult{Store: name, Key: key, Removed: removed, CapturedAtUtc: c.Now().UTC()}, nil
}

// The arguments schemas, as the official SDKs publish them.
var (
	storeProp  = flatargs.Prop("store", `["string","null"]`, "the store (default: the app's default store)")
	keyProp    = flatargs.Prop("key", `"string"`, "the preference key")
	listSchema = flatargs.Schema(nil, storeProp, flatargs.Prop("prefix", `["string","null"]`, "only keys with this prefix"),
		flatargs.Prop("maxResults", `"integer"`, "keys to list, 1 to 1000 (default 200)"))
	getSchema = flatargs.Schema([]string{"key"}, keyProp, storeProp)
	setSchema = flatargs.Schema([]string{"key", "value", "valueType"}, keyProp,
		flatargs.Prop("value", `"string"`, "the value as text; a string array as JSON text"),
		`"valueType":{"type":"string","enum":["string","boolean","integer","number","string_array"],"description":"the value's type"}`,
		storeProp)
)
