package host

import (
	"bytes"
	"context"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/host/tools"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/session"
)

// serveConn is the connection's only reader. Each message goes to the first taker:
//  0. Options.Tap, when set;
//  1. the tool client (tool responses, ASFT frames);
//  2. the control handler (CONTROL_REQ), which answers every request;
//  3. Options.OnFrame and Options.Recorder: live screenshot frames (ASJP), when set;
//  4. Options.Recorder, when set: telemetry (CLIENT_*, DeviceAppProfile) and anything else,
//     never acknowledged, as the protocol wants (dropped without a recorder);
//  5. the legacy CLIENT_DONE, which ends the session like session.complete (unanswered).
//
// It returns when the connection ends; the session then becomes disconnected. Every end
// of a session closes its connection (Close does before it cancels s.ctx), so reads use a
// context that never ends: a cancellable one would cost the WebSocket library a timer
// registration per message.
func (s *Server) serveConn(sess *Session, c *connection) {
	var cause error
	reason := ""
	readCtx := context.WithoutCancel(s.ctx)
	for {
		typ, data, err := c.conn.Read(readCtx)
		if err != nil {
			cause = err
			break
		}
		if s.opts.Tap != nil && s.opts.Tap(sess, typ, data) {
			continue
		}
		if c.client.HandleMessage(typ, data) {
			if typ == transport.MessageBinary && s.opts.Tap == nil {
				transport.Recycle(data) // an ASFT frame, written to its file: done with
			}
			continue
		}
		if typ != transport.MessageText {
			s.handleBinary(sess, data)
			continue
		}
		if done := s.handleControl(sess, c, data) || clientDone(data); done {
			cause, reason = errSessionComplete, "WebSocket session complete."
			break
		}
	}
	c.client.Close(cause)
	c.conn.Close(transport.StatusNormalClosure, reason)
	s.detach(sess, c)
}

// errSessionComplete is the cause given to pending requests when the app completes its
// session (session.complete).
var errSessionComplete = fmt.Errorf("host: session complete: %w", tools.ErrAppEnded)

// clientDoneType is what clientDone looks for before it decodes anything.
var clientDoneType = []byte(`"` + session.TypeClientDone + `"`)

// clientDone reports whether a text message is the legacy CLIENT_DONE.
func clientDone(data []byte) bool {
	if !bytes.Contains(data, clientDoneType) {
		return false
	}
	var m struct {
		Type string `json:"type"`
	}
	return wire.Unmarshal(data, &m) == nil && m.Type == session.TypeClientDone
}

// controlType is the only member ParseControl needs to tell control traffic from
// telemetry cheaply: other messages are dropped without a full parse.
var controlType = []byte(`"` + session.TypeControlRequest + `"`)

// handleControl answers one text message if it is a control request, and reports whether
// the session is complete (the connection must then close).
func (s *Server) handleControl(sess *Session, c *connection, data []byte) bool {
	if !bytes.Contains(data, controlType) {
		s.recordMessage(sess, transport.MessageText, data)
		return false
	}
	req, err := session.ParseControl(data)
	if err != nil {
		if req != nil && req.Type == session.TypeControlRequest && req.ID != "" {
			// Unusable action: still answer, or the SDK tears the session down after 10–15 s.
			s.reply(sess, c, req.Reply(false, "Invalid control request: "+err.Error(), nil))
			s.recordControl(sess, req, false, "Invalid control request: "+err.Error())
		} else {
			s.recordMessage(sess, transport.MessageText, data)
			s.log.Debug("host: dropped text message", "session", sess.id, "err", err)
		}
		return false
	}
	if req.Type != session.TypeControlRequest {
		s.recordMessage(sess, transport.MessageText, data)
		return false
	}
	ok, message, payload := s.control(sess, c, req)
	s.reply(sess, c, req.Reply(ok, message, payload))
	s.recordControl(sess, req, ok, message)
	switch req.Action {
	case session.ActionSessionOpen:
		if ok {
			// Requests flow only once the acknowledgement is on the wire: a Kotlin app
			// drops a tool.query that arrives before it has installed its handler.
			c.client.Open()
			sess.publish(EventUpdated)
		}
	case session.ActionSessionComplete:
		return true // serveConn closes the connection
	case session.ActionDeviceProfile, session.ActionAppState, session.ActionSessionProperties:
		if ok {
			sess.publish(EventUpdated)
		}
	}
	return false
}

