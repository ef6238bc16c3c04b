package ui

import (
	"runtime"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire/uitree"
)

// Adapter names the toolkit in a tree's "adapter" member (the official SDKs write
// "android.views", "apple.uikit").
const Adapter = "go.ui"

// platform is the official runtime platform name of the process's OS.
func platform() string {
	switch runtime.GOOS {
	case "linux", "windows", "android", "ios":
		return runtime.GOOS
	case "darwin":
		return "macos"
	}
	return "unknown"
}

// project copies the subtree under root breadth-first into the tree model, keeping at
// most maxDepth levels below it and maxNodes nodes in all. Breadth-first keeps a truncated
// tree balanced: an agent sees every top-level region before the details of the first
// one. A node whose children were cut keeps its childCount, and the result says it is
// truncated.
func project(root *Node, maxDepth, maxNodes int, d detail) (out *uitree.Node, count int, truncated bool) {
	truncated = walkBreadthFirst(root, maxDepth, maxNodes, func(n *Node, parent *uitree.Node) *uitree.Node {
		c := n.treeNode(d)
		if parent == nil {
			out = c
		} else {
			c.Parent = parent
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

// treeOf is the tree model of a snapshot's projection, ready to write as compact v2.
func (t *toolkit) treeOf(snap *snapshot, root *uitree.Node, count int, truncated bool, scope string) *uitree.Tree {
	return &uitree.Tree{
		Format:     uitree.FormatNative,
		Platform:   t.platform,
		Source:     snap.source,
		Adapter:    Adapter,
		CapturedAt: snap.capturedAt,
		SnapshotID: snap.id,
		Revision:   snap.revision,
		NodeCount:  count,
		TotalNodes: len(snap.nodes),
		Truncated:  truncated,
		RootScope:  scope,
		Root:       root,
	}
}

// compact writes a tree as compact v2.
func compact(tree *uitree.Tree) jsontext.Value { return uitree.Append(nil, tree) }
