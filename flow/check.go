package flow

import (
	"fmt"
	"os"
	"slices"
)

// Check finds the references a run of f with vars (the --var values) and env (the
// environment; os.LookupEnv when nil) could not expand, before anything runs: a ${var.X}
// with no value, an unset ${env.X}, a ${name…} that no earlier step saves. A path into a
// saved result can only be checked while the flow runs.
func (f *Flow) Check(vars map[string]string, env func(string) (string, bool)) error {
	if env == nil {
		env = os.LookupEnv
	}
	c := &checker{vars: vars, env: env}
	c.flow(f, "", nil)
	if len(c.errs) > 0 {
		return c.errs
	}
	return nil
}

type checker struct {
	vars  map[string]string
	env   func(string) (string, bool)
	saved []string
	errs  ErrorList
}

func (c *checker) flow(f *Flow, prefix string, outer map[string]string) {
	vars := mergeVars(f.Vars, outer, c.vars)
	for _, phase := range []struct {
		name  string
		steps []*Step
	}{{"setup", f.Setup}, {"steps", f.Steps}, {"teardown", f.Teardown}} {
		for i, s := range phase.steps {
			label := func() string { return fmt.Sprintf("%s%s[%d] %s", prefix, phase.name, i, s.Label()) }
			if s.Included != nil {
				c.flow(s.Included, label()+" › ", vars)
				continue
			}
			for _, r := range s.refs() {
				c.ref(label, r, vars)
			}
			if s.Save != "" {
				c.saved = append(c.saved, s.Save)
			}
		}
	}
}

func (c *checker) ref(step func() string, r *ref, vars map[string]string) {
	if len(c.errs) >= maxErrors {
		return
	}
	var msg string
	switch r.scope {
	case "var":
		if _, ok := vars[r.path[0]]; !ok {
			msg = r.String() + " has no value: give it with --var " + r.path[0] + "=VALUE, or a default under vars:"
		}
	case "env":
		if _, ok := c.env(r.path[0]); !ok {
			msg = r.String() + ": the environment variable " + r.path[0] + " is not set"
		}
	default:
		if !slices.Contains(c.saved, r.scope) {
			msg = r.String() + ": no step before this one saves " + r.scope + " (save: " + r.scope + ")"
		}
	}
	if msg != "" {
		c.errs = append(c.errs, &Error{Pos: r.pos, Step: step(), Msg: msg})
	}
}

// mergeVars layers variable values: later maps win.
func mergeVars(layers ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, l := range layers {
		for k, v := range l {
			out[k] = v
		}
	}
	return out
}

// refs returns every reference the step's templates make.
func (s *Step) refs() []*ref {
	var out []*ref
	out = collectRefs(out, s.args)
	for _, c := range s.calls {
		out = collectRefs(out, c.args)
	}
	if u := s.ui; u != nil {
		for _, v := range []*value{u.sel.automationID, u.sel.text, u.sel.role, u.sel.ancestor, u.value, u.expectedText, u.expectedValue} {
			out = collectRefs(out, v)
		}
	}
	for _, e := range s.expects {
		out = collectRefs(out, e.operand)
		out = collectRefs(out, e.lt)
		out = collectRefs(out, e.gt)
	}
	return out
}
