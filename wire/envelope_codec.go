package wire

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// envelopeShape lists the envelope's member names for the case-variant check.
var envelopeShape = shapeOf(reflect.TypeFor[Envelope]())

// DecodeEnvelope reads one protocol text message strictly (see [Unmarshal]) in a single
// pass, tolerating what other SDKs write (docs/protocol/compatibility.md#tolerated-variants): replyTo, sessionId and capability
// may be null; an absent or null capability reads as [CapabilityToolExec]; sentAt may
// carry any RFC 3339 offset ("Z", "+00:00", …) and any fraction, or be absent or null.
// type and id are required non-blank strings.
//
// SentAt is returned in UTC; it is zero when the message had none (the reader treats that
// as "now"). Payload is a sub-slice of data, not a copy: data must not be modified while
// the envelope is in use. The payload is checked for syntax, duplicate names and depth but
// not interpreted; use [DecodePayload] and then [Unmarshal] into the payload type, which
// makes the field-name checks. Every failure is a [*DecodeError].
func DecodeEnvelope(data []byte) (Envelope, error) {
	e, _, err := DecodeEnvelopeInto(data, nil, nil)
	return e, err
}

// DecodeEnvelopeInto is DecodeEnvelope that also decodes, in the same pass, the payload of
// a tool.call into *call or that of a tool.result into *result (either may be nil): the
// payload is then read once instead of twice. It does so when the payload is in its
// common form (see fastDecode), not compressed, and comes after the envelope's type, as
// every SDK writes them; decoded reports that it did, with the value [UnmarshalCall] or
// [UnmarshalResultPayload] would give (result.Result is a piece of data, as env.Payload
// is). Otherwise *call and *result are untouched and the payload is left to those, as
// after DecodeEnvelope, whose result this is in every case. FuzzDecodeEnvelope holds the
// two ways against each other.
func DecodeEnvelopeInto(data []byte, call *Call, result *Result) (env Envelope, decoded bool, err error) {
	return decodeEnvelope(data, call, result, nil, true)
}

// DecodeResponseInto is DecodeEnvelopeInto(data, nil, result) for a host routing a tool
// response, without the strings it does not need: it reads and checks every member as
// DecodeEnvelope does, and answers and fails as it does, but leaves env.ID, env.SessionID
// and env.ReplyTo empty and returns replyTo instead — a piece of data (a copy when it
// carries escapes; nil when absent or null). Reading a response then allocates nothing:
// the other strings it keeps (type, capability) are the protocol's constants. Like
// Payload, replyTo must not outlive changes to data. FuzzDecodeEnvelope holds it against
// DecodeEnvelopeInto.
func DecodeResponseInto(data []byte, result *Result) (env Envelope, replyTo []byte, decoded bool, err error) {
	var lean leanStrings
	env, decoded, err = decodeEnvelope(data, nil, result, &lean, true)
	if err != nil {
		return Envelope{}, nil, false, err
	}
	return env, lean.replyTo, decoded, nil
}

// leanStrings is what DecodeResponseInto keeps of the envelope's id and replyTo instead of
// strings. The scanner holds it by value (scanner.leanOut) and copies it out: a pointer
// kept in the pooled scanner would move the caller's value to the heap.
type leanStrings struct {
	replyTo []byte
	hasID   bool // a non-blank id was read
}

