package files

import (
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/internal/flatargs"
	"github.com/ansight-go/ansight/wire"
)

// Ids of the file tools.
const (
	ListDirectoryToolID       = "files.list_directory"
	BeginBinaryDownloadToolID = "files.begin_binary_download"
	PushFileToolID            = "files.push_file"
	ReadFileToolID            = "files.read_file"
	GetFileChecksumToolID     = "files.get_file_checksum"
	DownloadFileToolID        = "files.download_file"
	CopyFileToolID            = "files.copy_file"
	MoveFileToolID            = "files.move_file"
	DeleteFileToolID          = "files.delete_file"
)

// Register adds the file tools over opts.Roots to a: files.list_directory,
// files.read_file, files.get_file_checksum, files.download_file and
// files.begin_binary_download (read); when a root is writable, files.push_file,
// files.copy_file and files.move_file (write) and files.delete_file (critical, so hidden by
// the default guard: an app that wants it exposes critical tools with
// catalog.GuardFullAccess). Every root must be an existing directory. Call it once, before
// serving.
func Register(a *app.App, opts Options) error {
	t, err := newTree(opts)
	if err != nil {
		return err
	}
	def := func(id, name, keywords, description string, policy wire.Policy) catalog.Definition {
		return catalog.Definition{ID: id, Name: name, Category: "files", Policy: policy, Keywords: keywords,
			Description: description + " Roots: " + t.aliases() + "."}
	}
	// The tools the official SDKs declare with flattened-string arguments are declared so
	// here too (same definition, so hosts build the same requests), with the arguments
	// schema they publish.
	flat := func(d catalog.Definition, schema string) catalog.Definition {
		d.ArgumentEncoding = wire.ArgumentEncodingFlattenedString
		d.ArgumentsSchema = jsontext.Value(schema)
		return d
	}
	regs := []func() error{
		func() error {
			return app.Register(a, def(ListDirectoryToolID, "List directory", "filesystem files directory folder list browse sandbox",
				"Lists the files and subdirectories of a directory under one of the app's roots (recursively on request).", wire.PolicyRead),
				t.list)
		},
		func() error {
			return app.Register(a, def(BeginBinaryDownloadToolID, "Begin binary download", "filesystem file download binary transfer export sandbox",
				"Sends a file from one of the app's roots to the host: the result describes the file and its ASFT "+
					"transfer, the bytes follow as binary frames.", wire.PolicyRead),
				t.download)
		},
		func() error {
			return app.Register(a, flat(def(ReadFileToolID, "Read file", "filesystem file read text base64 sandbox",
				"Reads the start of a file under one of the app's roots (maxBytes, 64 KiB by default, at most 1 MiB) as UTF-8 text or base64.",
				wire.PolicyRead), readFileSchema), t.readFile)
		},
		func() error {
			return app.Register(a, flat(def(GetFileChecksumToolID, "Get file checksum", "filesystem file checksum hash digest md5 sha1 sha256 sha384 sha512 crc32 sandbox",
				"Computes digests of a file under one of the app's roots (md5, sha1, sha256, sha384, sha512, crc32 or all) without returning its content.",
				wire.PolicyRead), checksumSchema), t.checksum)
		},
		func() error {
			return app.Register(a, flat(def(DownloadFileToolID, "Download file", "filesystem file download chunk resume sandbox base64 text binary",
				"Reads a file under one of the app's roots in chunks (maxBytes from offsetBytes, 256 KiB by default, at most 1 MiB) as text "+
					"or base64; each result carries the request for the next chunk, which fails if the file changed meanwhile.",
				wire.PolicyRead), downloadFileSchema), t.downloadFile)
		},
	}
	for _, r := range t.roots {
		if !r.ReadOnly {
			regs = append(regs, func() error {
				return app.Register(a, def(PushFileToolID, "Push file", "filesystem file upload push write sandbox base64 text",
					"Writes a file the host sends (base64 or text) into a directory under one of the app's writable roots.", wire.PolicyWrite),
					t.push)
			}, func() error {
				return app.Register(a, flat(def(CopyFileToolID, "Copy file", "filesystem file copy duplicate sandbox",
					"Copies a file to a path under one of the app's writable roots (overwrite to replace a file, createDirectory to make its directory).",
					wire.PolicyWrite), transferSchema), t.copyFile)
			}, func() error {
				return app.Register(a, flat(def(MoveFileToolID, "Move file", "filesystem file move rename sandbox",
					"Moves or renames a file of a writable root to a path under one of the app's writable roots.",
					wire.PolicyWrite), transferSchema), t.moveFile)
			}, func() error {
				return app.Register(a, flat(def(DeleteFileToolID, "Delete file", "filesystem file delete remove sandbox",
					"Deletes a file of one of the app's writable roots.", wire.PolicyCritical), deleteSchema), t.deleteFile)
			})
			break
		}
	}
	for _, reg := range regs {
		if err := reg(); err != nil {
			return fmt.Errorf("files: %w", err)
		}
	}
	return nil
}

// The arguments schemas of the flattened-string tools, as the official SDKs publish them.
var (
	rootProp           = flatargs.Prop("root", `["string","null"]`, "the root's alias (default: the root that holds path, else the first)")
	pathProp           = flatargs.Prop("path", `"string"`, "the file, relative to the root (or absolute inside it)")
	encodingProp       = `"encoding":{"type":["string","null"],"enum":["auto","utf8","base64"],"description":"auto (text when the bytes are UTF-8 text, else base64), utf8 or base64"}`
	readFileSchema     = flatargs.Schema([]string{"path"}, rootProp, pathProp, flatargs.Prop("maxBytes", `"integer"`, "bytes to read, 1 to 1048576 (default 65536)"), encodingProp)
	checksumSchema     = flatargs.Schema([]string{"path"}, rootProp, pathProp, flatargs.Prop("algorithms", `["string","null"]`, "md5, sha1, sha256, sha384, sha512, crc32 or all, separated by commas (default sha256)"))
	downloadFileSchema = flatargs.Schema([]string{"path"}, rootProp, pathProp,
		flatargs.Prop("offsetBytes", `"integer"`, "where the chunk starts (default 0)"),
		flatargs.Prop("maxBytes", `"integer"`, "bytes in the chunk, 1 to 1048576 (default 262144)"), encodingProp,
		flatargs.Prop("expectedVersion", `["string","null"]`, "the version of the chunks read so far: the call fails if the file changed"))
	transferSchema = flatargs.Schema([]string{"sourcePath", "destinationPath"},
		flatargs.Prop("root", `["string","null"]`, "the source's root (default: the root that holds sourcePath, else the first)"),
		flatargs.Prop("sourcePath", `"string"`, "the file to copy or move"),
		flatargs.Prop("destinationRoot", `["string","null"]`, "the destination's root (default: the source's, for a relative destinationPath)"),
		flatargs.Prop("destinationPath", `"string"`, "the destination file"),
		flatargs.Prop("overwrite", `"boolean"`, "replace an existing file (default false)"),
		flatargs.Prop("createDirectory", `"boolean"`, "create the destination's directory when missing (default true)"))
	deleteSchema = flatargs.Schema([]string{"path"}, rootProp, pathProp)
)
