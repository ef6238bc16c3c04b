package recording

import (
	"bytes"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// strictValue reads untrusted JSON strictly (wire's codec: no duplicate names, bounded
// depth and size).
func strictValue(b []byte, v *jsontext.Value) error { return wire.Unmarshal(b, v) }

// The built-in sanitize policy, the official host's `pii-default` (its
// SessionSanitizationPolicy and SessionSanitizationProcessor, read through the search
// index; the behaviour is rewritten here, not translated): every string of a recording —
// records, their JSON files, visual trees, text artifacts, the session's description, JSON
// embedded in strings — is scanned by detectors whose matches are replaced, the values of
// sensitive properties and of sensitive inputs' text are replaced whole, and id-like keys
// are left alone. Binary artifacts are excluded. Screens are handled by the frame and
// touch rules of sensitive.go, which go beyond the official policy.
const (
	// SanitizePolicyID names the built-in policy in sanitization/report.json.
	SanitizePolicyID = "pii-default"
	// SanitizeReplacement replaces what the policy removes.
	SanitizeReplacement = "[REDACTED]"
	// SanitizeReportName is the report's entry in a sanitized archive (either format).
	SanitizeReportName = officialReportName
)

// maxSanitizedText bounds the text artifacts the policy sanitizes; larger ones, and
// binary ones, are excluded.
const maxSanitizedText = 8 << 20

// SanitizeReport counts what a sanitized export did: the official report's members, and
// ours for touches and frames (which the official policy has no rule for).
type SanitizeReport struct {
	Schema                      string         `json:"schema"`
	PolicyID                    string         `json:"policyId"`
	SanitizedAtUtc              time.Time      `json:"sanitizedAtUtc"`
	StringsScanned              int            `json:"stringsScanned"`
	RedactedStrings             int            `json:"redactedStrings"`
	SensitivePropertiesRedacted int            `json:"sensitivePropertiesRedacted"`
	ScreenshotsRedacted         int            `json:"screenshotsRedacted"`
	ScreenshotsRemoved          int            `json:"screenshotsRemoved"`
	ScreenshotRegionsRedacted   int            `json:"screenshotRegionsRedacted"`
	ArtifactsSanitized          int            `json:"artifactsSanitized"`
	ArtifactsExcluded           int            `json:"artifactsExcluded"`
	RedactionsByRule            map[string]int `json:"redactionsByRule"`
	// ScreenshotsBlackedOut counts frames no visual tree could decide, blacked out whole
	// (also counted in ScreenshotsRedacted, as the official report does).
	ScreenshotsBlackedOut int `json:"screenshotsBlackedOut"`
	// TouchesDropped counts touches that landed on a sensitive node of the nearest tree;
	// TouchesUndecided touches with no tree near enough to tell, dropped too.
	TouchesDropped   int `json:"touchesDropped"`
	TouchesUndecided int `json:"touchesUndecided"`
	// TypedValuesRedacted counts ui.perform_action calls whose typed value was replaced:
	// typed into a sensitive node, or one no recorded tree tells (typed.go).
	TypedValuesRedacted int `json:"typedValuesRedacted"`
}

// protectedNames are id-like keys whose values the policy never changes (normalised).
var protectedNames = setOf("actionid", "agentid", "analysisid", "annotationid", "appid", "capturegroupid", "channelid", "configid",
	"eventid", "frameid", "geometryid", "processsessionid", "id", "runid", "screenshotframeid", "sessionid", "snapshotid",
	"sourcesessionid", "streamid", "taskid", "testid", "visualtreesnapshotid")

// sensitiveNames are properties whose values are replaced whole (normalised): the official
// policy's, and deviceName, which names a person's device as clientName does ("Ann's
// laptop").
var sensitiveNames = setOf("address", "author", "authorization", "birthdate", "clientname", "cookie", "dateofbirth", "email",
	"firstname", "fullname", "lastname", "password", "phone", "secret", "token", "username", "devicename")

// contentNames are the members of a sensitive input that hold what was typed or shown.
var contentNames = setOf("accessibilitylabel", "contentdescription", "label", "placeholder", "text", "title", "value")

// markerNames are the members whose value tells a sensitive input ("login.password").
var markerNames = setOf("automationid", "accessibilityidentifier", "contenttype", "id", "name", "role", "type")

// sensitiveMarkers, found in a marker member's value, make its object a sensitive input.
var sensitiveMarkers = []string{"address", "auth", "birthdate", "cookie", "creditcard", "email", "firstname", "fullname", "lastname",
	"password", "phone", "secure", "secret", "token", "username"}

// secureFlags are boolean members that make an object a sensitive input when true: the
// official ones (Android's isPassword, iOS's secureTextEntry, isSecure) and the plain
// "secure" and "password" some trees use.
var secureFlags = setOf("ispassword", "issecure", "securetextentry", "secure", "password")

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// normalizeName is a property name as the policy compares it: lower-case letters and
// digits only ("Date_Of-Birth" is "dateofbirth").
func normalizeName(s string) string {
	var b strings.Builder
	for _, c := range s {
		if unicode.IsLetter(c) || unicode.IsDigit(c) {
			b.WriteRune(unicode.ToLower(c))
		}
	}
	return b.String()
}

// detector is one rule of the policy: matches of re (where ok accepts them, and where the
// characters around them are not digits when digitBounded) are replaced.
type detector struct {
	id           string
	re           *regexp.Regexp
	digitBounded bool
	ok           func(string) bool
}

// detectors are the official policy's, in its order. RE2 has no look-around: digit
// boundaries are checked by hand (digitBounded).
var detectors = []detector{
	{id: "email", re: regexp.MustCompile("[\\w.!#$%&'*+/=?^`{|}~-]+@[\\w-]+(?:\\.[\\w-]+)+")},
	{id: "phone", re: regexp.MustCompile(`\+\d[\d ()-]{7,}\d|\(\d{2,4}\)[\d ()-]{5,}\d|\d{2,4}(?:[ -]\d{2,4}){2,4}`), digitBounded: true,
		ok: func(s string) bool { n := countDigits(s); return n >= 9 && n <= 15 }},
	{id: "ipAddress", re: regexp.MustCompile(`(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)`), digitBounded: true},
	{id: "creditCard", re: regexp.MustCompile(`(?:\d[ -]*?){13,19}`), digitBounded: true, ok: luhn},
	// The official rule's "authorization: bearer <token>" stops at "bearer", leaving the
	// token: here the value may start with "bearer ", so the token goes too.
	{id: "credential", re: regexp.MustCompile(`(?i)(?:bearer\s+[a-z0-9._~+/-]+=*|(?:api[_-]?key|access[_-]?token|auth(?:orization)?)[\s:=]+(?:bearer\s+)?[^\s,;]+|sk-[a-z0-9_-]{12,})`)},
}

func countDigits(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			n++
		}
	}
	return n
}

