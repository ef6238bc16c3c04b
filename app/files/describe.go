package files

import (
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// fileFields are the members the official SDKs put in every result about one file.
type fileFields struct {
	RootAlias      string     `json:"rootAlias" jsonschema:"the root's alias"`
	RootPath       string     `json:"rootPath" jsonschema:"the root's absolute path"`
	FilePath       string     `json:"filePath" jsonschema:"the file's absolute path"`
	RelativePath   string     `json:"relativePath" jsonschema:"the file's path relative to its root, with forward slashes"`
	AvailableRoots []rootInfo `json:"availableRoots" jsonschema:"every root of the app"`
	FileName       string     `json:"fileName"`
	FileExtension  *string    `json:"fileExtension" jsonschema:"the extension with its dot, or null"`
	MimeType       string     `json:"mimeType" jsonschema:"best-effort MIME type from the extension"`
	SizeBytes      int64      `json:"sizeBytes"`
	LastModified   time.Time  `json:"lastModifiedUtc"`
	Version        string     `json:"version" jsonschema:"size:ticks of the last modification; changes when the file does"`
}

// describeFile fills the file fields of target g from its metadata.
func (t *tree) describeFile(g target, fi fs.FileInfo) fileFields {
	return fileFields{
		RootAlias:      g.root.Alias,
		RootPath:       g.root.Path,
		FilePath:       g.abs(),
		RelativePath:   g.slash(),
		AvailableRoots: t.available(),
		FileName:       fi.Name(),
		FileExtension:  extension(fi.Name()),
		MimeType:       mimeType(fi.Name()),
		SizeBytes:      fi.Size(),
		LastModified:   fi.ModTime().UTC(),
		Version:        version(fi),
	}
}

// version is the official SDKs' version token, "<size>:<ticks>", where ticks count the
// 100 ns intervals since 0001-01-01 UTC (.NET's DateTime.Ticks) of the last modification:
// a client can compare tokens across SDKs.
func version(fi fs.FileInfo) string {
	const unixEpochTicks = 621355968000000000
	ticks := fi.ModTime().UnixNano()/100 + unixEpochTicks
	return strconv.FormatInt(fi.Size(), 10) + ":" + strconv.FormatInt(ticks, 10)
}

// extension returns name's extension with its dot, or nil.
func extension(name string) *string {
	ext := filepath.Ext(name)
	if ext == "" || ext == name {
		return nil
	}
	return &ext
}

// mimeType guesses a MIME type from name's extension. The table is fixed (not the
// system's mime.types), so results are the same on every machine: the official SDKs' table,
// plus .css and .js.
func mimeType(name string) string {
	if m, ok := mimeTypes[strings.ToLower(filepath.Ext(name))]; ok {
		return m
	}
	return "application/octet-stream"
}

var mimeTypes = map[string]string{
	".aac": "audio/aac", ".bmp": "image/bmp", ".css": "text/css", ".csv": "text/csv",
	".dae": "model/vnd.collada+xml", ".db": "application/x-sqlite3", ".gif": "image/gif", ".glb": "model/gltf-binary",
	".gltf": "model/gltf+json", ".gz": "application/gzip", ".heic": "image/heic", ".heif": "image/heif",
	".htm": "text/html", ".html": "text/html", ".ini": "text/plain", ".jpeg": "image/jpeg",
	".jpg": "image/jpeg", ".js": "text/javascript", ".json": "application/json",
	".jsonl": "application/x-ndjson", ".log": "text/plain", ".m4a": "audio/mp4",
	".md": "text/markdown", ".mov": "video/quicktime", ".mp3": "audio/mpeg", ".mp4": "video/mp4", ".obj": "model/obj",
	".pdf": "application/pdf", ".plist": "application/xml", ".png": "image/png",
	".sql": "application/sql", ".sqlite": "application/x-sqlite3", ".sqlite3": "application/x-sqlite3",
	".stl": "model/stl", ".svg": "image/svg+xml", ".tar": "application/x-tar", ".toml": "application/toml",
	".tsv": "text/tab-separated-values", ".txt": "text/plain", ".usdz": "model/vnd.usdz+zip", ".wav": "audio/wav",
	".webp": "image/webp", ".xml": "application/xml", ".yaml": "application/yaml",
	".yml": "application/yaml", ".zip": "application/zip",
}
