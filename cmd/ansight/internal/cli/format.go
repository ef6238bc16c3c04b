package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
)

// table writes aligned columns, with colours when it writes to a terminal (and NO_COLOR
// is not set). Every cell is sanitised with termText: cells hold strings from apps.
type table struct {
	tw     *tabwriter.Writer
	colour bool
	// colours gives a column's colour from its (sanitised) cell; see colourBy.
	colours map[int]func(cell string) string
}

func newTable(w io.Writer) *table {
	_, noColour := os.LookupEnv("NO_COLOR")
	return &table{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0), colour: isTerminal(w) && !noColour}
}

// ANSI colours. Every code has two digits, so that coloured cells of one column all carry
// escapes of the same length and tabwriter keeps the column aligned.
const (
	colourRed     = "31"
	colourGreen   = "32"
	colourYellow  = "33"
	colourMagenta = "35"
	colourDefault = "39" // for the header of a coloured column
)

// colourBy colours column col: each cell with the colour f gives it, the header with
// colourDefault.
func (t *table) colourBy(col int, f func(cell string) string) *table {
	if t.colours == nil {
		t.colours = make(map[int]func(string) string)
	}
	t.colours[col] = f
	return t
}

// paint colours s when the table writes to a terminal.
func (t *table) paint(code, s string) string {
	if !t.colour {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// policyColour: read green, write yellow, critical magenta.
func policyColour(p string) string {
	switch p {
	case "read":
		return colourGreen
	case "write":
		return colourYellow
	}
	return colourMagenta
}

// stateColour: ok and connected green, anything blocked or failed red, the rest yellow.
func stateColour(s string) string {
	switch {
	case s == "ok" || s == "connected" || s == "open" || s == "active":
		return colourGreen
	case strings.HasPrefix(s, "blocked") || s == "disconnected" || s == "expired" || s == "used" || s == "revoked":
		return colourRed
	}
	return colourYellow
}

// header writes the header row: coloured columns in the default colour.
func (t *table) header(cols ...string) { t.write(cols, true) }

// row writes one row of cells, each sanitised, coloured columns painted.
func (t *table) row(cols ...string) { t.write(cols, false) }

func (t *table) write(cols []string, header bool) {
	cells := make([]string, len(cols))
	for i, c := range cols {
		c = termText(c)
		if f, ok := t.colours[i]; ok {
			code := colourDefault
			if !header {
				code = f(c)
			}
			c = t.paint(code, c)
		}
		cells[i] = c
	}
	fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
}

func (t *table) flush() { t.tw.Flush() }

// oneLine shortens s to one line of at most n runes.
func oneLine(s string, n int) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// jsonBlock pretty-prints a JSON value from an app for the terminal, each line after the
// first prefixed, sanitised line by line.
func jsonBlock(v jsontext.Value, prefix string) safe {
	c := v.Clone()
	if err := c.Indent(jsontext.WithIndentPrefix(prefix), jsontext.WithIndent("  ")); err != nil {
		return safe(termText(string(v)))
	}
	return termLines(string(c))
}

func shortRevision(r string) string {
	if strings.HasPrefix(r, "sha256:") && len(r) > 19 {
		return r[:19]
	}
	return r
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func ago(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := time.Since(t).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return t.Local().Format("2006-01-02 15:04")
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// terminalSize returns the size of the terminal w writes to, in characters; 80×24 when w
// is not a terminal or does not say.
func terminalSize(w io.Writer) (cols, rows int) {
	if f, ok := w.(*os.File); ok && isTerminal(w) {
		var ws struct{ rows, cols, x, y uint16 }
		_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), uintptr(syscall.TIOCGWINSZ), uintptr(unsafe.Pointer(&ws)))
		if errno == 0 && ws.cols > 0 && ws.rows > 0 {
			return int(ws.cols), int(ws.rows)
		}
	}
	return 80, 24
}

func mkdirFor(path string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return nil
}
