package host

import (
	"encoding/base64"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/ansight-go/ansight/wire"
	"github.com/ansight-go/ansight/wire/session"
)

// crashHandoff keeps the crash report of a crash.handoff request delivered by sess, with
// the official host's checks and messages: the report and its traces within their size
// bounds, its identity consistent with the request and the delivering process, and its
// target (the session of the process that crashed) of the same app and grant. It answers
// success only once the report is on disk; a report kept before is answered success again
// (the app retries when an answer is lost).
func (s *Server) crashHandoff(sess *Session, req *session.ControlEnvelope) (ok bool, message string) {
	var p session.CrashHandoff
	var r session.CrashReportBody
	if req.DecodePayload(&p) != nil || len(p.Report) == 0 || p.Report.Kind() != '{' || wire.Unmarshal(p.Report, &r) != nil ||
		r.Schema != session.CrashReportSchema {
		return false, "A crash handoff requires a current session and an " + session.CrashReportSchema + " report."
	}
	if blank(p.ReportID) || len(p.ReportID) > session.MaxCrashIDLength ||
		blank(p.TargetProcessSessionID) || len(p.TargetProcessSessionID) > session.MaxCrashIDLength ||
		p.ReportID != r.ReportID || p.TargetProcessSessionID != r.PreviousProcessSessionID ||
		blank(sess.processSessionID) || p.DeliveryProcessSessionID != sess.processSessionID ||
		(r.AppID != nil && *r.AppID != sess.appID) {
		return false, "Crash report identity does not match the handoff or delivering app."
	}
	if len(p.Report) > session.MaxCrashReportBytes {
		return false, "Crash report exceeds the 8 MiB handoff limit."
	}
	occurred, okTime := parseDotNetTime(r.OccurredAtUTC)
	if !okTime {
		return false, "Crash report occurrence time is invalid."
	}
	traces := map[string][]byte{}
	for name, b64 := range map[string]*string{"native.trace": r.TraceBase64, "metrickit.json": r.MetricKitPayloadBase64} {
		if b64 == nil {
			continue
		}
		if base64.StdEncoding.DecodedLen(len(*b64)) > session.MaxCrashTraceBytes+3 {
			return false, "Could not retain crash report: Crash trace exceeds 4 MiB."
		}
		b, err := base64.StdEncoding.DecodeString(*b64)
		if err != nil {
			return false, "Could not retain crash report: " + name + " is not valid base64."
		}
		if len(b) > session.MaxCrashTraceBytes {
			return false, "Could not retain crash report: Crash trace exceeds 4 MiB."
		}
		traces[name] = b
	}
	target, err := s.crashTarget(sess, p.TargetSessionID, p.TargetProcessSessionID)
	if err != nil {
		return false, err.Error()
	}
	c := CrashReport{
		ID: crashID(p.TargetProcessSessionID, p.ReportID), ReportID: p.ReportID, SessionID: target.id,
		ProcessSessionID: p.TargetProcessSessionID, DeliveredBy: sess.id, Platform: r.Platform, Kind: r.Kind,
		Confidence: r.Confidence, OccurredAt: occurred, ReceivedAt: s.now().UTC(),
	}
	if r.Candidate != nil {
		c.Message = cutUTF8(r.Candidate.Message, maxCrashMessage)
	}
	c, kept, err := s.records.saveCrash(c, p.Report, traces)
	if err != nil {
		s.log.Warn("host: crash report not kept", "session", target.id, "report", p.ReportID, "err", err)
		return false, "Could not retain crash report: " + err.Error()
	}
	if kept {
		s.log.Info("host: crash report kept", "session", target.id, "deliveredBy", sess.id, "report", p.ReportID, "kind", c.Kind)
		target.mu.Lock()
		target.crashReports++
		target.mu.Unlock()
		s.events.Publish(Event{Kind: EventCrashReport, Session: target, Info: target.Info(), Crash: &c})
		s.recordKept(target.id, "crash", crashSummary(c), c.OccurredAt, c, filepath.Join(c.Dir, crashReportName))
	}
	return true, fmt.Sprintf("Crash report retained in session '%s'.", target.id)
}

// crashSummary is a report's one line: "native_crash: SIGSEGV in libgame.so".
func crashSummary(c CrashReport) string {
	var parts []string
	for _, p := range []string{c.Kind, strings.TrimSpace(c.Message)} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return "crash"
	}
	return strings.Join(parts, ": ")
}

// crashTarget picks the session a crash report belongs to: the one named by targetID, or
// else the one of the crashed process (same app, grant and processSessionId), or else the
// delivering session itself (the crash came before any host connection, or its session
// was evicted). A named session of another app, grant or process is refused: an app
// delivers crash reports into its own sessions only.
func (s *Server) crashTarget(sess *Session, targetID, processID string) (*Session, error) {
	mine := func(t *Session) bool {
		return t.appID == sess.appID && t.grantID == sess.grantID && t.processSessionID == processID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.sessions[targetID]; ok && targetID != "" {
		if !mine(t) {
			//lint:ignore ST1005 the official host's words, sent to the app as its control message
			return nil, errors.New("Crash report target does not belong to this app registration and process.")
		}
		return t, nil
	}
	for _, t := range s.sessions {
		if mine(t) {
			return t, nil
		}
	}
	return sess, nil
}

// cutUTF8 returns at most n bytes of s, cut at a character boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
