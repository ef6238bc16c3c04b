package fleet

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/nats-io/nats.go"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// progressEvery throttles the progress messages of one request.
const progressEvery = 100 * time.Millisecond

// onRequest takes a request to this host. Each one is served on a goroutine of its own,
// at most MaxRequests at once, and answered on its reply subject.
func (m *Member) onRequest(msg *nats.Msg) {
	op, class, ok := m.subj.parseOp(m.opts.Host, msg.Subject)
	if !ok {
		if msg.Reply != "" {
			m.publish(msg.Reply, kindError, mustJSON(errorBody{Code: wire.CodeResourceNotFound, Message: "no such fleet operation: " + msg.Subject}))
		}
		return
	}
	switch {
	case op == opCancel:
		var req request
		if wire.Unmarshal(msg.Data, &req) == nil {
			m.cancelRequest(req.Reply)
		}
		return
	case msg.Reply == "":
		return // nobody would read the answer
	case op == opPing:
		m.publish(msg.Reply, kindResult, nil)
		return
	}
	select {
	case m.sem <- struct{}{}:
	default:
		m.publish(msg.Reply, kindError, mustJSON(errorBody{Code: wire.CodeBusy, Message: fmt.Sprintf("host %s serves %d fleet requests already; retry later", m.opts.Host, m.opts.MaxRequests)}))
		return
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		<-m.sem
		return
	}
	ctx, cancel := context.WithCancel(m.ctx)
	m.inflight[msg.Reply] = cancel
	m.wg.Add(1)
	m.mu.Unlock()
	go func() {
		defer m.wg.Done()
		defer func() { <-m.sem }()
		defer m.cancelRequest(msg.Reply)
		v, err := m.serve(ctx, op, class, msg)
		m.answer(msg.Reply, v, err)
	}()
}

// cancelRequest ends the request answered on reply, if it is still served.
func (m *Member) cancelRequest(reply string) {
	m.mu.Lock()
	cancel, ok := m.inflight[reply]
	delete(m.inflight, reply)
	m.mu.Unlock()
	if ok {
		cancel()
	}
}

// answer sends a request's final message: the error, the result, or, when the result is
// larger than a message, a blob to fetch it from. A []byte result is sent as it is.
func (m *Member) answer(reply string, v any, err error) {
	if err != nil {
		eb, ok := err.(*errorBody)
		if !ok {
			eb = bodyOf(err)
		}
		m.publish(reply, kindError, mustJSON(eb))
		return
	}
	data, ok := v.([]byte)
	if !ok {
		if data, err = json.Marshal(v); err != nil {
			m.publish(reply, kindError, mustJSON(bodyOf(err)))
			return
		}
	}
	if len(data) > m.maxBody() {
		m.publish(reply, kindBlob, mustJSON(m.blobs.addData(data)))
		return
	}
	m.publish(reply, kindResult, data)
}

// serve runs one operation. Requests name the host's own session ids; an id qualified
// with another host is refused.
func (m *Member) serve(ctx context.Context, op string, class wire.Policy, msg *nats.Msg) (any, error) {
	var req request
	if err := wire.Unmarshal(msg.Data, &req); err != nil {
		return nil, &errorBody{Code: wire.CodeBadRequest, Message: "request: " + err.Error()}
	}
	if op == opBlob {
		n := min(req.Length, int64(m.maxBody()))
		b, err := m.blobs.read(req.Blob, req.Offset, n)
		if err != nil {
			return nil, &errorBody{Code: wire.CodeResourceNotFound, Message: err.Error()}
		}
		return b, nil
	}
	if op == opSessions {
		snap, err := m.announced()
		if err != nil {
			return nil, err
		}
		if req.IfRevision != "" && req.IfRevision == snap.revision {
			return hostSessionsOut{Revision: snap.revision, Unchanged: true}, nil
		}
		return hostSessionsOut{Revision: snap.revision, Sessions: snap.list}, nil
	}
	if op == opRecordings {
		return m.api.Recordings(ctx)
	}
	sid, err := m.own(req.Session)
	if err != nil {
		return nil, err
	}
	m.log.Debug("fleet: request", "op", op, "class", class, "session", sid, "tool", req.toolIDs())
	switch op {
	case opTools:
		var tr hostapi.ToolsRequest
		if req.Tools != nil {
			tr = *req.Tools
		}
		return m.api.Tools(ctx, sid, tr)
	case opTool:
		return m.api.Tool(ctx, sid, req.ToolID)
	case opCall:
		if req.Call == nil {
			return nil, &errorBody{Code: wire.CodeBadRequest, Message: "a call request needs its call"}
		}
		if err := m.checkClass(ctx, sid, class, []string{req.Call.ToolID}); err != nil {
			return nil, err
		}
		res, err := m.api.Call(ctx, sid, *req.Call, m.progress(msg.Reply))
		if err != nil {
			return nil, err
		}
		return callAnswer{Call: res, Blobs: m.artifactBlobs(res.Artifacts)}, nil
	case opBatch:
		if req.Batch == nil {
			return nil, &errorBody{Code: wire.CodeBadRequest, Message: "a batch request needs its batch"}
		}
		ids := make([]string, len(req.Batch.Calls))
		for i, c := range req.Batch.Calls {
			ids[i] = c.ToolID
		}
		if err := m.checkClass(ctx, sid, class, ids); err != nil {
			return nil, err
		}
		res, err := m.api.Batch(ctx, sid, *req.Batch, m.progress(msg.Reply))
		if err != nil {
			return nil, err
		}
		return batchAnswer{Batch: res, Blobs: m.artifactBlobs(res.Artifacts)}, nil
	case opRecords:
		var rr hostapi.RecordsRequest
		if req.Records != nil {
			rr = *req.Records
		}
		return m.api.Records(ctx, sid, rr)
	case opRecordFile:
		return m.recordFile(ctx, sid, req.Seq)
	case opRename:
		if req.Rename == nil {
			return nil, &errorBody{Code: wire.CodeBadRequest, Message: "a rename request needs its label"}
		}
		return m.api.Rename(ctx, sid, *req.Rename)
	}
	return nil, &errorBody{Code: wire.CodeResourceNotFound, Message: "no such fleet operation: " + op}
}

