package recording

import "github.com/go-json-experiment/json/jsontext"

// Masking on intake (Options.MaskSensitive): for apps that do not mask their own screens
// (the official SDKs stream frames and touches as they are), the writer applies
// sensitive.go's screen rules before anything is stored, from the most recent visual tree
// of the session: a frame is boxed over that tree's sensitive nodes, or blacked out when
// no tree of the last frameTreeWindow can decide; a touch on a sensitive node, or with no
// tree of the last touchTreeWindow, is not stored; a typed value of ui.perform_action
// into a node not known to be harmless is replaced (typed.go). Trees arrive after the
// frames they describe at times: those frames are blacked out. Only the writer goroutine
// touches maskTrees and maskNodes.

// mask applies the screen rules to one message's entries for session.
func (r *Recorder) mask(session string, es []entry) []entry {
	out := es[:0]
	for _, e := range es {
		switch e.kind {
		case KindTree:
			t := treeRegions{at: e.at}
			if meta, err := members(e.data); err == nil {
				if at, ok := parseTime(meta.get("screenshotCapturedAtUtc")); ok {
					t.shotAt = at
				}
			}
			t.viewport, t.sensitive, t.known = regionsOf(jsontext.Value(e.blob))
			if r.maskTrees == nil {
				r.maskTrees = map[string]*treeRegions{}
			}
			r.maskTrees[session] = &t
			r.maskNodesOf(session).learnTree(e.blob)
		case KindTraffic:
			ix := r.maskNodesOf(session)
			ix.learnTraffic(e.data, e.blob)
			var n int
			e.data, e.blob, n = ix.maskTraffic(e.data, e.blob)
			r.maskedTyped.Add(int64(n))
		case KindTouch:
			ti := r.maskIndex(session)
			rec := Record{At: e.at, Data: e.data}
			if ti.judgeTouch(rec) != touchKeep {
				r.maskedTouches.Add(1)
				continue
			}
		case KindFrame:
			if len(e.blob) == 0 {
				break
			}
			t := r.maskIndex(session).forFrame("", e.at)
			b, boxes, err := boxFrame(e.blob, t)
			if err != nil {
				r.maskedFrames.Add(1)
				continue // a frame that cannot be decoded cannot be masked: it is not kept
			}
			if boxes > 0 {
				r.maskedFrames.Add(1)
				how := "boxed"
				if t == nil {
					how = "blackedOut"
				}
				e.blob = b
				if o, err := members(e.data); err == nil {
					e.data = o.set("masked", quoted(how)).encode()
				}
			}
		}
		out = append(out, e)
	}
	return out
}

// maskNodesOf is the session's index of sensitive nodes.
func (r *Recorder) maskNodesOf(session string) *nodeIndex {
	if r.maskNodes == nil {
		r.maskNodes = map[string]*nodeIndex{}
	}
	ix := r.maskNodes[session]
	if ix == nil {
		ix = &nodeIndex{}
		r.maskNodes[session] = ix
	}
	return ix
}

// maskIndex is the session's most recent tree as an index of one.
func (r *Recorder) maskIndex(session string) *treeIndex {
	if t := r.maskTrees[session]; t != nil {
		return &treeIndex{trees: []treeRegions{*t}}
	}
	return &treeIndex{}
}
