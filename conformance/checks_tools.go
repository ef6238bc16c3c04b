package conformance

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/wire"
)

// The standard tools of the official SDKs, checked on any app that offers them with the
// official shapes (docs/protocol/compatibility.md#files-data-and-preferences). The checks
// only read: no file, row or preference of the app is changed.
var toolChecks = []check{
	{"tools.files", "files.list_directory, files.read_file, files.download_file and files.get_file_checksum as the official SDKs answer them: the file descriptor with the size:ticks version, text or base64 as asked, chunks that follow each nextRequest as sent (its integers as strings) to the end and add up to the file, a stale expectedVersion refused with filesystem_download_version_mismatch, a sha256 of those bytes, and a path out of every root refused", checkFileTools},
	{"tools.data", "data.list_databases, data.describe_schema and data.query as the official SDKs answer them: databases with name and path, tables with columns, a query's columns, rows and typed rowValues, maxRows as a string, and writes and several statements refused with database_query_failed (a CREATE TEMP TABLE probe, which changes nothing that lasts)", checkDataTools},
	{"tools.prefs", "prefs.list_keys and prefs.get_value as the official SDKs answer them: a store's keys in ordinal order, a value as text with its valueType, and a key that does not exist answered exists:false", checkPrefsTools},
	{"tools.artifacts", "artifacts.query lists providers and artifacts; artifacts.request streams one with the descriptor as the result object itself, the only place the official host registers a transfer", checkArtifactTools},
}

// readTool returns the tool id when the app offers it as an executable read tool (nil
// otherwise): the checks below never call anything else.
func (c *cx) readTool(id string) *toolView {
	if t := c.catalog().byID[id]; t != nil && t.executable && t.policy == wire.PolicyRead {
		return t
	}
	return nil
}

// call runs a tool with JSON arguments and returns the result payload's result.
func (c *cx) call(tool, args string) map[string]any {
	o := c.callOK(wire.Call{ToolID: tool, Arguments: jsontext.Value(args)})
	res, _ := o["result"].(map[string]any)
	if res == nil {
		c.expectf("a result object", "%s answered %s", tool, describe(o["result"]))
	}
	return res
}

// fail runs a tool that must fail and returns the error's code.
func (c *cx) fail(tool, args string, codes ...wire.Code) string {
	p := c.exchange(wire.TypeCall, callPayload(wire.Call{ToolID: tool, Arguments: jsontext.Value(args)}))
	code, _ := c.wantError(p, codes...)["code"].(string)
	return code
}

// strArgs writes a JSON object of string members, as flattened-string tools take them.
func strArgs(kv ...string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	b, err := wire.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

var versionToken = regexp.MustCompile(`^(\d+):(\d+)$`)

// fileDescriptorProblems checks the members the official SDKs put in every file result.
func fileDescriptorProblems(r map[string]any) []string {
	var list []string
	for _, k := range []string{"rootAlias", "rootPath", "filePath", "relativePath", "fileName", "mimeType", "version", "lastModifiedUtc"} {
		if s, _ := r[k].(string); s == "" {
			list = append(list, fmt.Sprintf("%s is %s, want a string", k, describe(r[k])))
		}
	}
	if _, ok := r["availableRoots"].([]any); !ok {
		list = append(list, fmt.Sprintf("availableRoots is %s, want an array", describe(r["availableRoots"])))
	}
	size, ok := r["sizeBytes"].(float64)
	if !ok || size < 0 {
		list = append(list, fmt.Sprintf("sizeBytes is %s", describe(r["sizeBytes"])))
	}
	v, _ := r["version"].(string)
	if m := versionToken.FindStringSubmatch(v); m == nil {
		list = append(list, fmt.Sprintf("version %q is not <size>:<ticks>", v))
	} else if n, _ := strconv.ParseFloat(m[1], 64); n != size {
		list = append(list, fmt.Sprintf("version %q does not start with sizeBytes %v", v, size))
	}
	if s, _ := r["lastModifiedUtc"].(string); s != "" {
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			list = append(list, fmt.Sprintf("lastModifiedUtc %q is not a date-time", s))
		}
	}
	return list
}