// maxRecordFile bounds a record's file a host sends over the fleet (frames, trees and
// payloads are far smaller; a larger artifact stays on its host).
const maxRecordFile = 64 << 20

// recordFile reads a record's file for a requester.
func (m *Member) recordFile(ctx context.Context, sid string, seq int64) (any, error) {
	b, err := m.api.Blob(ctx, sid, seq)
	if err != nil {
		return nil, err
	}
	defer b.Body.Close()
	if b.SizeBytes > maxRecordFile {
		return nil, &errorBody{Code: wire.CodeBadRequest, Message: fmt.Sprintf("record %d's file is %d bytes, more than the %d a host sends over the fleet: it stays on host %s ('ansight session export' there)",
			seq, b.SizeBytes, maxRecordFile, m.Host())}
	}
	data, err := io.ReadAll(io.LimitReader(b.Body, maxRecordFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxRecordFile {
		return nil, &errorBody{Code: wire.CodeBadRequest, Message: fmt.Sprintf("record %d's file is larger than %d bytes", seq, maxRecordFile)}
	}
	return recordFileAnswer{Name: b.Name, MimeType: b.MimeType, Data: data}, nil
}

// toolIDs lists the tools a request names, for the debug log (arguments are never logged).
func (r *request) toolIDs() []string {
	switch {
	case r.Call != nil:
		return []string{r.Call.ToolID}
	case r.Batch != nil:
		ids := make([]string, len(r.Batch.Calls))
		for i, c := range r.Batch.Calls {
			ids[i] = c.ToolID
		}
		return ids
	case r.ToolID != "":
		return []string{r.ToolID}
	}
	return nil
}

// own returns the host's id of a session a request names, refusing ids qualified with
// another host: a host serves its own sessions only.
func (m *Member) own(id string) (string, error) {
	sid, h := SplitID(id)
	switch {
	case sid == "":
		return "", &errorBody{Code: wire.CodeBadRequest, Message: "the request names no session"}
	case h != "" && h != m.opts.Host:
		return "", &errorBody{Code: wire.CodeSessionNotFound, Message: fmt.Sprintf("session %s is on host %s, not on this host (%s)", sid, h, m.opts.Host)}
	}
	return sid, nil
}

// checkClass refuses calls whose tools have a higher policy than the class of the subject
// they came on, so that NATS permissions on the subjects decide who calls what. It reads
// the session's catalog through the host's control API (the host's cache, refreshed by a
// conditional index query): the catalog the host's own grant check then uses. Tools the
// catalog does not list are left to the host, which refuses them.
func (m *Member) checkClass(ctx context.Context, sid string, class wire.Policy, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	cat, err := m.api.Tools(ctx, sid, hostapi.ToolsRequest{ToolIDs: ids})
	if err != nil {
		return nil // the control API answers the call with its error (session_not_found, session_closed, …)
	}
	var top wire.Policy
	for _, e := range cat.Tools {
		if e.Policy.Rank() > top.Rank() {
			top = e.Policy
		}
	}
	if top.Rank() > class.Rank() {
		return &errorBody{Code: wire.CodeClassMismatch, Policy: top,
			Message: fmt.Sprintf("a %s tool came on the %s subject: call it on the %s subject", top, class, top)}
	}
	return nil
}

// progress forwards a request's transfer progress to its requester, at most every
// progressEvery (the end of a transfer always).
func (m *Member) progress(reply string) func(hostapi.Progress) {
	var mu sync.Mutex
	var last time.Time
	return func(p hostapi.Progress) {
		mu.Lock()
		now := time.Now()
		skip := !p.Done && now.Sub(last) < progressEvery
		if !skip {
			last = now
		}
		mu.Unlock()
		if !skip {
			m.publish(reply, kindProgress, mustJSON(p))
		}
	}
}

// artifactBlobs registers the complete artifacts of a call or batch as blobs, and clears
// their paths: they name files on this host, and the requester saves its own copy.
func (m *Member) artifactBlobs(list []hostapi.Artifact) map[string]blobRef {
	if len(list) == 0 {
		return nil
	}
	out := make(map[string]blobRef, len(list))
	for i := range list {
		a := &list[i]
		if a.Status == "complete" && a.Path != "" {
			out[a.TransferID] = m.blobs.addFile(a.Path, a.SizeBytes)
		}
		a.Path = ""
	}
	return out
}
