package host

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/host/tools"
	"github.com/ansight-go/ansight/transport"
	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/session"
)

// Recorder keeps what sessions send, for Options.Recorder; recording.Recorder implements
// it. Every method is called on a session's reader goroutine (RecordTraffic on the
// goroutine that sends or receives) and must return at once: it queues, it never waits
// for a disk. The server does not reuse the data it hands over.
type Recorder interface {
	// RecordMessage is given every inbound message that is neither a tool response nor a
	// control request: telemetry text (CLIENT_*, DeviceAppProfile, anything else) and
	// live frames (binary ASJP).
	RecordMessage(sessionID string, typ transport.MessageType, data []byte, at time.Time)
	// RecordControl is given every control request with the server's answer.
	RecordControl(sessionID, action string, payload []byte, ok bool, message string, at time.Time)
	// RecordSession is given every session change ("connected", "updated",
	// "disconnected", "removed") with the session's SessionInfo as JSON.
	RecordSession(sessionID, event string, at time.Time, info []byte)
	// RecordTraffic is given the session's tool traffic (tools.Options.OnTraffic).
	RecordTraffic(ev wire.TrafficEvent)
	// RecordKept is given what the server keeps for a session in its directory, once it
	// is on disk: a crash report (kind "crash", meta its CrashReport as JSON, path its
	// report.json) or an annotated-feedback bundle ("annotation", its Annotation, the
	// bundle), with a one-line summary and its time. The file stays the server's: the
	// recorder links it rather than copying it, and must not change it.
	RecordKept(sessionID, kind, summary string, at time.Time, meta []byte, path string)
	// Recorded reports whether a recording holds the id: a new session never gets an id
	// that a recording from an earlier run of the host holds.
	Recorded(sessionID string) bool
}

// recordTraffic makes a session's tool client report its traffic to the recorder too.
func (s *Server) recordTraffic(topts *tools.Options) {
	rec := s.opts.Recorder
	if rec == nil {
		return
	}
	next := topts.OnTraffic
	topts.OnTraffic = func(ev wire.TrafficEvent) {
		forRecorder := ev
		if ev.Kind == wire.TrafficTransfer && filepath.Base(filepath.Dir(ev.Path)) == annotationsDir {
			// An annotation bundle on its way in: recorded as an annotation once kept
			// (recordKept), not as an artifact under its temporary name.
			forRecorder.Path = ""
		}
		rec.RecordTraffic(forRecorder)
		if next != nil {
			next(ev)
		}
	}
}

// recordKept hands a crash report or an annotation the server kept to the recorder.
func (s *Server) recordKept(sessionID, kind, summary string, at time.Time, meta any, path string) {
	if s.opts.Recorder == nil {
		return
	}
	b, err := json.Marshal(meta)
	if err != nil {
		b = nil
	}
	s.opts.Recorder.RecordKept(sessionID, kind, summary, at, b, path)
}

// recordMessage hands an inbound message nobody consumed to the recorder.
func (s *Server) recordMessage(sess *Session, typ transport.MessageType, data []byte) {
	if s.opts.Recorder != nil {
		s.opts.Recorder.RecordMessage(sess.id, typ, data, s.now())
	}
}

// recordControl hands a control request and its answer to the recorder.
func (s *Server) recordControl(sess *Session, req *session.ControlEnvelope, ok bool, message string) {
	if s.opts.Recorder != nil {
		s.opts.Recorder.RecordControl(sess.id, req.Action, req.Payload, ok, message, s.now())
	}
}

// recordSession hands a session change to the recorder.
func (s *Server) recordSession(sess *Session, kind EventKind, info SessionInfo) {
	if s.opts.Recorder == nil {
		return
	}
	b, err := json.Marshal(info)
	if err != nil {
		b = nil
	}
	s.opts.Recorder.RecordSession(sess.id, kind.String(), s.now(), b)
}

// Defaults of the live-screen policy answered to device.profile (the official SDKs' own
// defaults), and the values Options.JpegCapture may give instead.
const (
	DefaultJpegIntervalMilliseconds = 2000
	DefaultJpegQuality              = 60

	// MinJpegIntervalMilliseconds is the shortest interval: 20 frames a second, the most
	// the Go SDK streams. MaxJpegIntervalMilliseconds is ten minutes.
	MinJpegIntervalMilliseconds = 50
	MaxJpegIntervalMilliseconds = 600_000
	MinJpegQuality              = 1
	MaxJpegQuality              = 100
)

// checkJpegCapture refuses a live-screen policy out of range; zero values take the defaults.
func checkJpegCapture(p session.JpegCapturePolicy) error {
	if ms := p.IntervalMilliseconds; ms != 0 && (ms < MinJpegIntervalMilliseconds || ms > MaxJpegIntervalMilliseconds) {
		return fmt.Errorf("host: JpegCapture.IntervalMilliseconds %d is out of range %d-%d", ms, MinJpegIntervalMilliseconds, MaxJpegIntervalMilliseconds)
	}
	if q := p.Quality; q != 0 && (q < MinJpegQuality || q > MaxJpegQuality) {
		return fmt.Errorf("host: JpegCapture.Quality %d is out of range %d-%d", q, MinJpegQuality, MaxJpegQuality)
	}
	return nil
}

// deviceProfileReply is the device.profile answer's payload: the sessionJpegCapture policy
// (checked by New), with the defaults where it says nothing.
func deviceProfileReply(p session.JpegCapturePolicy) jsontext.Value {
	if p.Mode == "" {
		p.Mode = session.JpegCaptureApp
	}
	if p.FallbackMode == "" {
		p.FallbackMode = session.JpegCaptureApp
	}
	if p.IntervalMilliseconds == 0 {
		p.IntervalMilliseconds = DefaultJpegIntervalMilliseconds
	}
	if p.Quality == 0 {
		p.Quality = DefaultJpegQuality
	}
	b, err := json.Marshal(session.DeviceProfileReply{SessionJpegCapture: p}, json.Deterministic(true))
	if err != nil {
		return jsontext.Value(`{"sessionJpegCapture":{"mode":"app"}}`)
	}
	return b
}
