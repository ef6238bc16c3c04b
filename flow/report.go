package flow

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

//go:embed report.html
var reportHTML string

var reportTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"duration": func(ms int64) string { return seconds(ms) + " s" },
	"pretty": func(v jsontext.Value) string {
		out := bytes.Clone(v)
		if err := (*jsontext.Value)(&out).Indent(jsontext.WithIndent("  ")); err != nil {
			return string(v)
		}
		return string(out)
	},
}).Parse(reportHTML))

// WriteHTML writes the report as a web page to dir/index.html, with every screenshot the
// run kept as a PNG file beside it (Screenshot.Path is set to where): per flow and session,
// its steps with their timings, the screenshots, the failing step's failure, screen and
// visual tree, and a link to the session's recording. The page needs no script and no
// network.
func (run *Report) WriteHTML(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, "screenshots"), 0o755); err != nil {
		return err
	}
	for i, r := range run.Results {
		for _, s := range r.Steps {
			shot := s.Screenshot
			if shot == nil || len(shot.PNG) == 0 {
				continue
			}
			name := fmt.Sprintf("%02d-%s-%s-%d-%s.png", i, safeName(r.Name), s.Phase, s.Index, safeName(shot.Name))
			path := filepath.Join(dir, "screenshots", name)
			if err := os.WriteFile(path, shot.PNG, 0o644); err != nil {
				return err
			}
			shot.Path = path
		}
	}
	var page bytes.Buffer
	if err := reportTemplate.Execute(&page, reportView{Report: run, Dir: dir}); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "index.html"), page.Bytes(), 0o644)
}

// reportView is what the page's template reads.
type reportView struct {
	*Report
	Dir string
}

// Rel is a screenshot's path relative to the page.
func (v reportView) Rel(path string) string {
	rel, err := filepath.Rel(v.Dir, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(rel)
}

// safeName keeps letters, digits, '-' and '_' of s for a file name.
func safeName(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
			b.WriteRune(c)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 40 {
			break
		}
	}
	return b.String()
}
