package hostile

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/connect"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/transport/transporttest"
	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/session"
)

// The SDK under attack: a malicious host sends hostile tool requests and stray messages to
// a real app runtime connected with app/connect (direct mode) over a loopback WebSocket.

// The suite waits for events, never against a clock: on a busy machine an answer takes
// what it takes (a million-word query, a huge include list), and go test's -timeout stops
// a test that hangs, with every goroutine's stack. hostWait is the test host's own wait for
// an app's answer: longer than any test runs.
const hostWait = 10 * time.Minute

type nonceIn struct {
	Nonce string `json:"nonce"`
}

type nonceOut struct {
	Nonce string `json:"nonce"`
}

type none struct{}

// hostileApp returns an app with a read tool that echoes a nonce and a critical tool that
// the default guard hides and refuses.
func hostileApp(t *testing.T) *app.App {
	t.Helper()
	a := app.New(app.Options{})
	def := func(id string, p wire.Policy) catalog.Definition {
		return catalog.Definition{ID: id, Name: id, Description: "Hostile-input fixture " + id + ".", Category: "hostile", Policy: p}
	}
	if err := app.Register(a, def("h.echo", wire.PolicyRead), func(ctx context.Context, c *app.Call, in nonceIn) (nonceOut, error) {
		return nonceOut(in), nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := app.Register(a, def("h.wipe", wire.PolicyCritical), func(ctx context.Context, c *app.Call, in none) (none, error) {
		t.Error("the critical tool ran")
		return none{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	return a
}

// evilHost is the host end of one app connection: it acknowledges the app's control
// requests, as a host must for the session to open, and queues everything else.
type evilHost struct {
	conn transport.Conn
	in   chan []byte // text messages other than control requests
	bin  chan []byte // binary messages
	sess *connect.Session
	seq  int
}

// connectApp connects a to a new evil host and returns the host's end.
func connectApp(t *testing.T, a *app.App) *evilHost {
	t.Helper()
	conns := make(chan *evilHost, 1)
	url := transporttest.NewServer(t, transport.AcceptOptions{}, func(c transport.Conn) {
		h := &evilHost{conn: c, in: make(chan []byte, 256), bin: make(chan []byte, 256)}
		conns <- h
		for {
			typ, data, err := c.Read(context.Background())
			if err != nil {
				return
			}
			if typ == transport.MessageBinary {
				h.bin <- data
				continue
			}
			if req, err := session.ParseControl(data); err == nil && req.Type == session.TypeControlRequest {
				b, _ := req.Reply(true, "ok", nil).Marshal()
				c.Write(context.Background(), transport.MessageText, b)
				continue
			}
			h.in <- data
		}
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	sess, err := connect.Dial(ctx, a, connect.Direct{URL: url, Token: "evil-host-token"}, connect.Options{AppID: "dev.ansight.hostile"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	h := <-conns
	h.sess = sess
	return h
}

func (h *evilHost) send(t *testing.T, typ transport.MessageType, data []byte) {
	t.Helper()
	if err := h.conn.Write(context.Background(), typ, data); err != nil {
		t.Fatalf("write: %v", err)
	}
}

// next returns the next queued text message.
func (h *evilHost) next(t *testing.T) []byte {
	t.Helper()
	select {
	case m := <-h.in:
		return m
	case <-t.Context().Done():
		t.Fatal("no answer from the app")
		return nil
	}
}

// probe sends a normal call and returns the messages that arrived before its answer,
// after checking the answer: the app is alive and still answers correctly.
func (h *evilHost) probe(t *testing.T) [][]byte {
	t.Helper()
	h.seq++
	id := fmt.Sprintf("probe-%d", h.seq)
	h.send(t, transport.MessageText, fmt.Appendf(nil, `{"type":"tool.call","id":%q,"payload":{"toolId":"h.echo","arguments":{"nonce":%q}}}`, id, id))
	var before [][]byte
	for {
		m := h.next(t)
		env, err := wire.DecodeEnvelope(m)
		if err != nil || env.ReplyTo != id {
			before = append(before, m)
			continue
		}
		var res wire.Result
		if env.Type != wire.TypeResult || wire.Unmarshal(env.Payload, &res) != nil || !bytes.Contains(res.Result, []byte(id)) {
			t.Fatalf("probe %s answered with %s", id, m)
		}
		return before
	}
}

// answer waits for the answer to request id: a response with that replyTo, or a tool.error
// without replyTo (the id could not be read). Anything else fails the test.
func (h *evilHost) answer(t *testing.T, id string) []byte {
	t.Helper()
	m := h.next(t)
	env, err := wire.DecodeEnvelope(m)
	if err != nil || !(env.ReplyTo == id || env.ReplyTo == "" && env.Type == wire.TypeError) {
		t.Fatalf("waiting for the answer to %s, the app sent %.300s", id, m)
	}
	return m
}

// expectation is what the app must do with a hostile message.
type expectation struct {
	// code is the tool.error code of the single answer; "" means the message is dropped
	// unanswered, unless answer is set.
	code wire.Code
	// answer is the response type of a message that is legitimately answered.
	answer string
	// item is the error code of the first item of a tool.batch.result answer.
	item wire.Code
}

func dropped() expectation                { return expectation{} }
func rejected(code wire.Code) expectation { return expectation{code: code} }
func answered(typ string) expectation     { return expectation{answer: typ} }
func itemError(code wire.Code) expectation {
	return expectation{answer: wire.TypeBatchResult, item: code}
}

// check compares the messages that came back for a hostile message with want.
func (want expectation) check(t *testing.T, got [][]byte) {
	t.Helper()
	if want.code == "" && want.answer == "" {
		if len(got) != 0 {
			t.Fatalf("want the message dropped, the app answered %q", got)
		}
		return
	}
	if len(got) != 1 {
		t.Fatalf("want one answer, got %d: %q", len(got), got)
	}
	env, err := wire.DecodeEnvelope(got[0])
	if err != nil {
		t.Fatalf("the app's answer is not a valid envelope: %v: %s", err, got[0])
	}
	if want.code != "" {
		var e wire.Error
		if env.Type != wire.TypeError || wire.Unmarshal(env.Payload, &e) != nil || e.Code != want.code || e.Message == "" {
			t.Fatalf("want tool.error %s with a message, got %s", want.code, got[0])
		}
		return
	}
	if env.Type != want.answer {
		t.Fatalf("want %s, got %s", want.answer, got[0])
	}
	if want.item != "" {
		var br wire.BatchResult
		if err := wire.Unmarshal(env.Payload, &br); err != nil || len(br.Results) == 0 || br.Results[0].Error == nil || br.Results[0].Error.Code != want.item {
			t.Fatalf("want a batch whose first item failed with %s, got %s", want.item, got[0])
		}
	}
}

// Message builders. Every hostile request carries an id so that an answer can be
// correlated when the app can read it.

func req(typ, payload string) string {
	return `{"type":"` + typ + `","id":"hostile","sentAt":"2026-01-02T03:04:05Z","payload":` + payload + `}`
}
func callMsg(payload string) string  { return req(wire.TypeCall, payload) }
func queryMsg(payload string) string { return req(wire.TypeQuery, payload) }
func batchMsg(payload string) string { return req(wire.TypeBatch, payload) }

// echoCall is a call of h.echo with raw arguments.
func echoCall(args string) string { return callMsg(`{"toolId":"h.echo","arguments":` + args + `}`) }

// echoAfter is a call of h.echo with a raw after.
func echoAfter(after string) string {
	return callMsg(`{"toolId":"h.echo","arguments":{"nonce":"x"},"after":` + after + `}`)
}

func nested(depth int, leaf string) string {
	return strings.Repeat("[", depth) + leaf + strings.Repeat("]", depth)
}

// bomb is the gzip-base64-json wrapper of n MiB of zero bytes (far above any inflation cap
// once inflated, small on the wire), declaring an original size of declared bytes. The
// gzip stream is one compressed MiB repeated as n members, which readers concatenate.
func bomb(n, declared int) string {
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(make([]byte, 1<<20))
	zw.Close()
	data := bytes.Repeat(member.Bytes(), n)
	return fmt.Sprintf(`{"$ansightEncoding":"gzip-base64-json","contentType":"application/json","originalByteCount":%d,"compressedByteCount":%d,"data":%q}`,
		declared, len(data), base64.StdEncoding.EncodeToString(data))
}

var (
	invalidRequest = wire.CodeProtocolInvalidRequest
	payloadInvalid = wire.CodeCallPayloadInvalid
)

// appCases are the hostile messages to the SDK. Text unless binary is set.
var appCases = []struct {
	name   string
	msg    string
	binary bool
	want   expectation
}{
	// Envelope smuggling.
	{"EnvelopeDuplicateKey", `{"type":"tool.call","id":"hostile","id":"other","payload":{"toolId":"h.echo","arguments":{"nonce":"x"}}}`, false, rejected(invalidRequest)},
	{"EnvelopeDuplicateType", `{"type":"tool.call","type":"tool.query","id":"hostile","payload":{}}`, false, rejected(invalidRequest)},
	{"EnvelopeCaseVariantKey", `{"type":"tool.call","id":"hostile","Payload":{"toolId":"h.wipe"},"payload":{"toolId":"h.echo","arguments":{"nonce":"x"}}}`, false, rejected(invalidRequest)},
	// A NUL-suffixed name is another (unknown, ignored) member, never "payload" itself.
	{"EnvelopeNULSuffixedKey", `{"type":"tool.call","id":"hostile","payload\u0000":{"toolId":"h.wipe"},"payload":{"toolId":"h.echo","arguments":{"nonce":"x"}}}`, false, answered(wire.TypeResult)},
	{"EnvelopeTrailingData", echoCall(`{"nonce":"x"}`) + `{"type":"tool.call"}`, false, rejected(invalidRequest)},
	{"EnvelopeIDNumber", `{"type":"tool.call","id":5,"payload":{"toolId":"h.echo","arguments":{"nonce":"x"}}}`, false, rejected(invalidRequest)},
	{"EnvelopeIDBlank", `{"type":"tool.call","id":"  ","payload":{"toolId":"h.echo","arguments":{"nonce":"x"}}}`, false, rejected(invalidRequest)},
	{"EnvelopeSessionIDNumber", `{"type":"tool.call","id":"hostile","sessionId":7,"payload":{"toolId":"h.echo","arguments":{"nonce":"x"}}}`, false, rejected(invalidRequest)},
	{"EnvelopeSentAtNotATime", `{"type":"tool.call","id":"hostile","sentAt":"yesterday","payload":{"toolId":"h.echo","arguments":{"nonce":"x"}}}`, false, rejected(invalidRequest)},
	{"EnvelopeDeepNesting", req(wire.TypeCall, `{"toolId":"h.echo","arguments":{"nonce":"x"},"x":`+nested(100000, "0")+`}`), false, rejected(invalidRequest)},
	{"DecompressionBombDeclared", req(wire.TypeCall, bomb(80, 80<<20)), false, rejected(invalidRequest)},
	{"DecompressionBombUnderstated", req(wire.TypeCall, bomb(80, 1000)), false, rejected(invalidRequest)},
	{"EnvelopeWrapperBadBase64", req(wire.TypeCall, `{"$ansightEncoding":"gzip-base64-json","contentType":"application/json","originalByteCount":10,"compressedByteCount":10,"data":"!!!not base64!!!"}`), false, rejected(invalidRequest)},
	{"EnvelopeForgedReplyTo", `{"type":"tool.call","id":"hostile","replyTo":"probe-1","payload":{"toolId":"h.echo","arguments":{"nonce":"x"}}}`, false, answered(wire.TypeResult)},
	{"EnvelopeOtherCapability", `{"type":"tool.call","id":"hostile","capability":"shell.exec","payload":{"toolId":"h.wipe"}}`, false, dropped()},
	{"EnvelopeUnknownType", `{"type":"tool.execute","id":"hostile","payload":{"toolId":"h.wipe"}}`, false, dropped()},
	{"NotJSON", `hello, app`, false, dropped()},
	{"TopLevelArray", `[{"type":"tool.call","id":"hostile","payload":{"toolId":"h.wipe"}}]`, false, dropped()},
	{"EmptyMessage", ``, false, dropped()},

	// Stray responses and forgeries.
	{"ResultNeverRequested", `{"type":"tool.result","id":"x.response","replyTo":"never-sent","payload":{"toolId":"h.echo","success":true,"result":{}}}`, false, dropped()},
	{"ErrorNeverRequested", `{"type":"tool.error","id":"x.response","replyTo":"never-sent","payload":{"code":"tool_not_found","message":"no","retryable":false}}`, false, dropped()},
	{"ControlResponseNeverRequested", `{"type":"CONTROL_RESP","id":"c1","replyTo":"never-sent","action":"session.open","success":true,"message":"ok","payload":null}`, false, dropped()},
	{"ControlRequestToApp", `{"type":"CONTROL_REQ","id":"c2","action":"session.complete","payload":{}}`, false, dropped()},
	{"BinaryGarbage", "\x00\x01garbage\xff", true, dropped()},
	{"ASFTFrameToApp", string(asftFrame(wire.Frame{Type: wire.FrameChunk, TransferID: strings.Repeat("ab", 16), Payload: []byte("x")})), true, dropped()},

	// tool.call payloads: wrong types in every field, values out of range.
	{"CallPayloadNotObject", callMsg(`"h.echo"`), false, rejected(payloadInvalid)},
	{"CallPayloadNull", callMsg(`null`), false, rejected(payloadInvalid)},
	{"CallToolIDMissing", callMsg(`{"arguments":{"nonce":"x"}}`), false, rejected(wire.CodeCallMissingID)},
	{"CallToolIDNumber", callMsg(`{"toolId":42}`), false, rejected(payloadInvalid)},
	{"CallToolIDCaseVariant", callMsg(`{"toolId":"h.echo","ToolId":"h.wipe","arguments":{"nonce":"x"}}`), false, rejected(payloadInvalid)},
	{"CallDuplicateToolID", callMsg(`{"toolId":"h.echo","toolId":"h.wipe","arguments":{"nonce":"x"}}`), false, rejected(invalidRequest)},
	{"CallArgumentsString", echoCall(`"nonce=x"`), false, rejected(wire.CodeArgumentsInvalid)},
	{"CallArgumentsArray", echoCall(`["x"]`), false, rejected(wire.CodeArgumentsInvalid)},
	{"CallArgumentsDuplicateKey", echoCall(`{"nonce":"x","nonce":"y"}`), false, rejected(invalidRequest)},
	{"CallArgumentsCaseVariantKey", echoCall(`{"nonce":"x","Nonce":"y"}`), false, rejected(wire.CodeArgumentsSchemaInvalid)},
	{"CallArgumentsWrongType", echoCall(`{"nonce":12}`), false, rejected(wire.CodeArgumentsSchemaInvalid)},
	{"CallArgumentsNumberOutOfRange", echoCall(`{"nonce":1e400}`), false, rejected(wire.CodeArgumentsSchemaInvalid)},
	{"CallArgumentsDeepNesting", echoCall(`{"nonce":"x","extra":` + nested(300, "1") + `}`), false, rejected(invalidRequest)},
	{"CallArgumentsHugeString", echoCall(`{"nonce":"` + strings.Repeat("A", 1<<20) + `"}`), false, answered(wire.TypeResult)},
	{"CallCallIDNumber", callMsg(`{"toolId":"h.echo","arguments":{"nonce":"x"},"callId":9}`), false, rejected(payloadInvalid)},
	{"CallUnknownTool", callMsg(`{"toolId":"h.nope","arguments":{}}`), false, rejected(wire.CodeNotFound)},
	{"CallToolAboveGuard", callMsg(`{"toolId":"h.wipe","arguments":{}}`), false, rejected(wire.CodeExecutionDenied)},
	{"AfterNotObject", echoAfter(`"visualTree"`), false, rejected(payloadInvalid)},
	{"AfterIncludeNotArray", echoAfter(`{"include":"visualTree"}`), false, rejected(payloadInvalid)},
	{"AfterIncludeNumber", echoAfter(`{"include":[1]}`), false, rejected(payloadInvalid)},
	{"AfterIncludeUnknown", echoAfter(`{"include":["keystrokes"]}`), false, rejected(payloadInvalid)},
	{"AfterDelayString", echoAfter(`{"delayMilliseconds":"5"}`), false, rejected(payloadInvalid)},
	{"AfterDelayNegative", echoAfter(`{"delayMilliseconds":-1}`), false, rejected(payloadInvalid)},
	{"AfterDelayTooLong", echoAfter(`{"delayMilliseconds":2001}`), false, rejected(payloadInvalid)},
	{"AfterDelayFraction", echoAfter(`{"delayMilliseconds":1.5}`), false, rejected(payloadInvalid)},
	{"AfterDelayOutOfRange", echoAfter(`{"delayMilliseconds":1e400}`), false, rejected(payloadInvalid)},
	{"AfterTreeArgumentsString", echoAfter(`{"visualTreeArguments":"all"}`), false, rejected(payloadInvalid)},
	// The contract names two evidences: a longer include list is refused before it is held
	// in memory, even when it arrives compressed (6 million names, 42 MB inflated).
	{"AfterIncludeHuge", req(wire.TypeCall, wrapped(`{"toolId":"h.echo","arguments":{"nonce":"x"},"after":{"include":[`, `"tree",`, 6000000, `"tree"]}}`)), false, rejected(payloadInvalid)},

	// tool.query payloads are read leniently (docs/protocol/catalog.md#query: a non-object
	// payload is {}, an unknown detail is full, members of the wrong type are ignored):
	// answered with the catalog. Duplicate names are still refused, like anywhere in a
	// message.
	{"QueryPayloadNotObject", queryMsg(`[]`), false, answered(wire.TypeCatalog)},
	{"QueryDetailNumber", queryMsg(`{"detail":5}`), false, answered(wire.TypeCatalog)},
	{"QueryDetailUnknown", queryMsg(`{"detail":"everything"}`), false, answered(wire.TypeCatalog)},
	{"QueryIDsString", queryMsg(`{"ids":"h.echo"}`), false, answered(wire.TypeCatalog)},
	{"QueryIDsNumbers", queryMsg(`{"ids":[1,2]}`), false, answered(wire.TypeCatalog)},
	{"QueryLimitString", queryMsg(`{"limit":"5"}`), false, answered(wire.TypeCatalog)},
	{"QueryLimitOutOfRange", queryMsg(`{"limit":1e400}`), false, answered(wire.TypeCatalog)},
	{"QueryExecutableOnlyString", queryMsg(`{"executableOnly":"yes"}`), false, answered(wire.TypeCatalog)},
	{"QueryIfRevisionNumber", queryMsg(`{"ifRevision":3}`), false, answered(wire.TypeCatalog)},
	{"QueryDuplicateKey", queryMsg(`{"detail":"index","detail":"full"}`), false, rejected(invalidRequest)},
	// Work and memory stay linear in the request: long id and word lists are answered.
	// The word list is a million words so that quadratic matching cannot hide under go
	// test's -timeout: linear, it is answered in about a second under -race; quadratic
	// (before 532ea03), 100,000 words took 15 s, so a million would take about 25 minutes.
	{"QueryManyDistinctIDs", queryMsg(`{"ids":[` + distinct(150000, `"h.echo%d"`, ",") + `]}`), false, answered(wire.TypeCatalog)},
	{"QueryManyDistinctWords", queryMsg(`{"query":"` + distinct(1000000, "w%x", " ") + `"}`), false, answered(wire.TypeCatalog)},
	// Regression guard: passed before the fix (532ea03) too — repeated words were already
	// cheap; kept because the fix matches distinct terms against the tools still selected,
	// and a change there could make repetition costly again.
	{"QueryManyMatchingWordsGuard", queryMsg(`{"query":"` + strings.Repeat("hostile echo fixture ", 100000) + `"}`), false, answered(wire.TypeCatalog)},

	// tool.batch payloads.
	{"BatchCallsString", batchMsg(`{"calls":"h.echo"}`), false, rejected(wire.CodeBatchPayloadInvalid)},
	{"BatchCallsObject", batchMsg(`{"calls":{"toolId":"h.echo"}}`), false, rejected(wire.CodeBatchPayloadInvalid)},
	{"BatchCallsMissing", batchMsg(`{}`), false, rejected(wire.CodeBatchPayloadInvalid)},
	{"BatchEmpty", batchMsg(`{"calls":[]}`), false, rejected(wire.CodeBatchSizeInvalid)},
	{"BatchTooLarge", batchMsg(`{"calls":[` + strings.TrimSuffix(strings.Repeat(`{"toolId":"h.echo","arguments":{"nonce":"x"}},`, 33), ",") + `]}`), false, rejected(wire.CodeBatchSizeInvalid)},
	{"BatchContinueOnErrorString", batchMsg(`{"continueOnError":"true","calls":[{"toolId":"h.echo","arguments":{"nonce":"x"}}]}`), false, rejected(wire.CodeBatchPayloadInvalid)},
	{"BatchItemNotObject", batchMsg(`{"calls":[5]}`), false, itemError(wire.CodeBatchCallInvalid)},
	{"BatchItemToolAboveGuard", batchMsg(`{"calls":[{"toolId":"h.wipe"}]}`), false, itemError(wire.CodeExecutionDenied)},
	// Regression guard: passed before the fix (532ea03) too — the answer was already
	// tool_batch_size_invalid, after holding every item (142 MB); kept because the fix
	// counts items beyond 32 without holding them, and the answer must stay the same.
	{"BatchHugeCallsGuard", batchMsg(`{"calls":[` + strings.Repeat(`{},`, 1000000) + `{}]}`), false, rejected(wire.CodeBatchSizeInvalid)},
	{"BatchItemBadAfter", batchMsg(`{"calls":[{"toolId":"h.echo","arguments":{"nonce":"x"},"after":{"delayMilliseconds":-5}}]}`), false, itemError(payloadInvalid)},
}

// distinct joins n values of format (with the index) with sep.
func distinct(n int, format, sep string) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(sep)
		}
		fmt.Fprintf(&b, format, i)
	}
	return b.String()
}

// wrapped is the payload prefix + unit×n + suffix in the gzip-base64-json wrapper, as a
// large request may arrive. The gzip stream is members (which readers concatenate): the
// prefix, one member of 100,000 units repeated, the suffix; so that a payload of tens of
// megabytes costs little to make.
func wrapped(prefix, unit string, n int, suffix string) string {
	member := func(s string) []byte {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write([]byte(s))
		zw.Close()
		return z.Bytes()
	}
	const per = 100000
	data := member(prefix)
	data = append(data, bytes.Repeat(member(strings.Repeat(unit, per)), n/per)...)
	data = append(data, member(strings.Repeat(unit, n%per)+suffix)...)
	return fmt.Sprintf(`{"$ansightEncoding":"gzip-base64-json","contentType":"application/json","originalByteCount":%d,"compressedByteCount":%d,"data":%q}`,
		len(prefix)+n*len(unit)+len(suffix), len(data), base64.StdEncoding.EncodeToString(data))
}

func asftFrame(f wire.Frame) []byte {
	b, err := wire.AppendFrame(nil, f)
	if err != nil {
		panic(err)
	}
	return b
}

// TestHostileToApp sends each hostile message to a connected app, then proves that the app
// answered it as the spec says (or dropped it), that the same connection still serves a
// normal call, and that another session of the same app was not affected.
func TestHostileToApp(t *testing.T) {
	a := hostileApp(t)
	bystander := connectApp(t, a)
	victim := connectApp(t, a)
	for _, tc := range appCases {
		t.Run(tc.name, func(t *testing.T) {
			typ := transport.MessageText
			if tc.binary {
				typ = transport.MessageBinary
			}
			// Each case's request id is its name, so that an answer is never taken for
			// another case's.
			victim.send(t, typ, []byte(strings.ReplaceAll(tc.msg, `"hostile"`, strconv.Quote(tc.name))))
			var got [][]byte
			if tc.want.code != "" || tc.want.answer != "" {
				got = append(got, victim.answer(t, tc.name))
				got = append(got, victim.probe(t)...)
			} else {
				// Nothing may come back: requests run concurrently, so a second probe
				// catches an answer that lost the race with the first.
				got = append(victim.probe(t), victim.probe(t)...)
			}
			tc.want.check(t, got)
			if extra := bystander.probe(t); len(extra) != 0 {
				t.Fatalf("the other session received %q", extra)
			}
			select {
			case <-victim.sess.Done():
				t.Fatalf("the app closed its session: %v", victim.sess.Err())
			default:
			}
		})
	}
	if len(appCases) < 40 {
		t.Errorf("only %d hostile messages", len(appCases))
	}
}
