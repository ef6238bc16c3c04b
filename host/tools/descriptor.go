package tools

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// descriptor is an ASFT transfer announcement found in a result payload: an object with
// deliveryMode "websocket_binary", wireProtocol "ansight.file-transfer.v1" and a transferId.
// start and end delimit the object's bytes in the payload, so it can be rewritten in place.
type descriptor struct {
	start, end int64
	transferID string
	fileName   string
	mimeType   string
	size       int64  // -1 when not announced
	sizeErr    error  // sizeBytes present but not a non-negative integer
	dir        string // where the file goes; "" for the artifact directory (see Client.Receive)
}

// findDescriptors walks payload once (O(len)) and returns every descriptor object, in
// document order. A descriptor nested inside another descriptor is ignored: only the outer
// object is rewritten, so the inner one could not report its outcome.
func findDescriptors(payload []byte) ([]descriptor, error) {
	if !bytes.Contains(payload, []byte(wire.FileTransferProtocol)) && !bytes.Contains(payload, []byte(`\u`)) {
		return nil, nil // fast path: no descriptor can be written without these bytes
	}
	w := walker{src: payload, dec: jsontext.NewDecoder(bytes.NewReader(payload))}
	if err := w.value(); err != nil {
		return nil, err
	}
	slices.SortFunc(w.out, func(a, b descriptor) int { return int(a.start - b.start) })
	kept := w.out[:0]
	var end int64 = -1
	for _, d := range w.out {
		if d.start < end {
			continue // nested in the previous kept descriptor
		}
		kept = append(kept, d)
		end = d.end
	}
	return kept, nil
}

type walker struct {
	src []byte
	dec *jsontext.Decoder
	out []descriptor
}

// value reads one JSON value, recording descriptor objects. Depth is bounded because the
// payload already passed the strict decoder (depth ≤ wire.MaxDepth).
func (w *walker) value() error {
	switch w.dec.PeekKind() {
	case '{':
		return w.object()
	case '[':
		if _, err := w.dec.ReadToken(); err != nil {
			return err
		}
		for w.dec.PeekKind() != ']' {
			if err := w.value(); err != nil {
				return err
			}
		}
		_, err := w.dec.ReadToken()
		return err
	default:
		return w.dec.SkipValue()
	}
}

func (w *walker) object() error {
	// The next '{' after the last token is this object's first byte: only whitespace, ':'
	// or ',' can come between.
	off := w.dec.InputOffset()
	start := off + int64(bytes.IndexByte(w.src[off:], '{'))
	if _, err := w.dec.ReadToken(); err != nil {
		return err
	}
	var mode, proto string
	d := descriptor{size: -1}
	for w.dec.PeekKind() != '}' {
		name, err := w.dec.ReadToken()
		if err != nil {
			return err
		}
		var target *string
		switch name.String() {
		case "deliveryMode":
			target = &mode
		case "wireProtocol":
			target = &proto
		case "transferId":
			target = &d.transferID
		case "fileName":
			target = &d.fileName
		case "mimeType":
			target = &d.mimeType
		case "sizeBytes":
			if w.dec.PeekKind() == '0' {
				tok, err := w.dec.ReadToken()
				if err != nil {
					return err
				}
				n, perr := strconv.ParseInt(tok.String(), 10, 64)
				if perr != nil || n < 0 {
					d.sizeErr = fmt.Errorf("sizeBytes %s is not a non-negative integer", tok.String())
				} else {
					d.size = n
				}
				continue
			}
			if w.dec.PeekKind() != 'n' {
				d.sizeErr = fmt.Errorf("sizeBytes is not a number")
			}
		}
		if target != nil && w.dec.PeekKind() == '"' {
			tok, err := w.dec.ReadToken()
			if err != nil {
				return err
			}
			*target = tok.String()
			continue
		}
		if err := w.value(); err != nil {
			return err
		}
	}
	if _, err := w.dec.ReadToken(); err != nil {
		return err
	}
	if mode == wire.DeliveryModeWebSocketBinary && proto == wire.FileTransferProtocol && d.transferID != "" {
		d.start, d.end = start, w.dec.InputOffset()
		w.out = append(w.out, d)
	}
	return nil
}

// outcome is the final state of a transfer, written back into its descriptors.
type outcome struct {
	status   string
	path     string
	received int64
}

// rewriteDescriptors returns payload with each descriptor object's status, artifactPath and
// receivedBytes replaced by the transfer's outcome. Other members keep their bytes and order.
func rewriteDescriptors(payload []byte, descs []descriptor, outcomes map[string]outcome) ([]byte, error) {
	out := make([]byte, 0, len(payload)+len(descs)*128)
	var prev int64
	for _, d := range descs {
		out = append(out, payload[prev:d.start]...)
		var err error
		out, err = appendRewritten(out, payload[d.start:d.end], outcomes[d.transferID])
		if err != nil {
			return nil, err
		}
		prev = d.end
	}
	return append(out, payload[prev:]...), nil
}

func appendRewritten(dst, obj []byte, o outcome) ([]byte, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	dst = append(dst, '{')
	first := true
	member := func(name string) {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst, _ = jsontext.AppendQuote(dst, name) // names come from valid JSON: valid UTF-8
		dst = append(dst, ':')
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		n := name.String()
		if n == "status" || n == "artifactPath" || n == "receivedBytes" {
			if err := dec.SkipValue(); err != nil {
				return nil, err
			}
			continue
		}
		v, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		member(n)
		dst = append(dst, v...)
	}
	member("status")
	dst, _ = jsontext.AppendQuote(dst, o.status)
	if o.path != "" {
		member("artifactPath")
		var err error
		if dst, err = jsontext.AppendQuote(dst, o.path); err != nil {
			return nil, fmt.Errorf("artifact path %q: %w", o.path, err)
		}
	}
	member("receivedBytes")
	dst = strconv.AppendInt(dst, o.received, 10)
	return append(dst, '}'), nil
}