// content returns the bytes of a read_file or download_file result, checking that exactly
// one of text and base64 holds them as contentType and encoding say.
func (c *cx) content(r map[string]any) []byte {
	text, isText := r["text"].(string)
	b64, isB64 := r["base64"].(string)
	switch {
	case isText && r["base64"] == nil && r["contentType"] == "text" && r["encoding"] == "utf-8":
		return []byte(text)
	case isB64 && r["text"] == nil && r["contentType"] == "binary" && r["encoding"] == "base64":
		b, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			c.expectf("standard base64", "base64 does not decode: %v", err)
		}
		return b
	}
	c.expectf("text (contentType text, encoding utf-8) or base64 (binary, base64), the other null", "contentType %s, encoding %s, text %s, base64 %s",
		describe(r["contentType"]), describe(r["encoding"]), describe(r["text"]), describe(r["base64"]))
	return nil
}

func checkFileTools(c *cx) {
	if c.readTool("files.list_directory") == nil {
		c.skipf("the app offers no files.list_directory")
	}
	// A file to read: the first of the default root (recursively), at most 1 MiB.
	list := c.call("files.list_directory", `{"recursive":true,"maxDepth":3,"maxEntries":200}`)
	entries, _ := list["entries"].([]any)
	var root, path string
	var size float64
	for _, e := range entries {
		e, _ := e.(map[string]any)
		if n, ok := e["sizeBytes"].(float64); ok && e["kind"] == "file" && n > 0 && n <= 1<<20 {
			root, _ = e["rootAlias"].(string)
			path, _ = e["relativePath"].(string)
			size = n
			break
		}
	}
	if path == "" {
		c.skipf("no file of 1 byte to 1 MiB in the default root to read")
	}
	var whole []byte
	if c.readTool("files.read_file") != nil {
		r := c.call("files.read_file", strArgs("root", root, "path", path, "maxBytes", "1048576", "encoding", "base64"))
		c.problems("the official file descriptor (docs/protocol/compatibility.md#files-data-and-preferences)", fileDescriptorProblems(r))
		whole = c.content(r)
		if n, _ := r["bytesRead"].(float64); int(n) != len(whole) || float64(len(whole)) != size || r["truncated"] != false {
			c.expectf("the whole file, bytesRead its length, truncated false", "bytesRead %v, %d bytes, truncated %v, sizeBytes %v", r["bytesRead"], len(whole), r["truncated"], size)
		}
		c.fail("files.read_file", strArgs("path", "../../../../../../../../../../etc/passwd", "root", root), "filesystem_read_failed")
	}
	if c.readTool("files.download_file") != nil {
		chunk := max(1, int(size)/5+1) // five or six chunks
		req := fmt.Sprintf(`{"root":%q,"path":%q,"maxBytes":%d,"encoding":"base64"}`, root, path, chunk)
		var got []byte
		var version string
		for pages := 0; ; pages++ {
			if pages > 16 {
				c.expectf("the end of the file within 16 chunks", "still hasMore after %d", pages)
			}
			r := c.call("files.download_file", req)
			if pages == 0 {
				c.problems("the official file descriptor", fileDescriptorProblems(r))
				version, _ = r["version"].(string)
			}
			if off, _ := r["offsetBytes"].(float64); int(off) != len(got) {
				c.expectf("chunks that follow each other", "offsetBytes %v after %d bytes", r["offsetBytes"], len(got))
			}
			got = append(got, c.content(r)...)
			next, _ := r["nextRequest"].(map[string]any)
			if r["hasMore"] != true {
				if next != nil || r["nextOffsetBytes"] != nil {
					c.expectf("nextRequest and nextOffsetBytes null at the end", "%s, %s", describe(r["nextRequest"]), describe(r["nextOffsetBytes"]))
				}
				break
			}
			a, _ := next["arguments"].(map[string]any)
			if next["toolId"] != "files.download_file" || a["expectedVersion"] != version || a["encoding"] != "base64" {
				c.expectf("a nextRequest {toolId files.download_file, arguments{root, path, offsetBytes, maxBytes, encoding, expectedVersion}}", "%v", next)
			}
			b, _ := wire.Marshal(a)
			req = string(b) // as sent: its integers are strings

		}
		if float64(len(got)) != size || (whole != nil && string(got) != string(whole)) {
			c.expectf("chunks that add up to the file", "%d bytes (sizeBytes %v), same as read_file: %v", len(got), size, whole == nil || string(got) == string(whole))
		}
		whole = got
		c.fail("files.download_file", strArgs("root", root, "path", path, "offsetBytes", "0", "expectedVersion", "0:0"), "filesystem_download_version_mismatch")
	}
	if c.readTool("files.get_file_checksum") != nil && whole != nil {
		r := c.call("files.get_file_checksum", strArgs("root", root, "path", path, "algorithms", "sha256"))
		sums, _ := r["checksums"].([]any)
		want := sha256.Sum256(whole)
		if len(sums) != 1 {
			c.expectf("one checksum", "%s", describe(r["checksums"]))
		}
		if s, _ := sums[0].(map[string]any); s["algorithm"] != "sha256" || s["encoding"] != "hex" || s["checksum"] != hex.EncodeToString(want[:]) {
			c.expectf("{algorithm sha256, checksum "+hex.EncodeToString(want[:])+", encoding hex}", "%v", sums[0])
		}
	}
}

