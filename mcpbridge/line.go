package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/internal/jsonscan"
)

// LineTransport is MCP over newline-delimited JSON on a reader and a writer (stdio,
// pipes): the wire format and behaviour of the SDK's mcp.IOTransport, which `ansight mcp`
// used before, with a cheaper reader. The SDK's connection decodes each message it reads
// three times (as a batch, as a message, its method), each with a fresh 32 KiB decoder
// buffer — a third of the bridge's allocation per call, which its collections pay for.
// This one reads values with one reused jsontext.Decoder and decodes a message's envelope
// once (decodeMessage; anything out of the ordinary goes to the SDK's own decoder, so that
// what is accepted and what is refused stays the SDK's: FuzzLineTransport holds the two
// against each other).
//
// As behind quietTransport before, JSON-RPC batches are accepted in every protocol
// revision (the SDK refuses them from 2025-06-18 on through a hook of its own connection,
// which a wrapper hides) and answered as one array.
type LineTransport struct {
	Reader io.ReadCloser
	Writer io.WriteCloser
	// MaxLineLength bounds the bytes buffered while reading one message (0:
	// mcp.DefaultMaxLineLength; negative: no bound), as mcp.IOTransport's.
	MaxLineLength int
}

// Connect implements mcp.Transport.
func (t *LineTransport) Connect(context.Context) (mcp.Connection, error) {
	limit := t.MaxLineLength
	if limit == 0 {
		limit = mcp.DefaultMaxLineLength
	}
	c := &lineConn{r: t.Reader, w: t.Writer, incoming: make(chan lineFrame), closed: make(chan struct{})}
	go c.readLoop(limit)
	return c, nil
}

// lineFrame is one value read: its messages (several for a batch) or why there are none.
type lineFrame struct {
	msgs  []jsonrpc.Message
	batch bool // an array, answered as one (even of one request)
	err   error
}

