package host

import (
	"context"
)

// EventKind says what happened to a session.
type EventKind int

// Event kinds.
const (
	// EventConnected: a session got a connection, new or resumed.
	EventConnected EventKind = iota + 1
	// EventUpdated: the app opened the session, or sent its profile, state or properties.
	EventUpdated
	// EventDisconnected: the session's connection ended (the session stays listed as
	// disconnected until evicted).
	EventDisconnected
	// EventRemoved: a disconnected session was evicted from the registry.
	EventRemoved
	// EventCrashReport: the session received a crash report (Event.Crash): one of its
	// app's processes crashed and the next one handed the report over.
	EventCrashReport
	// EventAnnotation: the session received an annotated-feedback bundle
	// (Event.Annotation).
	EventAnnotation
)

// String names the kind.
func (k EventKind) String() string {
	switch k {
	case EventConnected:
		return "connected"
	case EventUpdated:
		return "updated"
	case EventDisconnected:
		return "disconnected"
	case EventRemoved:
		return "removed"
	case EventCrashReport:
		return "crash-report"
	case EventAnnotation:
		return "annotation"
	}
	return "unknown"
}

// Event is a change of a session. Info is the session's state right after the change.
type Event struct {
	Kind    EventKind
	Session *Session
	Info    SessionInfo
	// Crash is the report kept, for EventCrashReport.
	Crash *CrashReport
	// Annotation is the bundle kept, for EventAnnotation.
	Annotation *Annotation
}

// Subscribe returns a channel of session changes, buffered to hold buffer events (64 when
// not positive), and a function that ends the subscription and closes the channel. Events
// are never blocked on: when the buffer is full, the event is dropped for that
// subscriber, which should re-read Sessions. The channel is closed when the server closes.
func (s *Server) Subscribe(buffer int) (<-chan Event, func()) { return s.events.Subscribe(buffer) }

// WaitSession returns the first session, in the order of Sessions, for which match reports
// true, waiting for session events until one does. It returns ctx's cause when ctx ends
// first, and ErrServerClosed when the server closes. The list is read again after every
// event, so an event dropped for a full buffer costs nothing: each change is published
// after the session shows it.
func (s *Server) WaitSession(ctx context.Context, match func(*Session) bool) (*Session, error) {
	events, unsubscribe := s.Subscribe(0)
	defer unsubscribe()
	for {
		for _, sess := range s.Sessions() {
			if match(sess) {
				return sess, nil
			}
		}
		select {
		case _, ok := <-events:
			if !ok {
				return nil, ErrServerClosed
			}
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}