func checkDataTools(c *cx) {
	if c.readTool("data.list_databases") == nil {
		c.skipf("the app offers no data.list_databases")
	}
	list := c.call("data.list_databases", `{}`)
	dbs, _ := list["databases"].([]any)
	if _, ok := list["truncated"].(bool); !ok {
		c.expectf("truncated, a boolean", "%s", describe(list["truncated"]))
	}
	if len(dbs) == 0 {
		c.skipf("the app lists no database")
	}
	db, _ := dbs[0].(map[string]any)
	path, _ := db["path"].(string)
	if name, _ := db["name"].(string); name == "" || path == "" {
		c.expectf("a database {name, path, relativePath, rootAlias, sizeBytes, lastModifiedUtc}", "%v", db)
	}
	table := ""
	if c.readTool("data.describe_schema") != nil {
		s := c.call("data.describe_schema", strArgs("path", path))
		tables, ok := s["tables"].([]any)
		if !ok {
			c.expectf("tables, an array", "%s", describe(s["tables"]))
		}
		for _, t := range tables {
			t, _ := t.(map[string]any)
			name, _ := t["name"].(string)
			if _, ok := t["columns"].([]any); name == "" || !ok {
				c.expectf("a table {name, type, sql, columns[], indexes[]}", "%v", t)
			}
			if t["type"] == "table" && table == "" {
				table = name
			}
		}
	}
	if c.readTool("data.query") == nil {
		return
	}
	r := c.call("data.query", strArgs("path", path, "sql", "SELECT 1 AS one", "maxRows", "5"))
	rows, _ := r["rows"].([]any)
	cells, _ := r["rowValues"].([]any)
	if cols, _ := r["columns"].([]any); len(cols) != 1 || cols[0] != "one" || len(rows) != 1 || len(cells) != 1 {
		c.expectf("columns [one], one row and one rowValues entry", "columns %s, %d rows, %d rowValues", describe(r["columns"]), len(rows), len(cells))
	}
	if row, _ := rows[0].(map[string]any); row["one"] != float64(1) {
		c.expectf(`the row {"one":1}`, "%v", rows[0])
	}
	var first map[string]any
	if cell, _ := cells[0].([]any); len(cell) == 1 {
		first, _ = cell[0].(map[string]any)
	}
	if first["storageType"] != "integer" {
		c.expectf(`rowValues [[{columnKey one, columnName one, storageType integer, value 1}]]`, "%v", cells[0])
	}
	if table != "" {
		r := c.call("data.query", strArgs("path", path, "sql", `SELECT * FROM "`+strings.ReplaceAll(table, `"`, `""`)+`"`, "maxRows", "1"))
		if rows, _ := r["rows"].([]any); len(rows) > 1 {
			c.expectf("at most maxRows (1) rows", "%d rows", len(rows))
		}
	}
	for _, sql := range []string{"SELECT 1; SELECT 2", "CREATE TEMP TABLE ansight_conformance_probe (x)"} {
		c.fail("data.query", strArgs("path", path, "sql", sql), "database_query_failed")
	}
}

