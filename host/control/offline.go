package control

import (
	"context"
	"errors"
	"net/http"

	"github.com/go-json-experiment/json"

	"github.com/ansight-go/ansight/host"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/recording"
	"github.com/ansight-go/ansight/wire"
)

// noHost answers what only a running host can do, on a Backend without one.
func (l *Backend) noHost() error {
	if l.archive != "" {
		return hostapi.Errorf(http.StatusServiceUnavailable, wire.CodeHostUnavailable,
			"this is the archive %s, read without a host: what needs the app's live session (its tools, files, data, screen) is not in it", l.archive)
	}
	return hostapi.Errorf(http.StatusServiceUnavailable, wire.CodeHostUnavailable,
		"no ansight host is running: start one with 'ansight host run' (recordings are read without one)")
}

// NewOffline returns a read-only hostapi.Backend over recordings alone, with no host: the
// recordings a stopped host left (rec opened with recording.OpenReadOnly) or an archive
// opened with recording.OpenArchive. It lists, describes, browses, follows and exports
// recordings, and the crash reports and annotations they hold; everything that needs a
// live host (sessions' tools, pairing, events) answers CodeHostUnavailable, and so do
// Import and DeleteRecording on a read-only store.
func NewOffline(rec *recording.Recorder, opts Options) *Backend {
	return &Backend{rec: rec, version: opts.Version, stateDir: opts.StateDir, archive: opts.Archive}
}

// live returns the host's session id, when a host runs and holds it.
func (l *Backend) live(id string) (*host.Session, bool) {
	if l.srv == nil {
		return nil, false
	}
	return l.srv.Session(id)
}

// offlineCrashes lists a recording's crash reports from its records: each is the host's
// listing entry as it was kept.
func (l *Backend) offlineCrashes(ctx context.Context, id string) (*hostapi.Crashes, error) {
	list, err := kept(ctx, l, id, recording.KindCrash, func(r recording.Record, c *host.CrashReport) {
		// An imported report keeps the report's own members (reportId, occurredAtUtc…),
		// not the host's description: what it lacks comes from the record.
		if c.OccurredAt.IsZero() {
			c.OccurredAt = r.At
		}
		if c.ID == "" {
			c.ID = c.ReportID
		}
		if c.SessionID == "" {
			c.SessionID = r.Session
		}
	})
	if err != nil {
		return nil, err
	}
	return &hostapi.Crashes{Schema: hostapi.SchemaCrashes, SessionID: id, Crashes: crashesOf(list)}, nil
}

// offlineAnnotations is offlineCrashes for annotated-feedback bundles.
func (l *Backend) offlineAnnotations(ctx context.Context, id string) (*hostapi.Annotations, error) {
	list, err := kept(ctx, l, id, recording.KindAnnotation, func(r recording.Record, a *host.Annotation) {
		var imported struct {
			AnnotationID string `json:"annotationId"`
		}
		json.Unmarshal(r.Data, &imported)
		if a.ID == "" {
			a.ID = imported.AnnotationID
		}
		if a.CapturedAt.IsZero() {
			a.CapturedAt = r.At
		}
		if a.SessionID == "" {
			a.SessionID = r.Session
		}
		if a.SizeBytes == 0 {
			a.SizeBytes = r.BlobBytes
		}
	})
	if err != nil {
		return nil, err
	}
	return &hostapi.Annotations{Schema: hostapi.SchemaAnnotations, SessionID: id, Annotations: annotationsOf(list)}, nil
}

// kept reads the host's listing entries a recording kept as records of kind, newest first
// (as the host lists them), completed by fill from the record; an entry that does not read
// is left out.
func kept[T any](ctx context.Context, l *Backend, id string, kind recording.Kind, fill func(recording.Record, *T)) ([]T, error) {
	if err := l.recorded(id); err != nil {
		return nil, err
	}
	out := []T{}
	q := recording.Query{Session: id, Kinds: []recording.Kind{kind}, Newest: true, Limit: recording.MaxLimit}
	for {
		p, err := l.rec.Records(ctx, q)
		if err != nil {
			return nil, hostapi.Errorf(http.StatusInternalServerError, wire.CodeInternal, "%v", err)
		}
		for _, r := range p.Records {
			var v T
			if json.Unmarshal(r.Data, &v) == nil {
				fill(r, &v)
				out = append(out, v)
			}
		}
		if p.Next == 0 {
			return out, nil
		}
		q.After = p.Next
	}
}

// readOnly maps the recorder's refusal of a change to the answer of a Backend without a
// host.
func (l *Backend) readOnly(err error) error {
	if errors.Is(err, recording.ErrReadOnly) {
		return l.noHost()
	}
	return err
}
