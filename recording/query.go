package recording

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/internal/label"
)

// ErrNotFound: no recording (or no file) by that name.
var ErrNotFound = errors.New("recording: not found")

// Query selects records of one session. The zero value of every filter selects all.
type Query struct {
	// Session is the recording's id. Required.
	Session string
	// Kinds keeps only these kinds (all when empty).
	Kinds []Kind
	// Since and Until keep records with Since <= At < Until (each ignored when zero).
	Since, Until time.Time
	// Level keeps log records of this level or above (and every record of another kind).
	Level Level
	// Search keeps records whose Text contains it, ignoring ASCII case.
	Search string
	// Channel keeps records of this metric channel (metrics, channel declarations,
	// events).
	Channel *int
	// After is the paging cursor: only records with Seq > After (the Next of the previous
	// page). With Newest, only records with Seq < After when After > 0.
	After int64
	// Newest returns the newest records first (the last lines of a log); otherwise oldest
	// first, in the order the host received them.
	Newest bool
	// Limit bounds the page (DefaultLimit when zero, at most MaxLimit).
	Limit int
}

// Page sizes.
const (
	DefaultLimit = 500
	MaxLimit     = 10000
)

// Page is one page of a query's records.
type Page struct {
	Records []Record `json:"records"`
	// Next is the cursor of the following page (Query.After), 0 when this page was the
	// last one for now: a followed query keeps the cursor of its last record instead.
	Next int64 `json:"next,omitzero"`
}