type lineConn struct {
	r io.ReadCloser
	w io.WriteCloser

	// incoming receives what readLoop read; it reads on its own goroutine so that Close
	// unblocks Read even when closing the reader does not unblock its Read (stdin).
	incoming chan lineFrame
	queue    []jsonrpc.Message // the rest of the last batch (Read is not concurrent)

	writeMu sync.Mutex
	batchMu sync.Mutex
	batches map[jsonrpc.ID]*lineBatch

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

// lineBatch is an incoming batch's requests waiting for their responses, answered as one
// array once all are in (JSON-RPC 2.0, "Batch").
type lineBatch struct {
	unresolved map[jsonrpc.ID]int
	responses  []*jsonrpc.Response
}

// errLineTooLarge is mcp.IOTransport's refusal of a message over MaxLineLength.
var errLineTooLarge = errors.New("inbound JSON-RPC frame exceeded the configured maximum line length")

// lineLimit bounds the bytes read for one value (as the SDK's frameLimitReader).
type lineLimit struct {
	r            io.Reader
	limit, count int
}

func (l *lineLimit) Read(p []byte) (int, error) {
	if l.limit < 0 {
		return l.r.Read(p)
	}
	if l.count >= l.limit {
		return 0, errLineTooLarge
	}
	p = p[:min(len(p), l.limit-l.count)]
	n, err := l.r.Read(p)
	l.count += n
	return n, err
}

// readOptions frame values no more strictly than the SDK's encoding/json decoder does:
// what else it refuses, decodeFrame refuses as the SDK does.
var readOptions = jsonv2.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

func (c *lineConn) readLoop(limit int) {
	lim := &lineLimit{r: c.r, limit: limit}
	dec := jsontext.NewDecoder(lim, readOptions)
	for {
		f := readFrame(dec)
		select {
		case c.incoming <- f:
		case <-c.closed:
			return
		}
		if f.err != nil {
			return
		}
		lim.count = 0
	}
}

// readFrame reads and decodes the next value of dec, which must end its line.
func readFrame(dec *jsontext.Decoder) lineFrame {
	v, err := dec.ReadValue()
	if err != nil {
		if errors.Is(err, errLineTooLarge) {
			err = errLineTooLarge
		}
		return lineFrame{err: err}
	}
	if rest := dec.UnreadBuffer(); len(rest) > 0 && rest[0] != '\n' && rest[0] != '\r' {
		return lineFrame{err: errors.New("invalid trailing data at the end of stream")}
	}
	msgs, batch, err := decodeFrame(v)
	return lineFrame{msgs: msgs, batch: batch, err: err}
}

// decodeFrame is one value's messages: a batch's, or the one message it is. v is only
// valid until the next read: the messages own what they keep of it.
func decodeFrame(v []byte) (msgs []jsonrpc.Message, batch bool, _ error) {
	if jsonscan.Nesting(v) > maxDepth {
		return nil, false, errors.New("json: exceeded maximum nesting depth")
	}
	if len(v) == 0 || v[0] != '[' {
		m, err := decodeMessage(v)
		if err != nil {
			return nil, false, err
		}
		return []jsonrpc.Message{m}, false, nil
	}
	var items []jsontext.Value
	if err := jsonv2.Unmarshal(v, &items, readOptions); err != nil {
		return nil, true, err
	}
	if len(items) == 0 {
		return nil, true, errors.New("empty batch")
	}
	msgs = make([]jsonrpc.Message, len(items))
	for i, it := range items {
		m, err := decodeMessage(it)
		if err != nil {
			return nil, true, err
		}
		msgs[i] = m
	}
	return msgs, true, nil
}

// maxDepth is the SDK decoder's bound on nesting, which it checks before decoding.
const maxDepth = 1000

// envelope is a message's members as decodeMessage reads them.
type envelope struct {
	VersionTag string         `json:"jsonrpc"`
	ID         jsontext.Value `json:"id"`
	Method     jsontext.Value `json:"method"`
	Params     jsontext.Value `json:"params"`
	Result     jsontext.Value `json:"result"`
	Error      jsontext.Value `json:"error"`
}

// decodeMessage is jsonrpc.DecodeMessage(v) without its decoder buffers for the messages
// a session exchanges: requests, notifications, responses with a result. Anything else —
// an error response, duplicate or invalid member names, invalid UTF-8, an id that is
// neither a string nor a number, any failure — is left to jsonrpc.DecodeMessage itself,
// so that the answer is the SDK's (FuzzDecodeMessage).
func decodeMessage(v []byte) (jsonrpc.Message, error) {
	if m, ok := decodeCommon(v); ok {
		return m, nil
	}
	return jsonrpc.DecodeMessage(v)
}

func decodeCommon(v []byte) (jsonrpc.Message, bool) {
	if len(v) == 0 || v[0] != '{' {
		return nil, false
	}
	var e envelope
	if jsonv2.Unmarshal(v, &e) != nil || e.VersionTag != "2.0" || len(e.Error) > 0 {
		return nil, false
	}
	var id jsonrpc.ID
	switch {
	case len(e.ID) == 0 || e.ID.Kind() == 'n':
	case e.ID.Kind() == '"':
		var s string
		if jsonv2.Unmarshal(e.ID, &s) != nil {
			return nil, false
		}
		id, _ = jsonrpc.MakeID(s)
	case e.ID.Kind() == '0':
		f, err := strconv.ParseFloat(string(e.ID), 64)
		if err != nil {
			return nil, false
		}
		id, _ = jsonrpc.MakeID(f)
	default:
		return nil, false
	}
	if len(e.Method) > 0 {
		var method string
		if e.Method.Kind() != '"' || jsonv2.Unmarshal(e.Method, &method) != nil {
			return nil, false
		}
		return &jsonrpc.Request{ID: id, Method: method, Params: rawOrNil(e.Params)}, true
	}
	if !id.IsValid() {
		return nil, false
	}
	return &jsonrpc.Response{ID: id, Result: rawOrNil(e.Result)}, true
}

// rawOrNil is v as the SDK's decoder leaves a json.RawMessage: nil when absent.
func rawOrNil(v jsontext.Value) json.RawMessage {
	if len(v) == 0 {
		return nil
	}
	return json.RawMessage(v)
}

func (c *lineConn) SessionID() string { return "" }

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		return m, nil
	}
	var f lineFrame
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case f = <-c.incoming:
	case <-c.closed:
		return nil, io.EOF
	}
	if f.err != nil {
		return nil, f.err
	}
	if f.batch {
		if err := c.addBatch(f.msgs); err != nil {
			return nil, err
		}
	}
	c.queue = f.msgs[1:]
	return f.msgs[0], nil
}