// decodeEnvelope is DecodeEnvelopeInto, and DecodeResponseInto when lean is set. It
// reads the message in its canonical form first (canonicalEnvelope), when canonical is set,
// and with the general strict scan otherwise: the two give the same answer, and
// FuzzCanonicalEnvelope calls it both ways to hold them to that.
func decodeEnvelope(data []byte, call *Call, result *Result, lean *leanStrings, canonical bool) (env Envelope, decoded bool, err error) {
	if len(data) > DefaultMaxMessageBytes {
		return Envelope{}, false, tooLarge("message", len(data))
	}
	s := getScanner(data)
	defer s.put()
	s.lean = lean != nil
	s.fuseCall, s.fuseResult = call != nil, result != nil
	if !canonical || !s.canonicalEnvelope() {
		if err := s.scanEnvelope(); err != nil {
			return Envelope{}, false, err
		}
	}
	e := s.env           // built in the pooled scanner, which keeps it off the heap
	if len(s.strs) > 0 { // one allocation for all the envelope's strings
		all := string(s.strs)
		for _, d := range s.deferred {
			*e.stringField(d.field) = all[d.start:d.end]
		}
	}
	if e.Capability == "" {
		e.Capability = CapabilityToolExec // absent or null means the only capability
	}
	switch {
	case strings.TrimSpace(e.Type) == "":
		return Envelope{}, false, decodeError("/type", -1, "envelope has no type")
	case lean == nil && strings.TrimSpace(e.ID) == "", lean != nil && !s.leanOut.hasID:
		return Envelope{}, false, decodeError("/id", -1, "envelope has no id")
	}
	switch {
	case !s.fused:
	case e.Type == TypeCall:
		*call = s.call
	default:
		*result = s.result
	}
	if lean != nil {
		*lean = s.leanOut
	}
	return e, s.fused, nil
}

// scanEnvelope reads the whole message, an envelope, with the general strict scan into
// s.env (and, fused, s.call or s.result).
func (s *scanner) scanEnvelope() error {
	if s.js.Peek() != '{' {
		if err := s.js.Skip(); err != nil {
			return asDecodeError(err) // not JSON at all
		}
		return decodeError("", 0, "envelope is not a JSON object")
	}
	if err := s.members(envelopeShape, (*scanner).readEnvelope); err != nil {
		return asDecodeError(err)
	}
	return s.end()
}

// readEnvelope reads the envelope member f into s.env. Unknown members (other SDKs' fields)
// were checked and skipped by members.
func (s *scanner) readEnvelope(f *field) error {
	e := &s.env
	switch string(f.name) {
	case "type":
		return s.envelopeString(&e.Type, fieldType)
	case "id":
		return s.envelopeString(&e.ID, fieldID)
	case "replyTo":
		return s.envelopeString(&e.ReplyTo, fieldReplyTo)
	case "sessionId":
		return s.envelopeString(&e.SessionID, fieldSessionID)
	case "capability":
		return s.envelopeString(&e.Capability, fieldCapability)
	case "sentAt":
		var err error
		e.SentAt, err = s.envelopeTime()
		return err
	}
	v, err := s.payload()
	e.Payload = jsontext.Value(v)
	return err
}

// payload reads the envelope's payload. Asked to (DecodeEnvelopeInto), it decodes a
// tool.call or tool.result payload on the way; when that gives up (not the common form,
// not valid, compressed), it goes back and reads the payload as any value, as if it had
// not tried, so that DecodeEnvelope's answer does not depend on it.
func (s *scanner) payload() ([]byte, error) {
	var sh *shape
	var read func(*scanner, *field) error
	switch {
	case s.fuseCall && s.env.Type == TypeCall:
		sh, read = callShape, (*scanner).readCall
	case s.fuseResult && s.env.Type == TypeResult:
		sh, read = resultShape, (*scanner).readResult
		s.alias = true // the result is a piece of the payload, as in UnmarshalResultPayload
	}
	if sh != nil && s.js.Peek() == '{' {
		start, m := s.js.Pos(), s.js.Mark()
		err := s.members(sh, read)
		s.alias = false
		if err == nil {
			v := s.data[start:s.js.Pos()]
			if w, err := readWrapper(v); err == nil && w == nil {
				s.fused = true
				return v, nil
			}
		}
		s.js.Rewind(m)
		s.call, s.result = Call{}, Result{}
	}
	s.alias = false
	return s.js.Value()
}

// envelopeString reads a string member into *dst; null reads as "". The protocol's
// constant values are shared rather than allocated; other values are collected in s.strs
// and become strings at the end of DecodeEnvelope, all in one allocation.
func (s *scanner) envelopeString(dst *string, field envelopeField) error {
	at := s.js.Pos()
	if s.js.Peek() == 'n' {
		return s.js.Skip() // null, or an error
	}
	if s.js.Peek() != '"' {
		if err := s.js.Skip(); err != nil {
			return err
		}
		return decodeError("", int64(at), "envelope field "+field.String()+" must be a string")
	}
	raw, escaped, err := s.js.String()
	if err != nil {
		return err
	}
	s.keepString(dst, field, unquote(raw, escaped))
	return nil
}

