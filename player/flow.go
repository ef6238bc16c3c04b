package player

import (
	"net/http"
	"strings"

	"github.com/ansight-go/ansight/flow"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// saveFlow answers GET /api/sessions/{id}/flow?since=…&until=…[&origin=…]: the calls the
// session's recording holds in that range as a flow file (docs/flows.md), as a download —
// the Timeline's "Save as flow" for the range the user marked.
func (p *Player) saveFlow(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	q := r.URL.Query()
	req, err := hostapi.ParseRecordsRequest(q)
	if err != nil {
		writeError(w, http.StatusBadRequest, wire.CodeBadRequest, err.Error())
		return
	}
	s, err := p.backend.Session(r.Context(), id)
	if err != nil {
		respond(w, nil, err)
		return
	}
	var origins []string
	for _, o := range q["origin"] {
		origins = append(origins, strings.Split(o, ",")...)
	}
	text, _, err := flow.RecordSession(r.Context(), p.backend, id, flow.RecordOptions{AppID: s.AppID, Since: req.Since, Until: req.Until, Origins: origins})
	if err != nil {
		respond(w, nil, err)
		return
	}
	w.Header().Set("Content-Type", "application/yaml; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="`+safeName(id)+`.flow.yaml"`)
	w.Header().Set("Cache-Control", "no-store")
	w.Write(text)
}

// safeName keeps letters, digits, '.', '-' and '_' of s for a file name.
func safeName(s string) string {
	return strings.Map(func(c rune) rune {
		if c == '.' || c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			return c
		}
		return '_'
	}, s)
}
