package host

import (
	"encoding/hex"
	"errors"
	"strings"

	"github.com/ansight-go/ansight/host/tools"
	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/session"
)

// maxAnnotationBundle bounds one annotated-feedback bundle, as the official host does.
const maxAnnotationBundle = 512 << 20

// annotationSubmit accepts an annotation.submit request on connection c with the official
// host's checks and messages: it registers the announced transfer with the connection's
// tool client, whose ASFT machinery receives the frames that follow the answer, into the
// session's annotations directory. The bundle is kept, and EventAnnotation published, once
// the last frame is in; a transfer that fails leaves nothing.
func (s *Server) annotationSubmit(sess *Session, c *connection, req *session.ControlEnvelope) (ok bool, message string) {
	var p session.AnnotationSubmit
	if req.DecodePayload(&p) != nil || p.Schema != session.AnnotationSubmitSchema {
		return false, "Annotated feedback submission is missing a supported schema."
	}
	id, okID := normalizeGUID(p.ClientAnnotationID)
	if !okID {
		return false, "Annotated feedback submission is missing a valid clientAnnotationId."
	}
	captured, okTime := parseDotNetTime(p.CapturedAtUTC)
	if !okTime {
		return false, "Annotated feedback submission is missing a valid capturedAtUtc timestamp."
	}
	t := p.Transfer
	if t == nil {
		return false, "Annotated feedback submission is missing its binary transfer descriptor."
	}
	transferID, okTID := normalizeGUID(t.TransferID)
	if !okTID || t.SizeBytes == nil || *t.SizeBytes < 0 || *t.SizeBytes > maxAnnotationBundle {
		return false, "Annotated feedback transfer id or size is invalid."
	}
	if t.WireProtocol != wire.FileTransferProtocol || !strings.EqualFold(t.MimeType, session.AnnotationMimeType) {
		return false, "Annotated feedback transfer protocol or MIME type is unsupported."
	}
	if c == nil {
		return false, "Could not prepare annotated feedback transfer: the session has no connection."
	}
	dir, release, err := s.records.reserveAnnotation(sess.id, *t.SizeBytes)
	if err != nil {
		return false, "Could not prepare annotated feedback transfer: " + err.Error()
	}
	a := Annotation{ID: id, SessionID: sess.id, CapturedAt: captured, FileName: cutUTF8(t.FileName, 255),
		MimeType: session.AnnotationMimeType}
	err = c.client.Receive(tools.Incoming{TransferID: transferID, FileName: id + annotationExt + ".part",
		MimeType: a.MimeType, SizeBytes: *t.SizeBytes, Dir: dir}, func(tp tools.TransferProgress) {
		defer release()
		if tp.Status != tools.StatusComplete {
			s.log.Info("host: annotation transfer failed", "session", sess.id, "annotation", id, "err", tp.Err)
			return
		}
		a.ReceivedAt, a.SizeBytes = s.now().UTC(), tp.ReceivedBytes
		kept, stored, err := s.records.saveAnnotation(a, tp.Path)
		if err != nil {
			s.log.Warn("host: annotation not kept", "session", sess.id, "annotation", id, "err", err)
			return
		}
		if stored {
			s.log.Info("host: annotation kept", "session", sess.id, "annotation", id, "bytes", kept.SizeBytes)
			sess.mu.Lock()
			sess.annotations++
			sess.mu.Unlock()
			s.events.Publish(Event{Kind: EventAnnotation, Session: sess, Info: sess.Info(), Annotation: &kept})
			s.recordKept(sess.id, "annotation", "annotation "+kept.ID, kept.CapturedAt, kept, kept.Path)
		}
	})
	if err != nil {
		release()
		if errors.Is(err, tools.ErrTransferInUse) {
			return false, "Annotated feedback transfer '" + transferID + "' is already active."
		}
		return false, "Could not prepare annotated feedback transfer: " + err.Error()
	}
	return true, "Annotated feedback transfer accepted."
}

// normalizeGUID reads a GUID the way .NET's Guid.TryParse does for the formats the SDKs
// write (32 hex digits, or 8-4-4-4-12 with dashes, optionally in braces or parentheses)
// and returns its "N" form: 32 lower-case hex digits, what ASFT frames carry.
func normalizeGUID(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if len(s) == 38 && (s[0] == '{' && s[37] == '}' || s[0] == '(' && s[37] == ')') {
		s = s[1:37]
	}
	if len(s) == 36 {
		if s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
			return "", false
		}
		s = s[:8] + s[9:13] + s[14:18] + s[19:23] + s[24:]
	}
	if len(s) != 32 {
		return "", false
	}
	if _, err := hex.DecodeString(s); err != nil {
		return "", false
	}
	return strings.ToLower(s), true
}