func checkPrefsTools(c *cx) {
	if c.readTool("prefs.list_keys") == nil {
		c.skipf("the app offers no prefs.list_keys")
	}
	r := c.call("prefs.list_keys", `{"maxResults":"50"}`)
	keys, ok := r["keys"].([]any)
	if store, _ := r["store"].(string); !ok || store == "" {
		c.expectf("{store, keys[], truncated, capturedAtUtc}", "store %s, keys %s", describe(r["store"]), describe(r["keys"]))
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i], _ = k.(string)
	}
	if !slices.IsSorted(names) {
		c.expectf("keys in ordinal order", "%v", names)
	}
	if c.readTool("prefs.get_value") == nil {
		return
	}
	types := []string{"string", "boolean", "integer", "number", "string_array", "unsupported"}
	if len(names) > 0 {
		v := c.call("prefs.get_value", strArgs("key", names[0]))
		typ, _ := v["valueType"].(string)
		if _, isText := v["value"].(string); v["exists"] != true || !isText || !slices.Contains(types, typ) {
			c.expectf("{exists true, value as text, valueType string|boolean|integer|number|string_array|unsupported}", "%v", v)
		}
	}
	p := c.exchange(wire.TypeCall, callPayload(wire.Call{ToolID: "prefs.get_value", Arguments: jsontext.Value(strArgs("key", "ansight.conformance.no-such-key"))}))
	if p.typ() == wire.TypeResult {
		o := p.obj()
		if v, _ := o["result"].(map[string]any); v["exists"] != false || v["value"] != nil || v["valueType"] != nil {
			c.expectf("a key that does not exist: {exists false, value null, valueType null}", "%v", o["result"])
		}
	} else {
		c.wantError(p, "prefs_get_failed") // a registration that allows only some keys
	}
}

func checkArtifactTools(c *cx) {
	if c.readTool("artifacts.query") == nil {
		c.skipf("the app offers no artifacts.query")
	}
	q := c.call("artifacts.query", `{}`)
	arts, ok := q["artifacts"].([]any)
	if _, okP := q["providers"].([]any); !ok || !okP {
		c.expectf("{providers[], artifacts[], providerCount, artifactCount}", "providers %s, artifacts %s", describe(q["providers"]), describe(q["artifacts"]))
	}
	if len(arts) == 0 || c.readTool("artifacts.request") == nil {
		c.skipf("no artifact to request")
	}
	a, _ := arts[0].(map[string]any)
	provider, _ := a["providerId"].(string)
	id, _ := a["id"].(string)
	res := c.call("artifacts.request", fmt.Sprintf(`{"providerId":%q,"artifactId":%q}`, provider, id))
	tid, _ := res["transferId"].(string)
	if res["deliveryMode"] != wire.DeliveryModeWebSocketBinary || res["wireProtocol"] != wire.FileTransferProtocol || tid == "" {
		c.expectf("the result object itself is the transfer descriptor (the official host registers no other)", "result has deliveryMode %s, wireProtocol %s, transferId %s",
			describe(res["deliveryMode"]), describe(res["wireProtocol"]), describe(res["transferId"]))
	}
	if err := c.r.awaitTransfer(c.ctx, tid); err != nil {
		c.failf("transfer %s did not end: %v", tid, err)
	}
}
