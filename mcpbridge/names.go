package mcpbridge

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
)

// Exposed app tools need names every MCP client accepts. Claude Desktop and claude.ai check
// names against clientToolName and hide the server's whole tool set when one fails, the
// Copilot CLI answers HTTP 400, VS Code renames with a warning; app ids such as
// "notes.create" have a dot. Clients also prefix names with the server's (Claude Code:
// mcp__<server>__<tool>) and reject the result over 64 characters.

// clientToolName is the strictest tool name pattern popular clients enforce.
var clientToolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// maxExposedNameLength leaves room for a client's prefix, mcp__<server>__: the server
// name's length + 7 + the tool name's must stay within 64. 45 fits the server names the
// README and docs/mcp.md give (the longest, "ansight-demo", makes mcp__ansight-demo__, 19
// characters) and any other of up to 12 characters.
const maxExposedNameLength = 45

// hashSuffixLength is the length of "_" and the hex digits that tell apart names that
// would otherwise be the same.
const hashSuffixLength = 9

// exposedNames maps app tool ids to client-safe names: characters other than letters,
// digits, '_' and '-' (the dots) become '_'. When two ids would get one name, an id that
// is already that name keeps it and the others get a suffix made from a hash of the id;
// so do names over maxExposedNameLength (cut to make room). Names never start with
// "ansight_", the meta-tools' prefix. The mapping depends only on the set of ids.
func exposedNames(ids []string) map[string]string {
	base := make(map[string]string, len(ids))
	count := map[string]int{}
	for _, id := range ids {
		b := safeName(id)
		base[id] = b
		count[b]++
	}
	out := make(map[string]string, len(ids))
	for _, id := range ids {
		b := base[id]
		if len(b) <= maxExposedNameLength && (count[b] == 1 || b == id) {
			out[id] = b
			continue
		}
		out[id] = hashedName(b, id)
	}
	return out
}

// safeName is id with every character a client refuses replaced by '_'.
func safeName(id string) string {
	var b strings.Builder
	for _, r := range id {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "" || strings.HasPrefix(s, "ansight_") {
		s = "app_" + s
	}
	return s
}

// hashedName is base cut to fit, with a suffix from the hash of id.
func hashedName(base, id string) string {
	sum := sha256.Sum256([]byte(id))
	if n := maxExposedNameLength - hashSuffixLength; len(base) > n {
		base = base[:n]
	}
	return base + "_" + hex.EncodeToString(sum[:])[:hashSuffixLength-1]
}
