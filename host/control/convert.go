package control

import (
	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/recording"
)

// The host and the recorder have types of their own for what the API describes; hostapi,
// a contract, has its own, so that its clients link neither. Where the two have the same
// fields, a conversion (which the compiler refuses when one gains a field) copies them.

func crashesOf(list []host.CrashReport) []hostapi.CrashReport {
	out := make([]hostapi.CrashReport, len(list))
	for i, c := range list {
		files := make([]hostapi.RecordFile, len(c.Files))
		for j, f := range c.Files {
			files[j] = hostapi.RecordFile(f)
		}
		out[i] = hostapi.CrashReport{ID: c.ID, ReportID: c.ReportID, SessionID: c.SessionID, ProcessSessionID: c.ProcessSessionID,
			DeliveredBy: c.DeliveredBy, Platform: c.Platform, Kind: c.Kind, Confidence: c.Confidence, Message: c.Message,
			OccurredAt: c.OccurredAt, ReceivedAt: c.ReceivedAt, Dir: c.Dir, Files: files}
	}
	return out
}

func annotationsOf(list []host.Annotation) []hostapi.Annotation {
	out := make([]hostapi.Annotation, len(list))
	for i, a := range list {
		out[i] = hostapi.Annotation(a)
	}
	return out
}

func recordOf(r recording.Record) hostapi.Record {
	return hostapi.Record{Seq: r.Seq, Session: r.Session, Kind: hostapi.RecordKind(r.Kind), At: r.At, Level: r.Level.String(),
		Text: r.Text, Channel: r.Channel, Value: r.Value, Data: r.Data, Blob: r.Blob, BlobBytes: r.BlobBytes, Size: r.Size}
}

func recordsOf(list []recording.Record) []hostapi.Record {
	out := make([]hostapi.Record, len(list))
	for i, r := range list {
		out[i] = recordOf(r)
	}
	return out
}

func kindsOf(list []hostapi.RecordKind) []recording.Kind {
	if list == nil {
		return nil
	}
	out := make([]recording.Kind, len(list))
	for i, k := range list {
		out[i] = recording.Kind(k)
	}
	return out
}

// eventOf names a host event as the API does (host.EventKind's names).
func eventOf(ev host.Event) hostapi.Event {
	return hostapi.Event{Kind: hostapi.EventKind(ev.Kind.String()), SessionID: ev.Info.ID}
}