// luhn accepts 13–19 digits passing the Luhn check that are not all one digit.
func luhn(s string) bool {
	var digits []int
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			digits = append(digits, int(s[i]-'0'))
		}
	}
	if len(digits) < 13 || len(digits) > 19 {
		return false
	}
	same := true
	for _, d := range digits {
		same = same && d == digits[0]
	}
	if same {
		return false
	}
	sum := 0
	for i := len(digits) - 1; i >= 0; i-- {
		d := digits[i]
		if (len(digits)-1-i)%2 == 1 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

func isDigit(s string, i int) bool { return i >= 0 && i < len(s) && s[i] >= '0' && s[i] <= '9' }

// matches returns the spans of s the detector replaces, left to right, without overlap.
func (d detector) matches(s string) [][2]int {
	var out [][2]int
	for from := 0; from <= len(s); {
		loc := d.re.FindStringIndex(s[from:])
		if loc == nil {
			break
		}
		start, end := from+loc[0], from+loc[1]
		if d.digitBounded && (isDigit(s, start-1) || isDigit(s, end)) {
			from = start + 1 // not a match here (the look-around); one may start further on
			continue
		}
		if d.ok != nil && !d.ok(s[start:end]) {
			from = max(end, start+1) // a match, kept as it is: nothing inside it matches either
			continue
		}
		out = append(out, [2]int{start, end})
		if end == start {
			end++
		}
		from = end
	}
	return out
}

// sanitizer applies the policy to one export, counting into report.
type sanitizer struct {
	report SanitizeReport
	trees  *treeIndex // the recording's visual trees, for frames and touches (sensitive.go)
	nodes  nodeIndex  // which nodes of which snapshots are sensitive, for typed values (typed.go)
}

func newSanitizer(now time.Time) *sanitizer {
	return &sanitizer{report: SanitizeReport{Schema: officialReportSchema, PolicyID: SanitizePolicyID, SanitizedAtUtc: now.UTC(),
		RedactionsByRule: map[string]int{}}}
}

// text sanitises one string: replaced whole when forced (a sensitive property or input),
// else every detector's matches are replaced.
func (s *sanitizer) text(v string, forced bool) string {
	s.report.StringsScanned++
	if v == "" {
		return v
	}
	if forced {
		if v != SanitizeReplacement {
			s.report.RedactionsByRule["sensitiveProperty"]++
			s.report.SensitivePropertiesRedacted++
			s.report.RedactedStrings++
		}
		return SanitizeReplacement
	}
	out := v
	for _, d := range detectors {
		spans := d.matches(out)
		if len(spans) == 0 {
			continue
		}
		var b strings.Builder
		last := 0
		for _, sp := range spans {
			b.WriteString(out[last:sp[0]])
			b.WriteString(SanitizeReplacement)
			last = sp[1]
		}
		b.WriteString(out[last:])
		out = b.String()
		s.report.RedactionsByRule[d.id] += len(spans)
	}
	if out != v {
		s.report.RedactedStrings++
	}
	return out
}

// sensitiveText reports whether any detector matches v.
func sensitiveText(v string) bool {
	for _, d := range detectors {
		if len(d.matches(v)) > 0 {
			return true
		}
	}
	return false
}

// json sanitises a JSON value (valid: one the recorder stored or that passed the strict
// scan); forced says it is inside a sensitive property or input.
func (s *sanitizer) json(v jsontext.Value, forced bool) jsontext.Value {
	switch v.Kind() {
	case '{':
		obj, err := members(v)
		if err != nil {
			return v
		}
		input := sensitiveInput(obj)
		for i := range obj {
			name := normalizeName(obj[i].name)
			if protectedNames[name] {
				continue
			}
			prop := sensitiveNames[name]
			ctx := forced || prop || (input && contentNames[name])
			if obj[i].value.Kind() == '"' {
				t, _ := str(obj[i].value)
				if !ctx {
					if emb, ok := s.embedded(t); ok {
						obj[i].value = quoted(emb)
						continue
					}
				}
				if r := s.text(t, ctx); r != t {
					obj[i].value = quoted(r)
				}
				continue
			}
			obj[i].value = s.json(obj[i].value, ctx || input)
		}
		return obj.encode()
	case '[':
		items := arrayItems(v)
		out := []byte{'['}
		for i, it := range items {
			if i > 0 {
				out = append(out, ',')
			}
			if it.Kind() == '"' {
				t, _ := str(it)
				out = append(out, quoted(s.text(t, forced))...)
				continue
			}
			out = append(out, s.json(it, forced)...)
		}
		return append(out, ']')
	case '"':
		t, _ := str(v)
		return quoted(s.text(t, forced))
	}
	return v
}

// embedded sanitises JSON held in a string ("{…}" or "[…]"), as the official policy does.
func (s *sanitizer) embedded(t string) (string, bool) {
	tr := strings.TrimSpace(t)
	if len(tr) < 2 || (tr[0] != '{' && tr[0] != '[') || (tr[len(tr)-1] != '}' && tr[len(tr)-1] != ']') {
		return "", false
	}
	var v jsontext.Value
	if err := strictValue([]byte(tr), &v); err != nil {
		return "", false
	}
	return string(s.json(v, false)), true
}

// sensitiveInput reports whether an object is a sensitive input: a secure flag set, or a
// marker member (automationId, id, name, role, type, …) whose value names a password, a
// token, an e-mail address… ("iphone" is not a phone).
func sensitiveInput(obj object) bool {
	for _, m := range obj {
		name := normalizeName(m.name)
		if secureFlags[name] && string(m.value) == "true" {
			return true
		}
		if !markerNames[name] || m.value.Kind() != '"' {
			continue
		}
		if t, _ := str(m.value); sensitiveMarker(t) {
			return true
		}
	}
	return false
}

// sensitiveMarker reports whether an id, name, role or type names a sensitive input
// ("login.password", "emailField"); "iphone" is not a phone.
func sensitiveMarker(v string) bool {
	marker := normalizeName(v)
	if marker == "iphone" || marker == "" {
		return false
	}
	for _, k := range sensitiveMarkers {
		if strings.Contains(marker, k) {
			return true
		}
	}
	return false
}

// sensitiveContent reports whether an object holds a sensitive property or text a
// detector matches (the official rule for regions of screenshots).
func sensitiveContent(obj object) bool {
	for _, m := range obj {
		if m.value.Kind() != '"' {
			continue
		}
		t, _ := str(m.value)
		if strings.TrimSpace(t) == "" {
			continue
		}
		if sensitiveNames[normalizeName(m.name)] || sensitiveText(t) {
			return true
		}
	}
	return false
}

// textFile sanitises a text artifact by its extension: JSON structurally, JSON lines line
// by line, anything else as text. ok is false for a file the policy excludes (binary, or
// larger than maxSanitizedText).
func (s *sanitizer) textFile(name string, b []byte) ([]byte, bool) {
	ext := strings.ToLower(name)
	if i := strings.LastIndexByte(ext, '.'); i >= 0 {
		ext = ext[i:]
	} else {
		ext = ""
	}
	switch ext {
	case ".csv", ".htm", ".html", ".json", ".jsonl", ".log", ".md", ".text", ".toml", ".tsv", ".txt", ".xml", ".yaml", ".yml":
	default:
		return nil, false
	}
	if len(b) > maxSanitizedText {
		return nil, false
	}
	switch ext {
	case ".json":
		var v jsontext.Value
		if strictValue(b, &v) == nil {
			return s.json(v, false), true
		}
	case ".jsonl":
		lines := bytes.Split(b, []byte("\n"))
		for i, l := range lines {
			l = bytes.TrimRight(l, "\r")
			var v jsontext.Value
			if len(bytes.TrimSpace(l)) > 0 && strictValue(l, &v) == nil {
				lines[i] = s.json(v, false)
			} else {
				lines[i] = []byte(s.text(string(l), false))
			}
		}
		return bytes.Join(lines, []byte("\n")), true
	}
	return []byte(s.text(string(b), false)), true
}
