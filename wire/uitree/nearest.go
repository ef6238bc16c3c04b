package uitree

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ansight-go/ansight/internal/editdist"
)

// Candidate is a node close to a selector that matched nothing, with the criteria it
// fails: what a person needs to see why nothing matched.
type Candidate struct {
	Node *Node
	// Score is how close the node is, 0–1 (1 would be a match).
	Score float64
	// Missed names the criteria the node fails ("text", "role", "visible", …).
	Missed []string
}

// maxCompareRunes bounds the strings the similarity compares, so that a failure report
// stays cheap on any tree.
const maxCompareRunes = 64

// Nearest returns up to k nodes closest to s (s normalized), best first: each criterion
// scores 1 when it holds, a string one partly by similarity (a case or substring
// difference scores high, an edit distance lower), a state one 0; the node's score is the
// average. Nodes scoring 0 are left out.
func (t *Tree) Nearest(s Selector, k int) []Candidate {
	s = s.Normalize()
	var out []Candidate
	for _, n := range t.nodes {
		if n.injected {
			continue
		}
		c := Candidate{Node: n}
		total, count := 0.0, 0
		add := func(name string, score float64) {
			total += score
			count++
			if score < 1 {
				c.Missed = append(c.Missed, name)
			}
		}
		str := func(name, want string, match func(a, w string) bool, actual ...string) {
			if want == "" {
				return
			}
			best := 0.0
			for _, a := range actual {
				best = max(best, similarity(a, want, match, name != "nodeId"))
			}
			add(name, best)
		}
		str("nodeId", s.NodeID, s.equal, trim(n.ID))
		str("automationId", s.AutomationID, s.automation, n.AutomationID)
		str("text", s.Text, s.text, n.Text)
		str("role", s.Role, s.text, n.Role)
		str("type", s.Type, s.text, n.Type)
		if s.Ancestor != "" {
			var ids []string
			for p := n.Parent; p != nil; p = p.Parent {
				ids = append(ids, p.AutomationID)
			}
			str("ancestor", s.Ancestor, s.automation, ids...)
		}
		str("action", s.Action, s.text, n.Actions...)
		if s.Visible != nil {
			add("visible", b2f(n.shown == *s.Visible))
		}
		if s.Enabled != nil {
			add("enabled", b2f(n.usable == *s.Enabled))
		}
		if count == 0 {
			continue
		}
		if c.Score = total / float64(count); c.Score > 0 {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b Candidate) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	if len(out) > k {
		out = out[:k]
	}
	return out
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// similarity scores how close actual is to want, 0–1: 1 when match holds, else (when
// partial) by case, substring and edit distance.
func similarity(actual, want string, match func(a, w string) bool, partial bool) float64 {
	if actual == "" {
		return 0
	}
	if match(actual, want) {
		return 1
	}
	if !partial {
		return 0
	}
	a, w := strings.ToLower(actual), strings.ToLower(want)
	switch {
	case a == w:
		return 0.9 // only the case differs
	case strings.Contains(a, w) || strings.Contains(w, a):
		return 0.7
	}
	a, w = clip(a), clip(w)
	d := editdist.Distance(a, w)
	longest := max(utf8.RuneCountInString(a), utf8.RuneCountInString(w))
	if longest == 0 {
		return 0
	}
	return max(0, 0.6*(1-float64(d)/float64(longest)))
}

func clip(s string) string {
	if utf8.RuneCountInString(s) <= maxCompareRunes {
		return s
	}
	return string([]rune(s)[:maxCompareRunes])
}
