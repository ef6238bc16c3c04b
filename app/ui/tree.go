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
func project(root *Node, maxDepth, maxNodes int, includeBounds bool) (out *treeNodeJSON, count int, truncated bool) {
	type item struct {
		src   *Node
		dst   *treeNodeJSON
		depth int
	}
	out = &treeNodeJSON{nodeJSON: root.toJSON(includeBounds)}
	count = 1
	queue := []item{{root, out, 0}}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		if len(it.src.Children) == 0 {
			continue
		}
		if it.depth >= maxDepth {
			truncated = true
			continue
		}
		for _, c := range it.src.Children {
			if count >= maxNodes {
				truncated = true
				break
			}
			d := &treeNodeJSON{nodeJSON: c.toJSON(includeBounds)}
			it.dst.Children = append(it.dst.Children, d)
			count++
			queue = append(queue, item{c, d, it.depth + 1})
		}
	}
	return out, count, truncated
}