// keepString puts b, the unquoted value of the envelope's string member field, into *dst:
// the protocol's constant values are shared rather than allocated, other values are
// collected in s.strs for DecodeEnvelope's single allocation. DecodeResponseInto's id,
// sessionId and replyTo go to s.leanOut instead.
func (s *scanner) keepString(dst *string, field envelopeField, b []byte) {
	if s.lean { // DecodeResponseInto: checked, not kept as strings
		l := &s.leanOut
		switch field {
		case fieldID:
			l.hasID = len(bytes.TrimSpace(b)) > 0
			return
		case fieldSessionID:
			return
		case fieldReplyTo:
			l.replyTo = b // a piece of data, or unquote's own copy
			return
		}
	}
	if c, ok := protocolConstant(b); ok {
		*dst = c
		return
	}
	start := len(s.strs)
	s.strs = append(s.strs, b...)
	s.deferred = append(s.deferred, deferredString{field: field, start: start, end: len(s.strs)})
}

// protocolConstant returns the protocol's constant string equal to b, if b is one of the
// message types or the capability.
func protocolConstant(b []byte) (string, bool) {
	switch string(b) {
	case TypeQuery:
		return TypeQuery, true
	case TypeCall:
		return TypeCall, true
	case TypeBatch:
		return TypeBatch, true
	case TypeCatalog:
		return TypeCatalog, true
	case TypeResult:
		return TypeResult, true
	case TypeBatchResult:
		return TypeBatchResult, true
	case TypeError:
		return TypeError, true
	case CapabilityToolExec:
		return CapabilityToolExec, true
	}
	return "", false
}

// deferredString is a string member of an envelope waiting for DecodeEnvelope's single
// allocation: s.strs[start:end] goes to the field. The field is named, not pointed to:
// a pointer kept in the pooled scanner would move the envelope to the heap.
type deferredString struct {
	field      envelopeField
	start, end int
}

// envelopeField names an envelope's string members.
type envelopeField uint8

const (
	fieldType envelopeField = iota
	fieldID
	fieldReplyTo
	fieldSessionID
	fieldCapability
)

func (f envelopeField) String() string {
	return [...]string{"type", "id", "replyTo", "sessionId", "capability"}[f]
}

// stringField returns the member f of e.
func (e *Envelope) stringField(f envelopeField) *string {
	switch f {
	case fieldType:
		return &e.Type
	case fieldID:
		return &e.ID
	case fieldReplyTo:
		return &e.ReplyTo
	case fieldSessionID:
		return &e.SessionID
	}
	return &e.Capability
}

// envelopeTime reads sentAt: an RFC 3339 string, or null.
func (s *scanner) envelopeTime() (time.Time, error) {
	at := s.js.Pos()
	raw, err := s.js.Value()
	if err != nil {
		return time.Time{}, err
	}
	if string(raw) == "null" {
		return time.Time{}, nil
	}
	if raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		if t, ok := parseTimestamp(raw[1 : len(raw)-1]); ok {
			return t, nil
		}
	}
	return time.Time{}, decodeError("", int64(at), "envelope field sentAt must be an RFC 3339 timestamp, got "+string(raw[:min(len(raw), 64)]))
}

// AppendEnvelope appends e as one compact JSON message, members in the order type, id,
// replyTo, sessionId, sentAt, capability, payload; empty optional members are left out.
// SentAt is written in UTC with a "Z" suffix and the shortest fraction. type and id must
// be non-blank.
//
// The payload is appended as is, unchecked: it must be one valid JSON value, the output
// of [Marshal] or [EncodePayload] (whose input Marshal or a strict decoder produced).
// Both check what they write, so checking it again here would parse every outgoing
// payload a second time for nothing.
func AppendEnvelope(dst []byte, e *Envelope) ([]byte, error) {
	switch {
	case strings.TrimSpace(e.Type) == "":
		return dst, errors.New("wire: envelope has no type")
	case strings.TrimSpace(e.ID) == "":
		return dst, errors.New("wire: envelope has no id")
	}
	return appendEnvelope(dst, e, e.ID, "")
}

