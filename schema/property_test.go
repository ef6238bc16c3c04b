package schema

import (
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"pgregory.net/rapid"
)

// The generators are made per use: a rapid generator is not safe for concurrent use (it
// caches its description lazily), and the property tests run in parallel.
func genNumLit() *rapid.Generator[string] {
	return rapid.SampledFrom([]string{"0", "1", "-1", "1.5", "2", "1e1", "10.0", "0.1", "100"})
}

func genStrLit() *rapid.Generator[string] {
	return rapid.SampledFrom([]string{"", "a", "ab", "Ünï", "2026-03-20T10:00:00Z", "1b4e28ba-2fa1-11d2-883f-0016d3cca427", "x y"})
}

func genName() *rapid.Generator[string] { return rapid.SampledFrom([]string{"a", "b", "c", "d e", ""}) }

// genSchemaText draws a schema from the keywords the fast validator implements.
func genSchemaText(t *rapid.T, depth int) string {
	kinds := []string{"string", "number", "integer", "boolean", "null", "bool", "multi", "enum"}
	if depth > 0 {
		kinds = append(kinds, "object", "object", "array")
	}
	var m []string
	opt := func(kw, val string) {
		if rapid.Bool().Draw(t, "has "+kw) {
			m = append(m, fmt.Sprintf("%q:%s", kw, val))
		}
	}
	switch rapid.SampledFrom(kinds).Draw(t, "kind") {
	case "bool":
		return rapid.SampledFrom([]string{"true", "false", "{}"}).Draw(t, "bool schema")
	case "string":
		m = append(m, `"type":"string"`)
		opt("minLength", rapid.SampledFrom([]string{"0", "1", "2"}).Draw(t, "minLength"))
		opt("maxLength", rapid.SampledFrom([]string{"0", "2", "3.0"}).Draw(t, "maxLength"))
		opt("pattern", rapid.SampledFrom([]string{`"^a"`, `"b$"`, `"[0-9]"`}).Draw(t, "pattern"))
		opt("format", rapid.SampledFrom([]string{`"date-time"`, `"uuid"`, `"email"`, `"unknown-format"`}).Draw(t, "format"))
	case "number", "integer":
		m = append(m, fmt.Sprintf(`"type":%q`, rapid.SampledFrom([]string{"number", "integer"}).Draw(t, "type")))
		for _, kw := range []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"} {
			opt(kw, genNumLit().Draw(t, kw))
		}
	case "boolean", "null":
		m = append(m, fmt.Sprintf(`"type":%q`, rapid.SampledFrom([]string{"boolean", "null"}).Draw(t, "type")))
	case "multi":
		m = append(m, `"type":["string","null","integer"]`)
		opt("const", fmt.Sprintf("%q", genStrLit().Draw(t, "const")))
	case "enum":
		vals := rapid.SliceOfN(rapid.OneOf(genNumLit(), rapid.Map(genStrLit(), func(s string) string { return fmt.Sprintf("%q", s) }),
			rapid.SampledFrom([]string{"true", "null"})), 1, 3).Draw(t, "enum")
		m = append(m, `"enum":[`+strings.Join(vals, ",")+`]`)
	case "object":
		if rapid.Bool().Draw(t, "typed") {
			m = append(m, `"type":"object"`)
		}
		names := rapid.SliceOfNDistinct(genName(), 0, 3, rapid.ID[string]).Draw(t, "props")
		var ps []string
		for _, n := range names {
			ps = append(ps, fmt.Sprintf("%q:%s", n, genSchemaText(t, depth-1)))
		}
		m = append(m, `"properties":{`+strings.Join(ps, ",")+`}`)
		req := rapid.SliceOfNDistinct(genName(), 0, 2, rapid.ID[string]).Draw(t, "required")
		if len(req) > 0 {
			m = append(m, fmt.Sprintf(`"required":["%s"]`, strings.Join(req, `","`)))
		}
		switch rapid.IntRange(0, 3).Draw(t, "additional") {
		case 1:
			m = append(m, `"additionalProperties":true`)
		case 2:
			m = append(m, `"additionalProperties":false`)
		case 3:
			m = append(m, `"additionalProperties":`+genSchemaText(t, depth-1))
		}
		opt("minProperties", rapid.SampledFrom([]string{"0", "1", "2"}).Draw(t, "minProperties"))
		opt("maxProperties", rapid.SampledFrom([]string{"0", "1", "2"}).Draw(t, "maxProperties"))
	case "array":
		m = append(m, `"type":"array"`)
		opt("items", genSchemaText(t, depth-1))
		if rapid.Bool().Draw(t, "prefix") {
			m = append(m, `"prefixItems":[`+genSchemaText(t, depth-1)+`]`)
		}
		opt("minItems", rapid.SampledFrom([]string{"0", "1", "2"}).Draw(t, "minItems"))
		opt("maxItems", rapid.SampledFrom([]string{"0", "1", "2"}).Draw(t, "maxItems"))
		opt("uniqueItems", rapid.SampledFrom([]string{"true", "false"}).Draw(t, "uniqueItems"))
	}
	opt("description", `"annotated"`)
	return "{" + strings.Join(m, ",") + "}"
}

