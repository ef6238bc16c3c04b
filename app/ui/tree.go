package ui

import "time"

// treeResult is the result of ui.get_visual_tree.
type treeResult struct {
	Source        string        `json:"source"`
	SnapshotID    string        `json:"snapshotId"`
	Revision      int64         `json:"revision"`
	CapturedAtUtc time.Time     `json:"capturedAtUtc"`
	NodeCount     int           `json:"nodeCount"`
	TotalNodes    int           `json:"totalNodes"`
	Truncated     bool          `json:"truncated"`
	Root          *treeNodeJSON `json:"root"`
}

// project copies the subtree under root breadth-first, keeping at most maxDepth levels
// below it and maxNodes nodes in all. Breadth-first keeps a truncated tree balanced: an
// agent sees every top-level region before the details of the first one. A node whose
// children were cut keeps its childCount, and the result says it is truncated.
func project(root *Node, maxDepth, maxNodes int, d detail) (out *treeNodeJSON, count int, truncated bool) {
	truncated = walkBreadthFirst(root, maxDepth, maxNodes, func(n *Node, parent *treeNodeJSON) *treeNodeJSON {
		c := &treeNodeJSON{nodeJSON: n.toJSON(d)}
		if parent == nil {
			out = c
		} else {
			parent.Children = append(parent.Children, c)
		}
		count++
		return c
	})
	return out, count, truncated
}

// walkBreadthFirst visits root and its descendants breadth-first, at most maxDepth levels
// below root and maxNodes nodes in all, and reports whether it left nodes out. visit gets
// each node with what visit returned for its parent (the zero T for root).
func walkBreadthFirst[T any](root *Node, maxDepth, maxNodes int, visit func(n *Node, parent T) T) (truncated bool) {
	type item struct {
		n     *Node
		v     T
		depth int
	}
	var zero T
	queue := []item{{root, visit(root, zero), 0}}
	count := 1
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		if len(it.n.Children) == 0 {
			continue
		}
		if it.depth >= maxDepth {
			truncated = true
			continue
		}
		for _, c := range it.n.Children {
			if count >= maxNodes {
				return true
			}
			count++
			queue = append(queue, item{c, visit(c, it.v), it.depth + 1})
		}
	}
	return truncated
}