// AppendResponse is AppendEnvelope of the response to request e.ReplyTo, whose id is
// ResponseID(e.ReplyTo) whatever e.ID says: the id is written, not made into a string
// first. e.ReplyTo must be non-blank.
func AppendResponse(dst []byte, e *Envelope) ([]byte, error) {
	switch {
	case strings.TrimSpace(e.Type) == "":
		return dst, errors.New("wire: envelope has no type")
	case strings.TrimSpace(e.ReplyTo) == "":
		return dst, errors.New("wire: response has no replyTo")
	}
	return appendEnvelope(dst, e, e.ReplyTo, responseSuffix)
}

// appendEnvelope is AppendEnvelope with the id id+idSuffix; the caller has checked both.
func appendEnvelope(dst []byte, e *Envelope, id, idSuffix string) ([]byte, error) {
	orig := len(dst)
	var err error
	dst = append(dst, `{"type":`...)
	dst, err = appendString(dst, e.Type, err)
	dst = append(dst, `,"id":`...)
	if plainString(id) && plainString(idSuffix) {
		dst = append(dst, '"')
		dst = append(dst, id...)
		dst = append(dst, idSuffix...)
		dst = append(dst, '"')
	} else {
		dst, err = appendString(dst, id+idSuffix, err)
	}
	if e.ReplyTo != "" {
		dst = append(dst, `,"replyTo":`...)
		dst, err = appendString(dst, e.ReplyTo, err)
	}
	if e.SessionID != "" {
		dst = append(dst, `,"sessionId":`...)
		dst, err = appendString(dst, e.SessionID, err)
	}
	if !e.SentAt.IsZero() {
		dst = append(dst, `,"sentAt":"`...)
		dst = appendTimestamp(dst, e.SentAt)
		dst = append(dst, '"')
	}
	if e.Capability != "" {
		dst = append(dst, `,"capability":`...)
		dst, err = appendString(dst, e.Capability, err)
	}
	if len(e.Payload) > 0 {
		dst = append(dst, `,"payload":`...)
		dst = append(dst, e.Payload...)
	}
	dst = append(dst, '}')
	if err != nil {
		return dst[:orig], err
	}
	return dst, nil
}

// appendString appends s as a JSON string. Plain ASCII is copied directly; anything else
// goes through jsontext, which refuses invalid UTF-8. A previous error is kept.
func appendString(dst []byte, s string, err error) ([]byte, error) {
	if !plainString(s) {
		out, qerr := jsontext.AppendQuote(dst, s)
		if err == nil {
			err = qerr
		}
		return out, err
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"'), err
}

// plainString reports whether s is ASCII that a JSON string holds as is.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// appendTimestamp appends t in UTC as t.UTC().AppendFormat(dst, time.RFC3339Nano) does.
// Every message carries its sentAt, and formatting one cost a tenth of writing a small
// envelope: the date and time of day are formatted once per second and kept (the messages
// of a busy host or app are sent in the same second by the thousand), the fraction
// written by hand. FuzzAppendTimestamp holds it to AppendFormat's bytes.
func appendTimestamp(dst []byte, t time.Time) []byte {
	t = t.UTC()
	sec := t.Unix()
	f := lastSecond.Load()
	if f == nil || f.unix != sec {
		if y := t.Year(); y < 0 || y > 9999 { // AppendFormat's own spelling of such years
			return t.AppendFormat(dst, time.RFC3339Nano)
		}
		f = &formattedSecond{unix: sec}
		t.AppendFormat(f.text[:0], "2006-01-02T15:04:05")
		lastSecond.Store(f)
	}
	dst = append(dst, f.text[:]...)
	if ns := t.Nanosecond(); ns != 0 { // the shortest fraction: trailing zeros dropped
		var frac [10]byte
		frac[0] = '.'
		for i := 9; i > 0; i-- {
			frac[i] = byte('0' + ns%10)
			ns /= 10
		}
		n := len(frac)
		for frac[n-1] == '0' {
			n--
		}
		dst = append(dst, frac[:n]...)
	}
	return append(dst, 'Z')
}

// formattedSecond is a second's date and time of day as RFC 3339 writes them.
type formattedSecond struct {
	unix int64
	text [len("2006-01-02T15:04:05")]byte
}

// lastSecond is the second appendTimestamp formatted last.
var lastSecond atomic.Pointer[formattedSecond]

// NewResponse builds the response envelope to req (docs/protocol/messages.md#correlation): id "<req.ID>.response",
// replyTo req.ID, req's sessionId echoed, capability tool.exec, sentAt now in UTC.
func NewResponse(req *Envelope, typ string, payload jsontext.Value, now time.Time) *Envelope {
	return &Envelope{
		Type:       typ,
		ID:         ResponseID(req.ID),
		ReplyTo:    req.ID,
		SessionID:  req.SessionID,
		SentAt:     now.UTC(),
		Capability: CapabilityToolExec,
		Payload:    payload,
	}
}

// ErrorEnvelopeID returns a fresh id for a tool.error answering a request whose own id
// could not be read: "tool.error." followed by 32 random lower-case hex digits.
func ErrorEnvelopeID() string {
	return "tool.error." + randomHex()
}

// randomHex returns 16 random bytes as 32 lower-case hex digits.
func randomHex() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (it aborts the program instead)
	return hex.EncodeToString(b[:])
}