// genInstance draws a JSON value from the same small universe of names and literals.
func genInstance(t *rapid.T, depth int) string {
	kinds := []string{"num", "str", "lit"}
	if depth > 0 {
		kinds = append(kinds, "obj", "obj", "arr")
	}
	switch rapid.SampledFrom(kinds).Draw(t, "ikind") {
	case "num":
		return genNumLit().Draw(t, "inum")
	case "str":
		return fmt.Sprintf("%q", genStrLit().Draw(t, "istr"))
	case "lit":
		return rapid.SampledFrom([]string{"true", "false", "null"}).Draw(t, "ilit")
	case "obj":
		names := rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"a", "b", "c", "d e", "z", ""}), 0, 4, rapid.ID[string]).Draw(t, "inames")
		var ms []string
		for _, n := range names {
			ms = append(ms, fmt.Sprintf("%q:%s", n, genInstance(t, depth-1)))
		}
		return "{" + strings.Join(ms, ",") + "}"
	default:
		var es []string
		for range rapid.IntRange(0, 3).Draw(t, "ilen") {
			es = append(es, genInstance(t, depth-1))
		}
		return "[" + strings.Join(es, ",") + "]"
	}
}

// The fast validator agrees with the general one on every schema it accepts.
func TestPropertyFastMatchesStd(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		schema := genSchemaText(t, 2)
		s, err := Compile(jsontext.Value(schema))
		if err != nil {
			t.Fatalf("compile %s: %v", schema, err)
		}
		if s.fast == nil {
			t.Fatalf("fast validator refused %s", schema)
		}
		inst := jsontext.Value(genInstance(t, 3))
		fast, std := brief(fastOr(s)(inst)), brief(s.validateStd(inst))
		if fast != std {
			t.Fatalf("schema %s\ninstance %s\nfast %q\nstd  %q", schema, inst, fast, std)
		}
	})
}

// Publishing loses nothing: the published schema, restored, validates exactly like the
// original; and publishing is idempotent.
func TestPropertyPublishRoundTrip(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		schema := genSchemaText(t, 2)
		pub := Published(jsontext.Value(schema))
		if again := Published(pub); string(again) != string(pub) {
			t.Fatalf("not idempotent: %s → %s", pub, again)
		}
		a, _ := parseTree([]byte(schema))
		b, _ := parseTree(pub)
		restoreClosed(a)
		restoreClosed(b)
		ca, cb := jsontext.Value(a.appendJSON(nil)), jsontext.Value(b.appendJSON(nil))
		if err := ca.Canonicalize(); err != nil {
			t.Fatal(err)
		}
		if err := cb.Canonicalize(); err != nil {
			t.Fatal(err)
		}
		if string(ca) != string(cb) {
			t.Fatalf("schema %s\npublished %s\nrestored %s\nvs       %s", schema, pub, ca, cb)
		}
	})
}

func TestPropertyDecimalMatchesRat(t *testing.T) {
	t.Parallel()
	genNum := rapid.Custom(func(t *rapid.T) string {
		var b strings.Builder
		if rapid.Bool().Draw(t, "neg") {
			b.WriteByte('-')
		}
		b.WriteString(rapid.SampledFrom([]string{"0", "1", "7", "10", "100", "123", "0010"[2:], "999999999999999999999"}).Draw(t, "int"))
		if rapid.Bool().Draw(t, "frac") {
			b.WriteString("." + rapid.StringMatching(`[0-9]{1,4}`).Draw(t, "fracDigits"))
		}
		if rapid.Bool().Draw(t, "exp") {
			b.WriteString(rapid.SampledFrom([]string{"e", "E", "e+", "e-"}).Draw(t, "e") + fmt.Sprint(rapid.IntRange(0, 30).Draw(t, "expDigits")))
		}
		return b.String()
	})
	rapid.Check(t, func(t *rapid.T) {
		a, b := genNum.Draw(t, "a"), genNum.Draw(t, "b")
		ra, _ := new(big.Rat).SetString(a)
		rb, _ := new(big.Rat).SetString(b)
		if got, want := compareDecimal([]byte(a), []byte(b)), ra.Cmp(rb); got != want {
			t.Fatalf("compare(%s, %s) = %d, want %d", a, b, got, want)
		}
		d := parseDecimal([]byte(a))
		if d.isInteger() != ra.IsInt() {
			t.Fatalf("isInteger(%s) = %v", a, d.isInteger())
		}
	})
}
