package mcpbridge

import (
	"cmp"
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// maxDescriptionRunes bounds a description in the compact index: one line an agent can
// skim, not the tool's documentation.
const maxDescriptionRunes = 120

type listSessionsInput struct {
	IncludeDisconnected bool `json:"includeDisconnected,omitzero"`
}

type sessionOutput struct {
	SessionID string `json:"sessionId"`
	AppID     string `json:"appId"`
	// Label is the name a user of the host gave the session ('ansight session rename'),
	// the one way an agent can tell "the checkout bug" from another session of the app.
	Label         string      `json:"label,omitzero"`
	AppName       string      `json:"appName,omitzero"`
	AppVersion    string      `json:"appVersion,omitzero"`
	Device        string      `json:"device,omitzero"`
	Platform      string      `json:"platform,omitzero"`
	State         string      `json:"state"`
	AppState      string      `json:"appState,omitzero"`
	MaxToolPolicy wire.Policy `json:"maxToolPolicy,omitzero"`
	Revision      string      `json:"revision,omitzero"`
	ToolCount     int         `json:"toolCount,omitzero"`
}

type listSessionsOutput struct {
	Sessions      []sessionOutput `json:"sessions"`
	AllowCritical bool            `json:"allowCritical"`
}

func (br *Bridge) listSessions(ctx context.Context, _ *mcp.CallToolRequest, in *listSessionsInput) (*mcp.CallToolResult, error) {
	list, err := br.backend.Sessions(ctx)
	if err != nil {
		return br.fail(err, "", "")
	}
	out := listSessionsOutput{Sessions: []sessionOutput{}, AllowCritical: br.opts.AllowCritical}
	for _, s := range list.Sessions {
		if s.State != hostapi.StateConnected && !in.IncludeDisconnected {
			continue
		}
		out.Sessions = append(out.Sessions, sessionOutput{
			SessionID: s.ID, AppID: s.AppID, Label: s.Label, AppName: s.AppName, AppVersion: s.AppVersion,
			Device: s.DeviceName, Platform: s.Platform, State: s.State, AppState: s.AppState,
			MaxToolPolicy: s.MaxToolPolicy, Revision: s.Revision, ToolCount: s.ToolCount,
		})
	}
	// Names and devices are the apps' words: the whole list is framed as app text. A label
	// is the host user's (hostapi.CheckLabel refuses control and hidden characters in it),
	// framed with the rest: one stored before that check, or by another host, is escaped.
	return appStructured(out, false)
}

type searchInput struct {
	selector
	Query          string `json:"query,omitzero"`
	Feature        string `json:"feature,omitzero"`
	Category       string `json:"category,omitzero"`
	Policy         string `json:"policy,omitzero"`
	ExecutableOnly *bool  `json:"executableOnly,omitzero"`
	MaxResults     int    `json:"maxResults,omitzero"`
}

type searchOutput struct {
	SessionID  string         `json:"sessionId"`
	AppID      string         `json:"appId"`
	Revision   string         `json:"revision"`
	TotalCount int            `json:"totalCount"`
	Count      int            `json:"count"`
	Truncated  bool           `json:"truncated,omitzero"`
	Categories map[string]int `json:"categories,omitzero"`
	AboveGrant int            `json:"aboveGrant,omitzero"`
	// NotCallable counts the matches left out by executableOnly (denied or unavailable now).
	NotCallable int `json:"notCallable,omitzero"`
	// GrantHint says how the user can raise the grant, when tools above it are listed.
	GrantHint string       `json:"grantHint,omitzero"`
	Tools     []indexEntry `json:"tools"`
}

// indexEntry is one tool in the compact index. Executable is written only as false, as in
// the protocol's index.
type indexEntry struct {
	ID            string       `json:"id"`
	Description   string       `json:"description"`
	Policy        wire.Policy  `json:"policy"`
	Executable    *bool        `json:"executable,omitzero"`
	Denial        *wire.Denial `json:"denial,omitzero"`
	Prerequisites []string     `json:"prerequisites,omitempty"`
}

func (br *Bridge) search(ctx context.Context, _ *mcp.CallToolRequest, in *searchInput) (*mcp.CallToolResult, error) {
	sess, err := br.session(ctx, in.selector)
	if err != nil {
		return br.fail(err, in.SessionID, "")
	}
	executableOnly := in.ExecutableOnly == nil || *in.ExecutableOnly
	maxResults := in.MaxResults
	if maxResults == 0 {
		maxResults = defaultMaxResults
	}
	// The host filters by words, category and policy; the bridge then applies its own
	// policy and the cap, so that counts and truncation describe what the agent may use.
	tools, err := br.backend.Tools(ctx, sess.ID, hostapi.ToolsRequest{
		Query: in.Query, Feature: in.Feature, Category: in.Category, Policy: in.Policy, Detail: hostapi.DetailSummary,
	})
	if err != nil {
		return br.fail(err, sess.ID, "")
	}
	out := searchOutput{SessionID: sess.ID, AppID: sess.AppID, Revision: tools.Revision, Tools: []indexEntry{}}
	categories := map[string]int{}
	for i := range tools.Tools {
		e := &tools.Tools[i]
		v := br.judge(e, sess.MaxToolPolicy)
		if v.aboveGrant {
			out.AboveGrant++
			if executableOnly {
				continue
			}
			if out.GrantHint == "" || e.Policy == wire.PolicyCritical {
				out.GrantHint = br.grantHint(e.Policy)
			}
		} else if executableOnly && v.denial != nil {
			out.NotCallable++
			continue
		}
		out.TotalCount++
		categories[e.Category]++
		if len(out.Tools) == maxResults {
			out.Truncated = true
			continue
		}
		entry := indexEntry{ID: e.ID, Description: oneLine(cmp.Or(e.Description, e.Name), maxDescriptionRunes),
			Policy: e.Policy, Prerequisites: e.PrerequisiteToolIDs}
		if v.denial != nil {
			entry.Executable, entry.Denial = new(false), v.denial
		}
		out.Tools = append(out.Tools, entry)
	}
	out.Count = len(out.Tools)
	if out.Truncated {
		out.Categories = categories
	}
	return appStructured(out, false)
}

type describeInput struct {
	selector
	ToolID string `json:"toolId"`
}

type describeOutput struct {
	SessionID string         `json:"sessionId"`
	Revision  string         `json:"revision"`
	Tool      wire.ToolEntry `json:"tool"`
}

func (br *Bridge) describe(ctx context.Context, _ *mcp.CallToolRequest, in *describeInput) (*mcp.CallToolResult, error) {
	sess, err := br.session(ctx, in.selector)
	if err != nil {
		return br.fail(err, in.SessionID, in.ToolID)
	}
	t, err := br.backend.Tool(ctx, sess.ID, in.ToolID)
	if err != nil {
		return br.fail(err, sess.ID, in.ToolID)
	}
	e := t.Tool
	v := br.judge(&e, sess.MaxToolPolicy)
	if v.aboveGrant {
		return br.fail(br.refusal(&e, sess), sess.ID, in.ToolID)
	}
	e.Denial, e.Executable = v.denial, nil
	if v.denial != nil {
		e.Executable = new(false)
	}
	return appStructured(describeOutput{SessionID: sess.ID, Revision: t.Revision, Tool: e}, false)
}