// parseTimestamp parses an RFC 3339 date-time ("2026-08-25T00:00:00.050+02:00") into UTC:
// T or t between date and time, any number of fraction digits (nanoseconds kept), offset
// Z, z or ±hh:mm. It does not allocate.
func parseTimestamp(b []byte) (time.Time, bool) {
	if len(b) < len("2006-01-02T15:04:05Z") ||
		b[4] != '-' || b[7] != '-' || (b[10] != 'T' && b[10] != 't') || b[13] != ':' || b[16] != ':' {
		return time.Time{}, false
	}
	year, ok1 := digits(b[0:4])
	month, ok2 := digits(b[5:7])
	day, ok3 := digits(b[8:10])
	hour, ok4 := digits(b[11:13])
	minute, ok5 := digits(b[14:16])
	sec, ok6 := digits(b[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) ||
		month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	rest := b[19:]
	nsec := 0
	if rest[0] == '.' {
		n := 1
		for n < len(rest) && '0' <= rest[n] && rest[n] <= '9' {
			if n <= 9 {
				nsec = nsec*10 + int(rest[n]-'0')
			}
			n++
		}
		if n == 1 {
			return time.Time{}, false
		}
		for i := n; i <= 9; i++ { // scale a short fraction to nanoseconds
			nsec *= 10
		}
		rest = rest[n:]
	}
	var offset int
	switch {
	case len(rest) == 1 && (rest[0] == 'Z' || rest[0] == 'z'):
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, ok1 := digits(rest[1:3])
		om, ok2 := digits(rest[4:6])
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return time.Time{}, false
		}
		offset = (oh*60 + om) * 60
		if rest[0] == '-' {
			offset = -offset
		}
	default:
		return time.Time{}, false
	}
	if day > daysIn(month, year) { // February 30th and friends
		return time.Time{}, false
	}
	unix := (daysFromCivil(year, month, day)*24+int64(hour))*3600 + int64(minute)*60 + int64(sec) - int64(offset)
	if unix < minTimestamp || unix > maxTimestamp { // keep what we accept writable as RFC 3339
		return time.Time{}, false
	}
	t := time.Unix(unix, int64(nsec)).UTC()
	return t, true
}

// digits parses a fixed-width run of ASCII digits.
// The Unix times of 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z.
const (
	minTimestamp = -62135596800
	maxTimestamp = 253402300799
)

// daysIn returns the number of days of month in year (proleptic Gregorian).
func daysIn(month, year int) int {
	if month == 2 {
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	}
	return 30 + (month+month/8)%2
}

// daysFromCivil returns the number of days from 1970-01-01 to the given date (proleptic
// Gregorian), without time.Date's normalisation work.
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

func digits(b []byte) (int, bool) {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
