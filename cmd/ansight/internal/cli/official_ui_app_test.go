package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/connect"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// officialUIAppMain is the program "officialuiapp" of the scripts: an app with the shape of
// an official SDK's UI tools — ui.get_visual_tree a flattened-string tool answering the
// official Android runtime's compact v2 tree (wire/uitree's fixture), each capture a new
// snapshot of the official store (native:<revision>:<guid>, only the latest valid), and
// ui.perform_action taking the snapshot's reference. Tapping Save renames the screen's
// title to "Saved", so that a script sees the action land. It connects to the host of
// $ANSIGHT_STATE_DIR in local mode and runs until it is killed.
func officialUIAppMain() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := runOfficialUIApp(ctx); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "officialuiapp:", err)
		os.Exit(1)
	}
}

func runOfficialUIApp(ctx context.Context) error {
	tree, err := os.ReadFile(os.Getenv("OFFICIAL_UI_TREE")) // set by TestScripts: scripts run in $WORK
	if err != nil {
		return err
	}
	st, err := hostapi.NewClient(filepath.Join(os.Getenv("ANSIGHT_STATE_DIR"), hostapi.SocketName)).Status(ctx)
	if err != nil {
		return err
	}
	host, port, err := net.SplitHostPort(st.Discovery)
	if err != nil {
		return err
	}
	p, _ := strconv.Atoi(port)
	s := &officialStore{tree: string(tree)}
	a := app.New(app.Options{Guard: catalog.Guard{DiscoveryEnabled: true, ExecutionEnabled: true, MaxPolicy: wire.PolicyWrite}})
	schema := func(s string) jsontext.Value { return jsontext.Value(s) }
	for _, t := range []app.Tool{
		{Definition: catalog.Definition{ID: "ui.get_visual_tree", Name: "Get Visual Tree", Category: "ui", Policy: wire.PolicyRead,
			Description: "Returns the current native visual tree.", ArgumentEncoding: wire.ArgumentEncodingFlattenedString,
			ArgumentsSchema: schema(`{"type":"object","properties":{"source":{"type":["string","null"]},"includeBounds":{"type":"boolean"},"includeComputedStyles":{"type":"boolean"},"maxDepth":{"type":"integer"},"maxNodes":{"type":"integer"},"rootNodeId":{"type":["string","null"]}}}`),
			ResultSchema:    schema(`{"type":"object","additionalProperties":true}`)},
			Handler: func(context.Context, *app.Call) (any, error) { return s.capture(), nil }},
		{Definition: catalog.Definition{ID: "ui.perform_action", Name: "Perform Action", Category: "ui", Policy: wire.PolicyWrite,
			Description:     "Performs a semantic action on a node of the latest snapshot.",
			ArgumentsSchema: schema(`{"type":"object","properties":{"reference":{"type":"object","additionalProperties":true},"source":{"type":"string"},"snapshotId":{"type":"string"},"nodeId":{"type":"string"},"action":{"type":"string"},"value":{},"index":{"type":"integer"},"checked":{"type":"boolean"},"options":{"type":"object","additionalProperties":true}},"required":["action"]}`),
			ResultSchema:    schema(`{"type":"object","additionalProperties":true}`)},
			Handler: func(_ context.Context, c *app.Call) (any, error) { return s.perform(c.Arguments) }},
	} {
		if err := a.Register(t); err != nil {
			return err
		}
	}
	return connect.Run(ctx, a, connect.Local{HostAddress: host, DiscoveryPorts: []int{p}},
		connect.Options{AppID: "com.example.officialui", AppName: "Official UI shape", StateDir: filepath.Join(os.Getenv("ANSIGHT_STATE_DIR"), "officialuiapp")})
}

// officialStore is the official SDKs' snapshot store over the fixture: one counter, the
// latest snapshot valid.
type officialStore struct {
	mu       sync.Mutex
	tree     string
	revision int
	latest   string
	saved    bool
}

func (s *officialStore) capture() jsontext.Value {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revision++
	s.latest = fmt.Sprintf("native:%d:%032x", s.revision, time.Now().UnixNano())
	tree := s.tree
	if s.saved {
		tree = strings.Replace(tree, `"label": "Notes", "role": "text"`, `"label": "Saved", "role": "text"`, 1)
		tree = strings.Replace(tree, `"text": "Notes"}`, `"text": "Saved"}`, 1)
	}
	tree = strings.Replace(tree, `"snapshotId": "native:7:4f0c2a9d1e8b4c7fa3d25e6b9c0a1f24"`, `"snapshotId": "`+s.latest+`"`, 1)
	tree = strings.Replace(tree, `"revision": 7,`, fmt.Sprintf(`"revision": %d,`, s.revision), 1)
	tree = strings.Replace(tree, `"staleAfterRevision": 7`, fmt.Sprintf(`"staleAfterRevision": %d`, s.revision), 1)
	return jsontext.Value(tree)
}

func (s *officialStore) perform(args jsontext.Value) (any, error) {
	var a struct {
		Reference *struct {
			SnapshotID string `json:"snapshotId"`
			NodeID     string `json:"nodeId"`
		} `json:"reference"`
		SnapshotID string `json:"snapshotId"`
		NodeID     string `json:"nodeId"`
		Action     string `json:"action"`
	}
	if err := json.Unmarshal(args, &a, json.RejectUnknownMembers(false)); err != nil {
		return nil, &wire.Error{Code: wire.CodeArgumentsInvalid, Message: err.Error()}
	}
	if a.Reference != nil {
		a.SnapshotID, a.NodeID = a.Reference.SnapshotID, a.Reference.NodeID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.SnapshotID == "" || a.NodeID == "" {
		return nil, &wire.Error{Code: "ui_action_reference_required", Message: "A node reference is required."}
	}
	if a.SnapshotID != s.latest || !strings.Contains(s.tree, `"id": "`+a.NodeID+`"`) {
		details, _ := json.Marshal(map[string]any{"source": "native", "snapshotId": a.SnapshotID, "nodeId": a.NodeID,
			"latestRevision": s.revision, "refreshWith": "ui.query_nodes"})
		return nil, &wire.Error{Code: wire.CodeStaleNodeReference, Message: "The node reference is stale.", Details: details}
	}
	if a.NodeID == "0.0.3.0" && a.Action == "tap" {
		s.saved = true
	}
	return map[string]any{"performed": true, "nodeId": a.NodeID, "source": "native", "action": a.Action,
		"reference": map[string]any{"source": "native", "snapshotId": a.SnapshotID, "revision": s.revision, "nodeId": a.NodeID}}, nil
}
