package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ansight-go/ansight/flow"
)

// 'ansight test' runs flows (docs/flows.md): run, validate, list and record. Each
// subcommand is an options struct and a run function, in test*.go.

func newTestCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "test",
		Short: "Run flows (repeatable app tests for CI), check them, and record them from a session",
		Long: `A flow is a YAML or JSON file of steps run against an app session: tool calls and
batches, UI actions by selector, waits, assertions and screenshots, each with what it expects
(docs/flows.md). 'ansight test run' runs flows and reports them on the terminal, as JSON, as
JUnit XML for CI and as an HTML page; 'test record' turns what a session did into a flow.

The official CLI's 'test' runs workspace tests (test-definition.v1: prompts for its hosted
agent); those files are recognised and reported as such, not run.`,
		Example: "  ansight test run examples/flows --demo\n  ansight test validate flows/\n  ansight test record com-ansight-demo-notes-001 -o flow.yaml",
	}
	cmd.AddCommand(newTestRunCmd(g), newTestValidateCmd(g), newTestListCmd(g), newTestRecordCmd(g))
	return cmd
}

// loadFlows finds and loads the flows paths name. Official workspace tests named as files
// are refused (exit 2), those found under directories are reported and left out; the
// official command form 'test run <workspace> <test-id>' is recognised. It returns every
// entry, with the flows that loaded.
func loadFlows(w io.Writer, paths []string, quiet bool) ([]flow.Entry, error) {
	if ws, id, ok := flow.OfficialRunForm(paths); ok {
		return nil, &exitError{code: ExitUsage,
			err:  fmt.Errorf("'test run %s %s' is the official CLI's form for workspace test %q: a prompt for its hosted agent, which this CLI does not run", ws, id, id),
			hint: "give flow files or directories of ansight.flow/v1 flows (docs/flows.md)"}
	}
	entries, err := flow.Discover(paths)
	if err != nil {
		return nil, &exitError{code: ExitUsage, err: err}
	}
	if len(entries) == 0 {
		return nil, &exitError{code: ExitUsage, err: fmt.Errorf("no flows in %s", strings.Join(paths, ", ")),
			hint: "a flow file begins with 'schema: ansight.flow/v1' (docs/flows.md)"}
	}
	for _, e := range entries {
		if e.Kind == flow.FileOfficialTest && !quiet {
			printf(w, "%s: an official workspace test (test-definition.v1), not a flow: not run\n", e.Path)
		}
	}
	return entries, nil
}

// invalidFlows writes the mistakes of every flow that did not load or check and returns
// the exit error for them (exit 2), or nil when every flow is valid.
func invalidFlows(w io.Writer, entries []flow.Entry, vars map[string]string) error {
	bad := 0
	for _, e := range entries {
		err := e.Err
		if e.Kind == flow.FileOfficialTest {
			if explicitFile(e.Path) {
				bad++
				printf(w, "%v\n", err)
			}
			continue
		}
		if err == nil {
			err = e.Flow.Check(vars, nil)
		}
		if err != nil {
			bad++
			for _, fe := range flow.Errors(err) {
				printf(w, "%v\n", fe)
			}
			if len(flow.Errors(err)) == 0 {
				printf(w, "%s: %v\n", e.Path, err)
			}
		}
	}
	if bad == 0 {
		return nil
	}
	return &exitError{code: ExitUsage, err: fmt.Errorf("%d of %d files are not valid flows", bad, len(entries)), hint: "fix them (docs/flows.md), then 'ansight test validate'"}
}

// explicitFile reports whether path names a file rather than a directory (an official
// test named as a file is an error; one found in a directory is only reported).
func explicitFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}

// errNoFlows is the answer when only official tests were found.
var errNoFlows = errors.New("no ansight.flow/v1 flows to run")
