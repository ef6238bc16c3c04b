package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/flow"
)

// testCheckOptions are the flags of 'ansight test validate' and 'test list'.
type testCheckOptions struct {
	vars []string
}

// testFile is one file in 'test validate' and 'test list' --json.
type testFile struct {
	Path  string        `json:"path"`
	Kind  flow.FileKind `json:"kind"`
	Name  string        `json:"name,omitzero"`
	AppID string        `json:"appId,omitzero"`
	Steps int           `json:"steps"`
	Valid bool          `json:"valid"`
	// Errors are a flow's mistakes; Message says what an official test is.
	Errors  []*flow.Error `json:"errors,omitempty"`
	Message string        `json:"message,omitzero"`
}

// testFiles is the --json object of 'test validate' and 'test list'.
type testFiles struct {
	Schema string     `json:"schema"`
	Valid  bool       `json:"valid"`
	Files  []testFile `json:"files"`
}

func newTestValidateCmd(g *globals) *cobra.Command {
	var o testCheckOptions
	cmd := &cobra.Command{
		Use:   "validate FLOW_OR_DIR...",
		Short: "Check flows without running them: every mistake with its file, line, column and step",
		Long: `Check flows as 'test run' does before it runs them: the format (unknown keys, wrong
types, bounds), includes (missing files, cycles) and variables (a ${var.X} with no --var and
no default, an unset ${env.X}, a ${name} no earlier step saves). Exit 2 when a flow is not
valid. (The official CLI's validate checks its workspace tests and exits 1.)`,
		Example: "  ansight test validate examples/flows\n  ansight test validate login.yaml --var user=ann --json",
		Args:    cobra.MinimumNArgs(1),
		RunE:    func(c *cobra.Command, args []string) error { return g.runTestValidate(c.Context(), o, args, false) },
	}
	cmd.Flags().StringArrayVar(&o.vars, "var", nil, "a value for ${var.NAME}: NAME=VALUE (repeat)")
	return cmd
}

func newTestListCmd(g *globals) *cobra.Command {
	var o testCheckOptions
	cmd := &cobra.Command{
		Use:     "list FLOW_OR_DIR...",
		Short:   "List the flows under files and directories, with their app and steps",
		Example: "  ansight test list examples/flows",
		Args:    cobra.MinimumNArgs(1),
		RunE:    func(c *cobra.Command, args []string) error { return g.runTestValidate(c.Context(), o, args, true) },
	}
	cmd.Flags().StringArrayVar(&o.vars, "var", nil, "a value for ${var.NAME}: NAME=VALUE (repeat)")
	return cmd
}

// runTestValidate checks (validate) or lists (list) flows.
func (g *globals) runTestValidate(_ context.Context, o testCheckOptions, paths []string, list bool) error {
	vars, err := flow.ParseVars(o.vars)
	if err != nil {
		return &exitError{code: ExitUsage, err: err}
	}
	if ws, id, ok := flow.OfficialRunForm(paths); ok {
		return usageErrorf("%s %s: the official CLI's workspace and test id; give flow files or directories", ws, id)
	}
	entries, err := flow.Discover(paths)
	if err != nil {
		return &exitError{code: ExitUsage, err: err}
	}
	out, bad := checkFlows(entries, vars, list)
	if err := g.printTestFiles(out, list); err != nil {
		return err
	}
	if len(entries) == 0 {
		return &exitError{code: ExitUsage, err: fmt.Errorf("no flows found"), hint: "a flow file begins with 'schema: ansight.flow/v1' (docs/flows.md)"}
	}
	if bad > 0 && !list {
		if g.json {
			return &exitError{code: ExitUsage, err: silentError{}} // the object says which
		}
		return &exitError{code: ExitUsage, err: fmt.Errorf("%d of %d files are not valid flows", bad, len(entries))}
	}
	return nil
}

// checkFlows checks each discovered file against vars: the --json object, and how many files
// fail the command (an invalid flow; an official test named on the command line, unless listing).
func checkFlows(entries []flow.Entry, vars map[string]string, list bool) (testFiles, int) {
	out := testFiles{Schema: "ansight.test-validate/v1", Valid: true}
	if list {
		out.Schema = "ansight.test-list/v1"
	}
	bad := 0
	for _, e := range entries {
		tf := testFile{Path: e.Path, Kind: e.Kind}
		switch {
		case e.Kind == flow.FileOfficialTest:
			tf.Message = e.Err.Error()
			if explicitFile(e.Path) && !list {
				bad++
			}
		default:
			err := e.Err
			if err == nil {
				tf.Name, tf.AppID, tf.Steps = e.Flow.Name, e.Flow.AppID, e.Flow.Count()
				err = e.Flow.Check(vars, nil)
			}
			tf.Errors = flow.Errors(err)
			if err != nil && len(tf.Errors) == 0 {
				tf.Errors = []*flow.Error{{Pos: flow.Pos{File: e.Path}, Msg: err.Error()}}
			}
			tf.Valid = err == nil
			if !tf.Valid {
				bad++
			}
		}
		out.Files = append(out.Files, tf)
	}
	out.Valid = bad == 0
	return out, bad
}

// printTestFiles writes the result: the --json object, the list's table, or validate's lines.
func (g *globals) printTestFiles(out testFiles, list bool) error {
	if g.json {
		return writeJSON(g.env.Stdout, out)
	} else if list {
		t := newTable(g.env.Stdout)
		t.header("FILE", "NAME", "APP", "STEPS", "STATUS")
		for _, f := range out.Files {
			status := "valid"
			switch {
			case f.Kind == flow.FileOfficialTest:
				status = "official workspace test (not run)"
			case !f.Valid:
				status = fmt.Sprintf("invalid (%d mistakes)", len(f.Errors))
			}
			t.row(f.Path, f.Name, f.AppID, fmt.Sprint(f.Steps), status)
		}
		t.flush()
	} else {
		for _, f := range out.Files {
			switch {
			case f.Kind == flow.FileOfficialTest:
				printf(g.env.Stdout, "%s\n", f.Message)
			case f.Valid:
				printf(g.env.Stdout, "ok      %s (%s, %d steps)\n", f.Path, f.Name, f.Steps)
			default:
				for _, fe := range f.Errors {
					printf(g.env.Stdout, "invalid %v\n", fe)
				}
			}
		}
	}
	return nil
}
