package flow

import (
	"bytes"
	"context"
	"encoding/xml"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// hostile is text an app may put in a result: markup, quotes, a control character.
const hostile = "<b>Groceries & \"milk\"</b>\x01 ✓"

// sampleReport runs three flows against two fake sessions: one passes with a screenshot,
// one fails an expectation (with the screen and tree kept), one cannot run (the session
// is gone).
func sampleReport(t *testing.T) *Report {
	t.Helper()
	pass := parse(t, `schema: ansight.flow/v1
name: add a note
steps:
  - call: notes.create
    arguments: {title: Groceries, body: milk}
    save: note
  - tap: {text: Groceries}
  - screenshot: after-tap
`)
	title, _ := jsontext.AppendQuote(nil, hostile)
	fail, err := Parse("t.json", []byte(`{"schema": "ansight.flow/v1", "name": "finds <b>milk</b>", "steps": [
  {"call": "notes.create", "arguments": {"title": `+string(title)+`, "body": "bread"},
   "expect": [{"path": "/body", "contains": "milk"}]},
  {"call": "notes.list"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	gone := parse(t, "schema: ansight.flow/v1\nname: session gone\nsteps:\n  - call: gone\n")
	var jobs []Job
	for _, s := range []string{"com-demo-001", "com-demo-002"} {
		app := newFakeApp()
		for _, f := range []*Flow{pass, fail, gone} {
			jobs = append(jobs, Job{Flow: f, Target: app, SessionID: s, AppID: "com.ansight.demo.notes"})
		}
	}
	rep := RunAll(context.Background(), jobs, Options{}, 0)
	for _, r := range rep.Results {
		r.Recording = "http://127.0.0.1:7070/#/sessions/" + r.SessionID
	}
	if rep.Passed != 2 || rep.Failed != 2 || rep.Errors != 2 {
		t.Fatalf("tally %d/%d/%d", rep.Passed, rep.Failed, rep.Errors)
	}
	return rep
}

// needTool finds a program the test needs: CI installs it (.ci/run), so a run in CI skips
// for its absence only when .ci/run said apt could not install it.
func needTool(t *testing.T, name, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if why := os.Getenv("ANSIGHT_TEST_TOOLS_MISSING"); why != "" {
			t.Skipf("%s is not installed: %s", name, why)
		}
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed (Debian package %s; .ci/run installs it)", name, pkg)
		}
		t.Skipf("%s is not installed (apt-get install %s)", name, pkg)
	}
	return path
}

// TestJUnitAgainstXSD checks the JUnit report with xmllint against testdata/junit.xsd
// (written from the Jenkins/Ant description of the format), and that the same check
// refuses a report missing what the format requires.
func TestJUnitAgainstXSD(t *testing.T) {
	t.Parallel()
	xmllint := needTool(t, "xmllint", "libxml2-utils")
	rep := sampleReport(t)
	var buf bytes.Buffer
	if err := rep.WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	dir := t.ArtifactDir()
	good := filepath.Join(dir, "junit.xml")
	if err := os.WriteFile(good, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	lint := func(path string) (string, error) {
		out, err := exec.Command(xmllint, "--noout", "--schema", "testdata/junit.xsd", path).CombinedOutput()
		return string(out), err
	}
	if out, err := lint(good); err != nil {
		t.Fatalf("xmllint refuses the report: %v\n%s\n%s", err, out, buf.String())
	}
	bad := filepath.Join(dir, "bad.xml")
	if err := os.WriteFile(bad, bytes.Replace(buf.Bytes(), []byte(`<testcase name="add a note"`), []byte(`<testcase`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := lint(bad); err == nil {
		t.Fatalf("xmllint accepts a testcase without a name:\n%s", out)
	}

	var doc junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Tests != 6 || doc.Failures != 2 || doc.Errors != 2 || len(doc.Suites) != 2 {
		t.Fatalf("totals %+v", doc)
	}
	s := doc.Suites[0]
	if s.Name != "com-demo-001" || s.Package != "com.ansight.demo.notes" || len(s.Cases) != 3 || s.Cases[0].Classname != "t" || s.Cases[1].Classname != "t" {
		t.Errorf("suite %+v", s)
	}
	f := s.Cases[1].Failure
	if f == nil || s.Cases[1].Name != "finds <b>milk</b>" {
		t.Fatalf("case %+v", s.Cases[1])
	}
	// The failure message names the step, the expectation and the actual value.
	for _, want := range []string{"steps[0] call notes.create", "t.json:2:3", `/body contains "milk"`, `got "bread"`} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("failure message %q lacks %q", f.Message, want)
		}
	}
	if e := s.Cases[2].Error; e == nil || !strings.Contains(e.Message, `no session "s1"`) {
		t.Errorf("error %+v", e)
	}
}

// TestHTMLReport writes the report and opens it in a real headless Chromium; the page's
// screenshot is kept with -artifacts (go test -run TestHTMLReport -artifacts -outputdir DIR).
func TestHTMLReport(t *testing.T) {
	t.Parallel()
	rep := sampleReport(t)
	dir := t.ArtifactDir()
	if err := rep.WriteHTML(filepath.Join(dir, "report")); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	if strings.Contains(html, "<b>milk</b>") || !strings.Contains(html, "finds &lt;b&gt;milk&lt;/b&gt;") {
		t.Error("the app's text is not escaped")
	}
	for _, want := range []string{"the session's recording", "/body contains", "the visual tree when the step failed", "after-tap"} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	shots, _ := filepath.Glob(filepath.Join(dir, "report", "screenshots", "*.png"))
	if len(shots) != 6 { // after-tap and the failing steps' screens, in each of two sessions
		t.Errorf("screenshots: %v", shots)
	}
	for _, r := range rep.Results {
		for _, s := range r.Steps {
			if s.Screenshot != nil && !strings.Contains(html, filepath.Base(s.Screenshot.Path)) {
				t.Errorf("the page does not show %s", s.Screenshot.Path)
			}
		}
	}

	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = needTool(t, "chromium", "chromium")
	}
	out := filepath.Join(dir, "report.png")
	// A bound for the browser process, not a timing threshold: a hung browser fails the
	// test instead of holding it until go test's own timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--user-data-dir="+filepath.Join(t.TempDir(), "profile"), "--window-size=1100,1500",
		"--screenshot="+out, "file://"+filepath.Join(dir, "report", "index.html"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, b)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	// The page rendered: its badges' colours are in the image (not a blank page).
	colours := map[uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 7 {
		for x := b.Min.X; x < b.Max.X; x += 7 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[r>>12<<8|g>>12<<4|bl>>12] = true
		}
	}
	if len(colours) < 8 {
		t.Errorf("the page's screenshot has %d colours: blank?", len(colours))
	}
	t.Logf("page screenshot: %s", out)
}
