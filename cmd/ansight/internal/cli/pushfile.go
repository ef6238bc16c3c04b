package cli

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-json-experiment/json"
	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/app/files"
	"github.com/ansight-go/ansight/hostapi"
	"github.com/ansight-go/ansight/wire"
)

// maxPushBytes bounds a pushed file: it travels base64-encoded inside one call, which the
// control API takes up to 16 MiB, and the SDKs' files.push_file accepts 16 MiB by default.
const maxPushBytes = 12 << 20

// appPushFileOptions are the flags of 'ansight app push-file'.
type appPushFileOptions struct {
	sel                 sessionSelector
	root, fileName      string
	overwrite, noCreate bool
}

func newAppPushFileCmd(g *globals) *cobra.Command {
	o := &appPushFileOptions{}
	cmd := &cobra.Command{
		Use:   "push-file [session] <local-file> <remote-dir>",
		Short: "Copy a file into the app, through its files.push_file tool",
		Long: `Copy a local file into a directory of the app, through the file-receiving tool of the
official SDKs (files.push_file), base64 inside one call, at most 12 MiB. An app without that
tool says so. The remote directory is relative to one of the app's file roots
(--sandbox-root names it; default: the app's first) and is created when missing.`,
		Example: `  go run ./examples/demoapp &     # the demo app with the file tools (root "demo")
  ansight app push-file --app-id com.ansight.demo.notes ./fixture.json inbox
  ansight app push-file --app-id com.ansight.demo.notes ./photo.jpg . --file-name avatar.jpg --overwrite`,
		Args:              cobra.RangeArgs(2, 3),
		ValidArgsFunction: g.completeSessions,
		RunE: func(c *cobra.Command, args []string) error {
			return o.run(c.Context(), g, args[:len(args)-2], args[len(args)-2], args[len(args)-1])
		},
	}
	f := cmd.Flags()
	o.sel.addFlag(cmd)
	f.StringVar(&o.root, "sandbox-root", "", "the app's file root to write under (default: its first)")
	f.StringVar(&o.fileName, "file-name", "", "the name to give the file in the app (default: the local file's name)")
	f.BoolVar(&o.overwrite, "overwrite", false, "replace a file of that name")
	f.BoolVar(&o.noCreate, "no-create-directory", false, "fail when the remote directory does not exist")
	return cmd
}

// run sends the local file to the app's files.push_file, in remote (a directory under
// one of its roots).
func (o *appPushFileOptions) run(ctx context.Context, g *globals, sessArgs []string, local, remote string) error {
	content, err := readPushed(local)
	if err != nil {
		return err
	}
	fileName := o.fileName
	if fileName == "" {
		fileName = filepath.Base(local)
	}
	b, id, err := g.session(ctx, &o.sel, sessArgs)
	if err != nil {
		return err
	}
	t, err := b.Tools(ctx, id, hostapi.ToolsRequest{ToolIDs: []string{files.PushFileToolID}})
	if err != nil {
		return hostErr(err)
	}
	if len(t.Tools) == 0 {
		return &exitError{code: ExitToolUnavailable, err: fmt.Errorf("the app offers no file-receiving tool (%s, as the official SDKs name it): it cannot take files", files.PushFileToolID),
			hint: "apps register it with the SDK's file tools (Go: package app/files)"}
	}
	a := map[string]any{"directoryPath": remote, "fileName": fileName, "contentBase64": base64.StdEncoding.EncodeToString(content),
		"overwrite": o.overwrite, "createDirectory": !o.noCreate}
	if o.root != "" {
		a["root"] = o.root
	}
	raw, err := json.Marshal(a)
	if err != nil {
		return err
	}
	res, err := b.Call(ctx, id, hostapi.CallRequest{ToolID: files.PushFileToolID, Arguments: raw}, nil)
	if err != nil {
		return hostErr(err)
	}
	return printPushed(g, local, res)
}

// readPushed reads the file to push: a regular file, at most maxPushBytes.
func readPushed(local string) ([]byte, error) {
	fi, err := os.Stat(local)
	switch {
	case err != nil:
		return nil, usageErrorf("%v", err)
	case !fi.Mode().IsRegular():
		return nil, usageErrorf("%s is not a regular file", local)
	case fi.Size() > maxPushBytes:
		return nil, usageErrorf("%s has %s: push-file sends at most %s (inside one call)", local, humanBytes(fi.Size()), humanBytes(maxPushBytes))
	}
	return os.ReadFile(local)
}

// printPushed says where the file went, or the tool's error.
func printPushed(g *globals, local string, res *hostapi.Call) error {
	if g.json {
		if err := writeJSON(g.env.Stdout, appCallJSON(res)); err != nil {
			return err
		}
		return toolExit(res.Error)
	}
	if res.Error != nil {
		printToolError(g.env.Stderr, res.Error)
		return toolExit(res.Error)
	}
	var pushed struct {
		RootAlias    string `json:"rootAlias"`
		RelativePath string `json:"relativePath"`
		SizeBytes    int64  `json:"sizeBytes"`
		Operation    string `json:"operation"`
	}
	if res.Result != nil && wire.Unmarshal(res.Result.Result, &pushed) == nil && pushed.RelativePath != "" {
		printf(g.env.Stdout, "pushed %s to %s:%s (%s, %s)\n", local, pushed.RootAlias, pushed.RelativePath, humanBytes(pushed.SizeBytes), pushed.Operation)
		return nil
	}
	printCall(g.env.Stdout, g.env.Stderr, res) // another SDK's answer: show it as it is
	return nil
}