// addBatch records the requests of an incoming batch, whose responses go out together. A
// batch repeating an id, or reusing one still pending in another batch, is refused.
func (c *lineConn) addBatch(msgs []jsonrpc.Message) error {
	b := &lineBatch{unresolved: map[jsonrpc.ID]int{}}
	for _, m := range msgs {
		if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() {
			if _, dup := b.unresolved[req.ID]; dup {
				return fmt.Errorf("duplicate message ID %q", req.ID)
			}
			b.unresolved[req.ID] = len(b.responses)
			b.responses = append(b.responses, nil)
		}
	}
	if len(b.unresolved) == 0 {
		return nil
	}
	c.batchMu.Lock()
	defer c.batchMu.Unlock()
	for id := range b.unresolved {
		if _, ok := c.batches[id]; ok {
			return fmt.Errorf("invalid request: batch contains previously seen request %v", id.Raw())
		}
	}
	if c.batches == nil {
		c.batches = map[jsonrpc.ID]*lineBatch{}
	}
	for id := range b.unresolved {
		c.batches[id] = b
	}
	return nil
}

// updateBatch files resp with its batch, if it belongs to one: the batch's responses once
// it is complete, nil before; ok false when resp is in no batch.
func (c *lineConn) updateBatch(resp *jsonrpc.Response) (complete []*jsonrpc.Response, ok bool) {
	c.batchMu.Lock()
	defer c.batchMu.Unlock()
	b, ok := c.batches[resp.ID]
	if !ok {
		return nil, false
	}
	b.responses[b.unresolved[resp.ID]] = resp
	delete(b.unresolved, resp.ID)
	delete(c.batches, resp.ID)
	if len(b.unresolved) == 0 {
		return b.responses, true
	}
	return nil, true
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	var data []byte
	if resp, ok := msg.(*jsonrpc.Response); ok {
		if batch, ok := c.updateBatch(resp); ok {
			if batch == nil {
				return nil
			}
			raws := make([]json.RawMessage, len(batch))
			for i, r := range batch {
				b, err := jsonrpc.EncodeMessage(r)
				if err != nil {
					return fmt.Errorf("encoding batch message: %w", err)
				}
				raws[i] = b
			}
			b, err := json.Marshal(raws)
			if err != nil {
				return err
			}
			_, err = c.w.Write(append(b, '\n'))
			return err
		}
	}
	data, err := encodeMessage(msg)
	if err != nil {
		return fmt.Errorf("marshaling message: %v", err)
	}
	_, err = c.w.Write(append(data, '\n'))
	return err
}

// encodeMessage is jsonrpc.EncodeMessage(msg) without encoding/json for a response with
// a result, the message of every call: the SDK encoded the result itself (compact, valid),
// so it is written as it is instead of scanned and compacted again. Anything else, an id
// that is not a plain string or a result that is not compact, goes to jsonrpc.EncodeMessage
// (FuzzEncodeMessage holds the two equal).
func encodeMessage(msg jsonrpc.Message) ([]byte, error) {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.Error != nil || len(resp.Result) == 0 || !compact(resp.Result) {
		return jsonrpc.EncodeMessage(msg)
	}
	b := make([]byte, 0, len(resp.Result)+48)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	switch id := resp.ID.Raw().(type) {
	case int64:
		b = strconv.AppendInt(b, id, 10)
	case string:
		if !plainString(id) {
			return jsonrpc.EncodeMessage(msg)
		}
		b = append(append(append(b, '"'), id...), '"')
	default:
		return jsonrpc.EncodeMessage(msg)
	}
	b = append(b, `,"result":`...)
	b = append(b, resp.Result...)
	return append(b, '}'), nil
}

// plainString reports whether s is written in JSON as it is, between quotes: printable
// ASCII other than the quote and the backslash.
func plainString(s string) bool {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// compact reports whether v, which starts a JSON object or array, has no whitespace
// outside its strings and no byte that encoding/json writes differently (control
// characters in strings excepted, which valid JSON does not hold): what
// encoding/json's compaction would leave as it is.
func compact(v []byte) bool {
	if v[0] != '{' && v[0] != '[' {
		return false
	}
	var w jsonscan.StringWalk
	for _, c := range v {
		if !w.Step(c) && (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			return false
		}
	}
	return true
}

func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		c.closeErr = errors.Join(c.r.Close(), c.w.Close())
		close(c.closed)
	})
	return c.closeErr
}