// Records returns one page of a session's records.
func (r *Recorder) Records(ctx context.Context, q Query) (Page, error) {
	if q.Session == "" {
		return Page{}, errors.New("recording: Query.Session is required")
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	var where []string
	args := []any{q.Session}
	where = append(where, "session = ?")
	if len(q.Kinds) > 0 {
		ph := make([]string, len(q.Kinds))
		for i, k := range q.Kinds {
			if !k.Valid() {
				return Page{}, fmt.Errorf("recording: unknown kind %q", k)
			}
			ph[i] = "?"
			args = append(args, string(k))
		}
		where = append(where, "kind IN ("+strings.Join(ph, ",")+")")
	}
	if !q.Since.IsZero() {
		where, args = append(where, "at >= ?"), append(args, micros(q.Since))
	}
	if !q.Until.IsZero() {
		where, args = append(where, "at < ?"), append(args, micros(q.Until))
	}
	if q.Level != 0 {
		where, args = append(where, "(kind <> 'log' OR level >= ?)"), append(args, int(q.Level))
	}
	if q.Search != "" {
		where, args = append(where, `text LIKE ? ESCAPE '\'`), append(args, "%"+likeEscape(q.Search)+"%")
	}
	if q.Channel != nil {
		where, args = append(where, "channel = ?"), append(args, *q.Channel)
	}
	order := "ASC"
	if q.Newest {
		order = "DESC"
		if q.After > 0 {
			where, args = append(where, "seq < ?"), append(args, q.After)
		}
	} else if q.After > 0 {
		where, args = append(where, "seq > ?"), append(args, q.After)
	}
	args = append(args, limit+1)
	rows, err := r.db.QueryContext(ctx, `SELECT `+recordColumns+` FROM records WHERE `+strings.Join(where, " AND ")+
		` ORDER BY seq `+order+` LIMIT ?`, args...)
	if err != nil {
		return Page{}, fmt.Errorf("recording: query: %w", err)
	}
	defer rows.Close()
	p := Page{Records: []Record{}}
	for rows.Next() {
		rec, err := scanRecord(rows)
		if err != nil {
			return Page{}, fmt.Errorf("recording: query: %w", err)
		}
		p.Records = append(p.Records, rec)
	}
	if err := rows.Err(); err != nil {
		return Page{}, fmt.Errorf("recording: query: %w", err)
	}
	if len(p.Records) > limit {
		p.Records = p.Records[:limit]
		p.Next = p.Records[limit-1].Seq
	}
	return p, nil
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// Follow calls fn with each record q selects, oldest first, then with each new one as it
// is committed, until ctx ends (it then returns ctx's error) or fn returns an error (which
// Follow returns). q.Newest is ignored; q.After is where it starts.
func (r *Recorder) Follow(ctx context.Context, q Query, fn func(Record) error) error {
	q.Newest = false
	for {
		changed := r.Changed() // before the query: a commit after it wakes the wait
		p, err := r.Records(ctx, q)
		if err != nil {
			return err
		}
		for _, rec := range p.Records {
			if err := fn(rec); err != nil {
				return err
			}
			q.After = rec.Seq
		}
		if p.Next != 0 {
			continue
		}
		if err := r.waitChange(ctx, changed); err != nil {
			return err
		}
	}
}

// waitChange waits for the next commit (changed), or, read-only, for the next poll: no
// writer here says when records arrive, a host that started meanwhile writes them from its
// own process.
func (r *Recorder) waitChange(ctx context.Context, changed <-chan struct{}) error {
	var poll <-chan time.Time
	if r.readOnly {
		t := time.NewTimer(readOnlyPoll)
		defer t.Stop()
		poll = t.C
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-poll:
	case <-changed:
		if r.isClosed() {
			return ErrClosed
		}
	}
	return nil
}

// ErrClosed: the recorder was closed.
var ErrClosed = errors.New("recording: closed")

func (r *Recorder) isClosed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closed && len(r.queue) == 0
}

// Summary describes one recording.
type Summary struct {
	ID         string `json:"id"`
	AppID      string `json:"appId,omitzero"`
	DeviceID   string `json:"deviceId,omitzero"`
	DeviceName string `json:"deviceName,omitzero"`
	// State is the session's last state: connected, disconnected (also when the host
	// stopped while it was connected), or imported recordings' state at export.
	State string `json:"state,omitzero"`
	// Origin is "live" (recorded by this host) or "import".
	Origin string `json:"origin"`
	// FirstAt and LastAt span what the host received, by its clock.
	FirstAt time.Time `json:"firstAt"`
	LastAt  time.Time `json:"lastAt"`
	Records int64     `json:"records"`
	Bytes   int64     `json:"bytes"`
	// Dropped counts telemetry messages lost to a full intake buffer; Evicted records
	// removed for the budgets.
	Dropped int64 `json:"dropped"`
	Evicted int64 `json:"evicted"`
	// Label is the human name a user gave the session (Rename); empty when none.
	Label string `json:"label,omitzero"`
	// Info is the host's description of the session (host.SessionInfo's JSON).
	Info jsontext.Value `json:"info,omitzero"`
	// Import is what Import read and skipped; set only in Import's answer.
	Import *ImportReport `json:"import,omitempty"`
}

// Sessions lists the recordings, the most recently active first.
func (r *Recorder) Sessions(ctx context.Context) ([]Summary, error) {
	return r.summaries(ctx, "")
}

// Session describes one recording; ErrNotFound when there is none.
func (r *Recorder) Session(ctx context.Context, id string) (Summary, error) {
	list, err := r.summaries(ctx, id)
	if err != nil {
		return Summary{}, err
	}
	if len(list) == 0 {
		return Summary{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return list[0], nil
}

func (r *Recorder) summaries(ctx context.Context, id string) ([]Summary, error) {
	q := `SELECT id, app_id, device_id, device_name, state, origin, first_at, last_at, info, dropped, evicted, label FROM sessions`
	var args []any
	if id != "" {
		q += ` WHERE id = ?`
		args = append(args, id)
	}
	rows, err := r.db.QueryContext(ctx, q+` ORDER BY last_at DESC, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	defer rows.Close()
	var out []Summary
	for rows.Next() {
		var s Summary
		var first, last int64
		var info []byte
		if err := rows.Scan(&s.ID, &s.AppID, &s.DeviceID, &s.DeviceName, &s.State, &s.Origin, &first, &last, &info, &s.Dropped, &s.Evicted, &s.Label); err != nil {
			return nil, fmt.Errorf("recording: %w", err)
		}
		s.FirstAt, s.LastAt = time.UnixMicro(first).UTC(), time.UnixMicro(last).UTC()
		if r.readOnly && s.State == "connected" {
			s.State = "disconnected" // its host is not the one reading (see OpenReadOnly)
		}
		if len(info) > 0 {
			s.Info = info
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	r.mu.Lock()
	for i := range out {
		if st := r.sessions[out[i].ID]; st != nil {
			out[i].Records, out[i].Bytes = st.records, st.bytes
			out[i].Dropped = max(out[i].Dropped, st.dropped)
		}
	}
	r.mu.Unlock()
	return out, nil
}

// MaxLabel bounds a session's label, in bytes.
const MaxLabel = label.MaxBytes

// Rename gives session id a label (an empty one removes it), kept with its recording and
// across restarts. A session that has no recording yet (an app just connected, whose first
// records are not written) gets one, so that the label is there when they are.
func (r *Recorder) Rename(ctx context.Context, id, label string) error {
	if r.readOnly {
		return ErrReadOnly
	}
	if len(label) > MaxLabel {
		return fmt.Errorf("recording: a label of %d bytes (at most %d)", len(label), MaxLabel)
	}
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	now := micros(r.opts.Clock())
	_, err := r.db.ExecContext(ctx, `INSERT INTO sessions(id, origin, first_at, last_at, label) VALUES(?, 'live', ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET label = excluded.label`, id, now, now, label)
	if err != nil {
		return fmt.Errorf("recording: rename %s: %w", id, err)
	}
	return nil
}

// CheckLabel returns label trimmed of the spaces around it, or why it is not one: longer
// than MaxLabel, not UTF-8, or holding a control or hidden character — the rule
// hostapi.CheckLabel applies too (internal/label), here to the labels archives bring in.
func CheckLabel(l string) (string, error) { return label.Check(l) }

// Labels returns the label of every recording that has one, by session id.
func (r *Recorder) Labels(ctx context.Context) (map[string]string, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT id, label FROM sessions WHERE label != ''`)
	if err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, label string
		if err := rows.Scan(&id, &label); err != nil {
			return nil, fmt.Errorf("recording: %w", err)
		}
		out[id] = label
	}
	return out, rows.Err()
}

// Counts returns how many records of each kind a recording holds.
func (r *Recorder) Counts(ctx context.Context, id string) (map[Kind]int64, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT kind, COUNT(*) FROM records WHERE session = ? GROUP BY kind`, id)
	if err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	defer rows.Close()
	out := map[Kind]int64{}
	for rows.Next() {
		var k string
		var n int64
		if err := rows.Scan(&k, &n); err != nil {
			return nil, fmt.Errorf("recording: %w", err)
		}
		out[Kind(k)] = n
	}
	return out, rows.Err()
}

// Record returns one record by its seq; ErrNotFound when it is gone (evicted).
func (r *Recorder) Record(ctx context.Context, seq int64) (Record, error) {
	rec, err := scanRecord(r.db.QueryRowContext(ctx, `SELECT `+recordColumns+` FROM records WHERE seq = ?`, seq))
	if err == sql.ErrNoRows {
		return rec, fmt.Errorf("%w: record %d", ErrNotFound, seq)
	}
	return rec, err
}

// OpenBlob opens a record's file (a frame's JPEG, a tree's JSON, an artifact).
func (r *Recorder) OpenBlob(rec Record) (io.ReadSeekCloser, error) {
	if rec.Blob == "" {
		return nil, fmt.Errorf("%w: record %d has no file", ErrNotFound, rec.Seq)
	}
	if rec.pack != "" {
		return r.openPacked(rec)
	}
	rel := filepath.FromSlash(rec.Blob)
	if !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("recording: invalid file name %q", rec.Blob)
	}
	f, err := os.Open(filepath.Join(r.dir, rel))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, rec.Blob)
	}
	return f, err
}
