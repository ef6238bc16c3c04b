package recording

import (
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// Control actions whose payloads become typed records (pairing's action names; repeated
// here so that the recorder depends on nothing of the host).
const (
	actionSessionOpen       = "session.open"
	actionSessionProperties = "session.properties"
	actionSessionComplete   = "session.complete"
	actionClientLog         = "client.log"
	actionDeviceProfile     = "device.profile"
	actionAppState          = "app.state"
	actionCrashHandoff      = "crash.handoff"
)

// control turns one control request and the host's answer into records. Accepted requests
// of known actions become typed records; anything else (refused requests, other actions,
// and the requests that hand over crash reports and annotations, whose content the host
// records with RecordKept once it is kept) is a KindControl record with the answer.
func (p parser) control(action string, payload []byte, ok bool, message string, arrival time.Time) []entry {
	obj, err := members(jsontext.Value(payload))
	hasObj := err == nil
	if ok {
		switch action {
		case actionClientLog:
			// A null or missing payload is a log line too ("<empty>", as the official host).
			line, _ := str(obj.get("data"))
			return []entry{logEntry(line, obj, arrival)}
		case actionDeviceProfile:
			if hasObj {
				return []entry{profile(obj, arrival)}
			}
		case actionAppState:
			if e, ok := appState(obj, arrival); ok {
				return []entry{e}
			}
		case actionSessionProperties:
			if hasObj {
				return []entry{{kind: KindProperties, at: timeOr(obj.get("updatedAtUtc"), arrival), data: obj.encode()}}
			}
		case actionSessionOpen:
			name, _ := str(obj.get("clientName"))
			return []entry{{kind: KindState, at: arrival, text: strings.TrimSpace("opened " + clip(name, 256)), data: obj.encode()}}
		case actionSessionComplete:
			return []entry{{kind: KindState, at: arrival, text: "complete", data: obj.encode()}}
		}
	}
	o := object{{"action", quoted(action)}, {"ok", jsontext.Value(boolText(ok))}, {"message", quoted(clip(message, maxTextBytes))}}
	switch {
	case len(payload) == 0:
	case ok && action == actionCrashHandoff:
		// The report the host kept is recorded as a crash record (RecordKept), its file
		// linked: the request is not stored a second time.
		o = append(o, member{"payloadBytes", jsonNumber(float64(len(payload)))})
	case len(payload) <= maxInlineBytes && jsontext.Value(payload).IsValid():
		o = append(o, member{"payload", compact(payload)})
	default:
		o = append(o, member{"payloadBytes", jsonNumber(float64(len(payload)))})
	}
	text := action
	if !ok {
		text += " refused: " + message
	}
	return []entry{{kind: KindControl, at: arrival, text: clip(text, maxTextBytes), data: o.encode()}}
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
