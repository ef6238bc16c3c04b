package outside_test

import (
	"strings"
	"testing"
)

// hostSidePackages are what a client of the host API must not link: the host, its tool
// client, the recorder and its database.
var hostSidePackages = []string{ansight + "/host", ansight + "/recording", "modernc.org/sqlite", "modernc.org/libc"}

// The clients of the host API — the MCP bridge, the player, and a program outside this
// module that imports hostapi alone — link no host, recorder or SQLite: hostapi is a
// contract with types of its own. The figures are logged (-v).
func TestContractClientsLinkNoHost(t *testing.T) {
	t.Parallel()
	for _, pkg := range []string{ansight + "/mcpbridge", ansight + "/player", ansight + "/hostapi", "./hostapiclient"} {
		t.Run(strings.TrimPrefix(pkg, ansight+"/"), func(t *testing.T) {
			t.Parallel()
			deps := lines(goCmd(t, ".", nil, "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg))
			all := lines(goCmd(t, ".", nil, "list", "-deps", pkg))
			for _, d := range deps {
				for _, bad := range hostSidePackages {
					if d == bad || strings.HasPrefix(d, bad+"/") {
						t.Errorf("%s links %s", pkg, d)
					}
				}
			}
			if len(deps) == 0 || !strings.Contains(strings.Join(deps, "\n"), ansight+"/hostapi") {
				t.Fatalf("go list -deps %s misses hostapi: the check looks at the wrong packages", pkg)
			}
			t.Logf("%s: go list -deps %d packages (%d outside the standard library)", pkg, len(all), len(deps))
		})
	}
}
