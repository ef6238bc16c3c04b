package cli

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ansight-go/ansight/hostapi"
)

// agentSnippet is one client configuration from the README: how the client would start the
// bridge.
type agentSnippet struct {
	client  string
	command string
	args    []string
}

// readmeSnippets parses the client configurations of the README's "Use with AI agents":
// 'claude mcp add … -- command args' lines and the JSON files of the other clients.
func readmeSnippets(t *testing.T) []agentSnippet {
	t.Helper()
	b, err := os.ReadFile("../../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start := strings.Index(readme, "\n## Use with AI agents\n")
	if start < 0 {
		t.Fatal("README has no 'Use with AI agents' section")
	}
	section := readme[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	// Each configuration is a fenced sh or json block after a paragraph that starts with
	// the client's name in bold.
	type block struct{ client, lang, body string }
	var blocks []block
	client, lang, body := "", "", ""
	for _, line := range strings.Split(section, "\n") {
		switch {
		case lang != "" && line == "```":
			blocks = append(blocks, block{client, lang, body})
			lang, body = "", ""
		case lang != "":
			body += line + "\n"
		case line == "```sh" || line == "```json":
			lang = strings.TrimPrefix(line, "```")
		default:
			if m := regexp.MustCompile(`^\*\*([^*]+)\*\*`).FindStringSubmatch(line); m != nil {
				client = m[1]
			}
		}
	}
	var out []agentSnippet
	for _, b := range blocks {
		client, lang, body := b.client, b.lang, b.body
		switch lang {
		case "sh":
			for _, line := range strings.Split(body, "\n") {
				if line = strings.TrimSpace(line); line == "" {
					continue
				}
				if strings.ContainsAny(line, `'"\`) {
					t.Fatalf("%s: quoting is not parsed here: %s", client, line)
				}
				f := strings.Fields(line)
				i := indexOf(f, "--")
				if len(f) < 4 || f[0] != "claude" || f[1] != "mcp" || f[2] != "add" || i < 0 || i+1 >= len(f) {
					t.Fatalf("%s: not 'claude mcp add … NAME -- COMMAND ARGS': %s", client, line)
				}
				out = append(out, agentSnippet{client, f[i+1], f[i+2:]})
			}
		case "json":
			var cfg struct {
				MCPServers map[string]struct {
					Command string   `json:"command"`
					Args    []string `json:"args"`
				} `json:"mcpServers"`
				Servers map[string]struct {
					Type    string   `json:"type"`
					Command string   `json:"command"`
					Args    []string `json:"args"`
				} `json:"servers"`
			}
			dec := json.NewDecoder(strings.NewReader(body))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&cfg); err != nil {
				t.Fatalf("%s: %v\n%s", client, err, body)
			}
			for _, s := range cfg.MCPServers {
				out = append(out, agentSnippet{client, s.Command, s.Args})
			}
			for _, s := range cfg.Servers {
				if s.Type != "stdio" {
					t.Fatalf("%s: VS Code wants \"type\": \"stdio\", got %q", client, s.Type)
				}
				out = append(out, agentSnippet{client, s.Command, s.Args})
			}
		}
	}
	return out
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// TestAgentSnippets starts the bridge from every client configuration of the README, in
// the environment such a client gives it (HOME, nothing else of the user's): the --demo
// ones alone, the others against a resident host whose state directory came from
// XDG_STATE_HOME in the user's terminal, which the bridge must find without it.
func TestAgentSnippets(t *testing.T) {
	snippets := readmeSnippets(t)
	clients := map[string]bool{}
	for _, s := range snippets {
		clients[s.client] = true
	}
	for _, want := range []string{"Claude Code", "Claude Desktop", "Cursor", "VS Code"} {
		if !clients[want] {
			t.Errorf("no snippet for %s (have %v)", want, clients)
		}
	}

	// The user's terminal: XDG_STATE_HOME set, a resident host and the demo app.
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("ANSIGHT_STATE_DIR", "")
	t.Setenv("XDG_STATE_HOME", filepath.Join(t.TempDir(), "xdg"))
	stateDir, err := hostapi.DefaultStateDir()
	if err != nil {
		t.Fatal(err)
	}
	discard := slog.New(slog.DiscardHandler)
	rh, err := startHost(t.Context(), hostConfig{stateDir: stateDir, discovery: "127.0.0.1:0", listen: "127.0.0.1:0", logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	defer rh.close()
	if err := rh.serveControl(); err != nil {
		t.Fatal(err)
	}
	stopApp, err := connectDemoApp(t.Context(), rh, stateDir, discard)
	if err != nil {
		t.Fatal(err)
	}
	defer stopApp()
	// The agent client's environment: no XDG_STATE_HOME.
	t.Setenv("XDG_STATE_HOME", "")

	for _, s := range snippets {
		t.Run(s.client+" "+strings.Join(s.args, " "), func(t *testing.T) {
			if filepath.Base(s.command) != "ansight" || len(s.args) == 0 || s.args[0] != "mcp" {
				t.Fatalf("the snippet does not start 'ansight mcp': %s %v", s.command, s.args)
			}
			cs, wait := mcpRun(t, s.args[1:]...)
			list, err := cs.ListTools(t.Context(), nil)
			if err != nil || len(list.Tools) < 8 {
				t.Fatalf("tools/list: %v %v", list, err)
			}
			var sessions struct {
				Sessions []struct{ AppID string }
			}
			res := callJSON(t, cs, "ansight_list_sessions", nil, &sessions)
			if res.IsError || len(sessions.Sessions) != 1 || sessions.Sessions[0].AppID != demoAppID {
				t.Fatalf("sessions: %s", res.Content[0].(*mcp.TextContent).Text)
			}
			if code := wait(); code != ExitOK {
				t.Fatalf("exit code %d", code)
			}
		})
	}

	// Without a pointer it can trust, the host stays out of reach: the fallback is what
	// found it. A pointer others could have written is not trusted.
	pointer := filepath.Join(home, ".local", "state", "ansight", hostPointerName)
	for _, spoil := range []func() error{
		func() error { return os.Chmod(pointer, 0o622) },
		func() error { return os.Remove(pointer) },
	} {
		if err := spoil(); err != nil {
			t.Fatal(err)
		}
		cs, wait := mcpRun(t)
		var failed struct{ Error struct{ Code string } }
		if res := callJSON(t, cs, "ansight_list_sessions", nil, &failed); !res.IsError || failed.Error.Code != "host_unavailable" {
			t.Fatalf("without a trusted pointer: %+v", failed)
		}
		wait()
	}
}