func (s *Server) reply(sess *Session, c *connection, resp *session.ControlEnvelope) {
	b, err := resp.Marshal()
	if err != nil {
		s.log.Error("host: encode control response", "session", sess.id, "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, DefaultControlWriteTimeout)
	defer cancel()
	if err := c.conn.Write(ctx, transport.MessageText, b); err != nil {
		s.log.Debug("host: write control response", "session", sess.id, "err", err)
	}
}

// control applies one request to the session, received on connection c (nil in tests that
// have none), and returns the answer. Messages match the reference host's where it has one.
func (s *Server) control(sess *Session, c *connection, req *session.ControlEnvelope) (ok bool, message string, payload jsontext.Value) {
	switch req.Action {
	case session.ActionSessionOpen:
		var p session.SessionOpen
		if len(req.Payload) != 0 {
			if err := req.DecodePayload(&p); err != nil {
				return false, "Invalid session.open payload: " + err.Error(), nil
			}
			if len(p.CustomProperties) != 0 && p.CustomProperties.Kind() != '{' {
				return false, "customProperties must be a JSON object.", nil
			}
		}
		if c != nil && p.Has(session.ExtensionToolCancel) {
			c.client.EnableCancel()
		}
		sess.mu.Lock()
		sess.opened = true
		sess.clientName = p.ClientName
		if len(p.CustomProperties) != 0 {
			sess.properties = p.CustomProperties.Clone()
		}
		sess.mu.Unlock()
		if p.ClientName == "" {
			return true, "Session open accepted.", nil
		}
		return true, fmt.Sprintf("Session open accepted for %s.", p.ClientName), nil

	case session.ActionDeviceProfile:
		p, err := session.ParseDeviceProfile(req.Payload)
		if err != nil {
			return false, "Invalid device profile payload: " + err.Error(), nil
		}
		sess.mu.Lock()
		sess.profile = p
		sess.mu.Unlock()
		return true, "Device profile received.", s.profileReply

	case session.ActionAppState:
		var p session.AppState
		if err := req.DecodePayload(&p); err != nil || p.Normalized() == "" {
			return false, "App state payload was invalid.", nil
		}
		sess.mu.Lock()
		sess.appState = p.Normalized()
		sess.mu.Unlock()
		return true, "App state received.", nil

	case session.ActionSessionProperties:
		var p session.SessionProperties
		if err := req.DecodePayload(&p); err != nil || len(p.CustomProperties) == 0 || p.CustomProperties.Kind() != '{' {
			return false, "customProperties must be a JSON object.", nil
		}
		sess.mu.Lock()
		sess.properties = p.CustomProperties.Clone()
		sess.mu.Unlock()
		return true, "Session properties received.", nil

	case session.ActionClientLog:
		// A null payload, or no data, is an empty line (the official host logs "<empty>").
		var p session.ClientLog
		if len(req.Payload) != 0 {
			if err := req.DecodePayload(&p); err != nil {
				return false, "Client log payload was invalid.", nil
			}
		}
		if p.Data == "" {
			p.Data = "<empty>"
		}
		s.log.Debug("host: client log", "session", sess.id, "line", p.Data)
		return true, "Client log received.", nil

	case session.ActionSessionComplete:
		return true, "Session complete acknowledged.", nil

	case session.ActionCrashHandoff:
		ok, message := s.crashHandoff(sess, req)
		return ok, message, nil

	case session.ActionAnnotationSubmit:
		ok, message := s.annotationSubmit(sess, c, req)
		return ok, message, nil
	}
	return false, fmt.Sprintf("Unsupported control action '%s'.", req.Action), nil
}
