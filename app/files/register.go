package files

import (
	"fmt"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/catalog"
	"github.com/ansight-go/ansight/wire"
)

// Ids of the file tools.
const (
	ListDirectoryToolID       = "files.list_directory"
	BeginBinaryDownloadToolID = "files.begin_binary_download"
	PushFileToolID            = "files.push_file"
)

// Register adds the file tools over opts.Roots to a: files.list_directory and
// files.begin_binary_download (read), and files.push_file (write) when a root is writable.
// Every root must be an existing directory. Call it once, before serving.
func Register(a *app.App, opts Options) error {
	t, err := newTree(opts)
	if err != nil {
		return err
	}
	def := func(id, name, keywords, description string, policy wire.Policy) catalog.Definition {
		return catalog.Definition{ID: id, Name: name, Category: "files", Policy: policy, Keywords: keywords,
			Description: description + " Roots: " + t.aliases() + "."}
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
	}
	for _, r := range t.roots {
		if !r.ReadOnly {
			regs = append(regs, func() error {
				return app.Register(a, def(PushFileToolID, "Push file", "filesystem file upload push write sandbox base64 text",
					"Writes a file the host sends (base64 or text) into a directory under one of the app's writable roots.", wire.PolicyWrite),
					t.push)
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
