package conformance

import (
	"fmt"

	"github.com/ansight-go/ansight/wire"
)

// finalChecks look back over everything the run exchanged; they always run last.
var finalChecks = []check{
	{"final.asft_frames", "every binary message of the run is a valid ASFT frame of a transfer announced earlier, in order, ending at its sizeBytes (docs/protocol/artifacts.md#sending)", checkFinalFrames},
	{"final.envelopes", "every response of the run is a strictly decodable envelope that answers exactly one request (docs/protocol/messages.md#correlation)", checkFinalEnvelopes},
	{"final.encoding", "every response payload of the run follows the compression rule: wrapped iff at least 32768 bytes and smaller wrapped (docs/protocol/messages.md#encoding-a-payload)", checkFinalEncoding},
}

func checkFinalFrames(c *cx) {
	r := c.r
	for _, id := range keysOf(r.transfers) {
		if t := r.transfers[id]; !t.done {
			if err := r.awaitTransfer(c.ctx, id); err != nil {
				r.frameLog = append(r.frameLog, fmt.Sprintf("transfer %s (announced in answer to %s) did not end: %v", id, t.requestID, err))
			}
		}
	}
	list := append([]string(nil), r.frameLog...)
	for _, id := range keysOf(r.transfers) {
		list = append(list, r.transfers[id].problems...)
	}
	for _, id := range keysOf(r.early) {
		list = append(list, fmt.Sprintf("%d frame(s) of transfer %s, which no response announced", len(r.early[id]), id))
	}
	c.problems("ASFT frames only for announced transfers, after their response, in order (docs/protocol/artifacts.md#sending)", list)
}

func checkFinalEnvelopes(c *cx) {
	r := c.r
	var list []string
	answers := map[string]int{}
	lenient := false
	for _, s := range r.sent {
		lenient = lenient || s.lenient
	}
	for _, p := range r.responses {
		if p.env == nil {
			list = append(list, fmt.Sprintf("a response could not be read (%v): %s", p.err, shorten(p.raw)))
			continue
		}
		s := r.sent[p.env.ReplyTo]
		if s == nil && p.env.ReplyTo == "" && p.env.Type == wire.TypeError && lenient {
			list = append(list, envelopeProblems(p, nil)...)
			continue
		}
		if s == nil {
			list = append(list, fmt.Sprintf("a %s answers no request of the run (replyTo %q): %s", p.env.Type, p.env.ReplyTo, shorten(p.raw)))
			continue
		}
		answers[s.id]++
		if answers[s.id] == 2 {
			list = append(list, fmt.Sprintf("request %s was answered more than once", s.id))
		}
		for _, e := range envelopeProblems(p, s) {
			list = append(list, fmt.Sprintf("answer to %s: %s", s.id, e))
		}
	}
	c.problems("responses correlated by replyTo, one per request (docs/protocol/messages.md#correlation)", dedupe(list))
}

func checkFinalEncoding(c *cx) {
	var list []string
	for _, p := range c.r.responses {
		if p.env == nil || len(p.env.Payload) == 0 {
			continue
		}
		var probs []string
		if p.wrapped {
			probs = wrapperProblems(p.env.Payload)
		} else {
			probs = plainProblems(p.env.Payload)
		}
		for _, e := range probs {
			list = append(list, fmt.Sprintf("%s answering %s: %s", p.env.Type, p.env.ReplyTo, e))
		}
	}
	c.problems("the compression rule on every response (docs/protocol/messages.md#encoding-a-payload)", list)
}

// dedupe drops repeated lines, keeping the first ten distinct ones and a count of the rest.
func dedupe(list []string) []string {
	seen := map[string]bool{}
	var out []string
	rest := 0
	for _, s := range list {
		if seen[s] {
			continue
		}
		seen[s] = true
		if len(out) < 10 {
			out = append(out, s)
		} else {
			rest++
		}
	}
	if rest > 0 {
		out = append(out, fmt.Sprintf("… and %d more", rest))
	}
	return out
}
