// Package docs holds no code: its tests check that the protocol reference under
// docs/protocol stays citable and true. Every "docs/protocol/<page>.md#<anchor>" written
// anywhere in the repository, every link between the pages, and every anchor the index
// lists must name a heading that exists; every row of compatibility.md must name a test
// that exists (TestCompatibilityRowsNameTests); every fuzz target of the module must be a
// row of fuzzing.md, with a committed seed corpus (TestFuzzTargetsListed).
package docs

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

const protocolDir = "protocol"

// anchors returns the anchors GitHub generates for the headings of a Markdown file: the
// heading text in lower case, letters, digits, spaces, '-' and '_' kept, spaces turned into
// '-'; a repeated slug gets "-1", "-2", … Headings inside fenced code blocks do not count.
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimSpace(strings.TrimLeft(line, "#"))
		slug := slugify(text)
		if n := seen[slug]; n > 0 {
			out[slug+"-"+strconv.Itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func slugify(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// pages returns the anchors of every page of docs/protocol, by file name.
func pages(t *testing.T) map[string]map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(protocolDir, "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no pages under %s (%v)", protocolDir, err)
	}
	out := map[string]map[string]bool{}
	for _, f := range files {
		out[filepath.Base(f)] = anchors(t, f)
	}
	return out
}

func TestSlugify(t *testing.T) {
	for heading, want := range map[string]string{
		"Catalog revision":         "catalog-revision",
		"Visibility and execution": "visibility-and-execution",
		"ASFT":                     "asft",
		"Tool codes":               "tool-codes",
		"Encoding a payload":       "encoding-a-payload",
		"`tool.query` answers":     "toolquery-answers",
	} {
		if got := slugify(heading); got != want {
			t.Errorf("slugify(%q) = %q, want %q", heading, got, want)
		}
	}
}

// citation matches a reference into the protocol pages from anywhere in the repository.
var citation = regexp.MustCompile(`docs/protocol/([a-z0-9-]+\.md)(?:#([a-z0-9_-]+))?`)

// TestCitationsResolve checks every docs/protocol citation in the repository's Go, Markdown
// and transcript files.
func TestCitationsResolve(t *testing.T) {
	all := pages(t)
	root := ".."
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "fuzz":
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".txtar":
		default:
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			for _, m := range citation.FindAllStringSubmatch(line, -1) {
				n++
				page, anchor := m[1], m[2]
				as, ok := all[page]
				switch {
				case !ok:
					t.Errorf("%s:%d: cites %s, which does not exist", path, i+1, m[0])
				case anchor != "" && !as[anchor]:
					t.Errorf("%s:%d: cites %s, but %s has no heading with anchor #%s", path, i+1, m[0], page, anchor)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("found no citation of docs/protocol at all: is the walk looking in the right place?")
	}
}

// link matches a Markdown link target.
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestPageLinksResolve checks the links inside the protocol pages: relative files exist, and
// anchors into protocol pages (or into the same page) name headings.
func TestPageLinksResolve(t *testing.T) {
	all := pages(t)
	for page := range all {
		data, err := os.ReadFile(filepath.Join(protocolDir, page))
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				if file == "" {
					file = page
				}
				path := filepath.Join(protocolDir, file)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s:%d: link to %s: %v", page, i+1, target, err)
					continue
				}
				if anchor == "" {
					continue
				}
				as, ok := all[file]
				if !ok {
					continue // an anchor into a page outside docs/protocol: not checked
				}
				if !as[anchor] {
					t.Errorf("%s:%d: link to %s: %s has no heading with anchor #%s", page, i+1, target, file, anchor)
				}
			}
		}
	}
}

// indexRow matches a row of the index's file table: the page and its listed anchors.
var indexRow = regexp.MustCompile("^\\| \\[([a-z0-9-]+\\.md)\\]\\([a-z0-9-]+\\.md\\) \\|.*\\| (`#.*`) \\|$")

// TestIndexAnchors checks the anchors that README.md lists for each page.
func TestIndexAnchors(t *testing.T) {
	all := pages(t)
	data, err := os.ReadFile(filepath.Join(protocolDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, line := range strings.Split(string(data), "\n") {
		m := indexRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		listed = append(listed, m[1])
		for _, a := range strings.Split(m[2], ",") {
			a = strings.Trim(strings.TrimSpace(a), "`#")
			if !all[m[1]][a] {
				t.Errorf("README.md lists #%s for %s, which has no such heading", a, m[1])
			}
		}
	}
	for page := range all {
		if page != "README.md" && !slices.Contains(listed, page) {
			t.Errorf("README.md does not list %s in its table of pages", page)
		}
	}
}
