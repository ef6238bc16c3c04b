package flow

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// The JUnit XML report in the shape Jenkins, GitLab, GitHub Actions' reporters and Ant's
// junitreport read (docs/flows.md#junit): testsuites › testsuite (one per session) ›
// testcase (one per flow) › failure or error, with the step log as system-out.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Hostname   string          `xml:"hostname,attr"`
	ID         int             `xml:"id,attr"`
	Package    string          `xml:"package,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// seconds writes milliseconds as JUnit's decimal seconds.
func seconds(ms int64) string { return fmt.Sprintf("%d.%03d", ms/1000, ms%1000) }

// WriteJUnit writes the report as JUnit XML: a testsuite per session (named by the
// session, with the app and host as properties), a testcase per flow in it (named by the
// flow, its file as classname), a failure (a step failed: message = the step, the
// expectation and the actual value) or an error (the flow could not run), and each
// flow's step log as system-out.
func (run *Report) WriteJUnit(w io.Writer) error {
	doc := junitSuites{Name: "ansight test run", Time: seconds(run.DurationMS)}
	index := map[string]int{}
	var suiteMS []int64
	for _, r := range run.Results {
		key := r.Host + "\x00" + r.SessionID
		i, ok := index[key]
		if !ok {
			i = len(doc.Suites)
			index[key] = i
			name := r.SessionID
			if r.Host != "" {
				name += "@" + r.Host
			}
			host := r.Host
			if host == "" {
				host, _ = os.Hostname()
			}
			if host == "" {
				host = "localhost"
			}
			s := junitSuite{Name: name, Timestamp: r.StartedAt.UTC().Format("2006-01-02T15:04:05"), Hostname: host,
				ID: i, Package: r.AppID}
			s.Properties = append(s.Properties, junitProperty{"sessionId", r.SessionID})
			if r.AppID != "" {
				s.Properties = append(s.Properties, junitProperty{"appId", r.AppID})
			}
			if r.Host != "" {
				s.Properties = append(s.Properties, junitProperty{"host", r.Host})
			}
			doc.Suites = append(doc.Suites, s)
			suiteMS = append(suiteMS, 0)
		}
		s := &doc.Suites[i]
		c := junitCase{Name: r.Name, Classname: classname(r.File), Time: seconds(r.DurationMS), SystemOut: stepLog(r)}
		switch r.Status {
		case StatusFailed:
			c.Failure = problem(r, "expectation")
			s.Failures++
			doc.Failures++
		case StatusError, StatusSkipped:
			c.Error = problem(r, "error")
			s.Errors++
			doc.Errors++
		}
		s.Tests++
		doc.Tests++
		suiteMS[i] += r.DurationMS
		s.Cases = append(s.Cases, c)
	}
	for i := range doc.Suites {
		doc.Suites[i].Time = seconds(suiteMS[i])
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// classname is a flow file's path in the dotted form JUnit viewers group by.
func classname(file string) string {
	file = strings.TrimPrefix(strings.ReplaceAll(file, `\`, "/"), "./")
	if i := strings.LastIndexByte(file, '.'); i > strings.LastIndexByte(file, '/') {
		file = file[:i]
	}
	return strings.ReplaceAll(strings.Trim(file, "/"), "/", ".")
}

func problem(r *Result, typ string) *junitProblem {
	f := r.Failure
	if f == nil {
		return &junitProblem{Message: string(r.Status), Type: typ}
	}
	var text strings.Builder
	fmt.Fprintf(&text, "step: %s\nat: %s\n", f.Step, f.Pos)
	if f.Expectation != "" {
		fmt.Fprintf(&text, "expected: %s\n", f.Expectation)
	}
	if f.Actual != "" {
		fmt.Fprintf(&text, "actual: %s\n", f.Actual)
	}
	return &junitProblem{Message: f.Message, Type: typ, Text: text.String()}
}

// stepLog is one line per step: status, duration, label, position.
func stepLog(r *Result) string {
	var b strings.Builder
	for _, s := range r.Steps {
		fmt.Fprintf(&b, "%-7s %6s  %s[%d] %s (%s)\n", s.Status, (time.Duration(s.DurationMS) * time.Millisecond).String(), s.Phase, s.Index, s.Label, s.Pos)
		if s.Failure != nil {
			fmt.Fprintf(&b, "        %s\n", s.Failure.Message)
		}
	}
	return b.String()
}
