package cli

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/hostapi"
)

// completeSessions offers the connected session ids (shell completion).
func (g *globals) completeSessions(c *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return g.sessionIDs(), cobra.ShellCompDirectiveNoFileComp
}

// completeSessionThenTool offers session ids, then the tool ids of that session.
func (g *globals) completeSessionThenTool(c *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	switch len(args) {
	case 0:
		return append(g.sessionIDs(), g.toolIDs("")...), cobra.ShellCompDirectiveNoFileComp
	case 1:
		return g.toolIDs(args[0]), cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveNoFileComp
}

func (g *globals) sessionIDs() []string {
	b, err := g.backend()
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	s, err := b.Sessions(ctx)
	if err != nil {
		return nil
	}
	var ids []string
	for _, ss := range s.Sessions {
		if ss.State == hostapi.StateConnected {
			ids = append(ids, termText(ss.ID)+"\t"+termText(ss.AppID))
		}
	}
	return ids
}

// toolIDs lists a session's tool ids from the host's catalog cache ("" = the only session).
func (g *globals) toolIDs(session string) []string {
	b, err := g.backend()
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if session == "" {
		var sel sessionSelector
		if session, err = sel.resolve(ctx, b, nil); err != nil {
			return nil
		}
	}
	t, err := b.Tools(ctx, session, hostapi.ToolsRequest{})
	if err != nil {
		return nil
	}
	ids := make([]string, 0, len(t.Tools))
	for _, e := range t.Tools {
		ids = append(ids, termText(e.ID)+"\t"+oneLine(termText(e.Description), 50))
	}
	return ids
}
