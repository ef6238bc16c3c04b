package hostapi

import (
	"net/http"
	"net/url"
	"strings"
)

// route is one endpoint of the HTTP API, read by both ends: NewHandler serves pattern
// (net/http's ServeMux syntax, {name} for a path segment) with serve, and Client calls it,
// filling the wildcards in order. A route exists once, so the two ends cannot drift.
type route struct {
	method  string
	pattern string
	serve   func(h *handler, w http.ResponseWriter, r *http.Request)
}

// target is a route with its wildcards filled in: the method and path Client sends.
type target struct{ method, path string }

// at returns the route with its wildcards replaced, in order, by args, each escaped as one
// path segment.
func (rt *route) at(args ...string) target {
	var b strings.Builder
	rest := rt.pattern
	for _, a := range args {
		i, j := strings.IndexByte(rest, '{'), strings.IndexByte(rest, '}')
		if i < 0 || j < i {
			panic("hostapi: too many arguments for " + rt.pattern)
		}
		b.WriteString(rest[:i])
		b.WriteString(url.PathEscape(a))
		rest = rest[j+1:]
	}
	if strings.IndexByte(rest, '{') >= 0 {
		panic("hostapi: too few arguments for " + rt.pattern)
	}
	b.WriteString(rest)
	return target{rt.method, b.String()}
}

// The routes of the HTTP API (docs/control-api.md).
var (
	routeStatus          = &route{http.MethodGet, "/v1/status", answer(Backend.Status)}
	routeSessions        = &route{http.MethodGet, "/v1/sessions", answer(Backend.Sessions)}
	routeSession         = &route{http.MethodGet, "/v1/sessions/{id}", answerByID(Backend.Session)}
	routeCrashes         = &route{http.MethodGet, "/v1/sessions/{id}/crashes", answerByID(Backend.Crashes)}
	routeAnnotations     = &route{http.MethodGet, "/v1/sessions/{id}/annotations", answerByID(Backend.Annotations)}
	routeTools           = &route{http.MethodPost, "/v1/sessions/{id}/tools", (*handler).tools}
	routeTool            = &route{http.MethodGet, "/v1/sessions/{id}/tools/{tool}", (*handler).tool}
	routeCall            = &route{http.MethodPost, "/v1/sessions/{id}/call", (*handler).call}
	routeBatch           = &route{http.MethodPost, "/v1/sessions/{id}/batch", (*handler).batch}
	routeUI              = &route{http.MethodPost, "/v1/sessions/{id}/ui", (*handler).ui}
	routeRecords         = &route{http.MethodGet, "/v1/sessions/{id}/records", (*handler).records}
	routeBlob            = &route{http.MethodGet, "/v1/sessions/{id}/records/{seq}/blob", (*handler).blob}
	routeExport          = &route{http.MethodGet, "/v1/sessions/{id}/export", (*handler).export}
	routeDisconnect      = &route{http.MethodPost, "/v1/sessions/{id}/disconnect", answerByID(Backend.Disconnect)}
	routeRename          = &route{http.MethodPost, "/v1/sessions/{id}/rename", (*handler).rename}
	routeEvents          = &route{http.MethodGet, "/v1/events", (*handler).events}
	routeRecordings      = &route{http.MethodGet, "/v1/recordings", answer(Backend.Recordings)}
	routeImport          = &route{http.MethodPost, "/v1/recordings", (*handler).importRecording}
	routeDeleteRecording = &route{http.MethodDelete, "/v1/recordings/{id}", (*handler).deleteRecording}
	routeIssueInvite     = &route{http.MethodPost, "/v1/invites", (*handler).issueInvite}
	routeInvites         = &route{http.MethodGet, "/v1/invites", answer(Backend.Invites)}
	routeRevoke          = &route{http.MethodDelete, "/v1/pairings/{id}", answerByID(Backend.Revoke)}
	routeRevokeInvite    = &route{http.MethodDelete, "/v1/invites/{id}", answerByID(Backend.Revoke)} // the path of earlier versions
	routeForget          = &route{http.MethodPost, "/v1/pairings/{id}/forget", answerByID(Backend.Forget)}
	routePlayer          = &route{http.MethodGet, "/v1/player", (*handler).player}
	routePlayerToken     = &route{http.MethodPost, "/v1/player/token", (*handler).player}
	routeShutdown        = &route{http.MethodPost, "/v1/shutdown", (*handler).shutdown}
)

// routes is the route table NewHandler serves.
var routes = []*route{
	routeStatus, routeSessions, routeSession, routeCrashes, routeAnnotations, routeTools, routeTool, routeCall,
	routeBatch, routeUI, routeRecords, routeBlob, routeExport, routeDisconnect, routeRename, routeEvents, routeRecordings, routeImport,
	routeDeleteRecording, routeIssueInvite, routeInvites, routeRevoke, routeRevokeInvite, routeForget, routePlayer,
	routePlayerToken, routeShutdown,
}
