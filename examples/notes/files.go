package notes

import (
	"os"
	"path/filepath"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/app/files"
)

// FilesRoot is the alias of the directory the demo app serves with the file tools.
const FilesRoot = "demo"

// RegisterFiles adds to a the file tools over dir (root [FilesRoot]) and the notes export
// ([Model.Artifacts]), so people can try package app/files against either host. When dir is
// "", the tools serve a new temporary directory holding a welcome file, which cleanup
// removes; otherwise cleanup does nothing. It returns the directory served.
func (m *Model) RegisterFiles(a *app.App, dir string) (served string, cleanup func(), err error) {
	cleanup = func() {}
	if dir == "" {
		if dir, err = welcomeDir(); err != nil {
			return "", nil, err
		}
		cleanup = func() { os.RemoveAll(dir) }
	}
	err = files.Register(a, files.Options{Roots: []files.Root{{Alias: FilesRoot, Path: dir}}})
	if err == nil {
		err = files.RegisterArtifacts(a, m.Artifacts())
	}
	if err != nil {
		cleanup()
		return "", nil, err
	}
	return dir, cleanup, nil
}

// welcomeDir makes a temporary directory with a welcome file that says how to reach it.
func welcomeDir() (string, error) {
	tmp, err := os.MkdirTemp("", "ansight-demo-files-")
	if err != nil {
		return "", err
	}
	welcome := "Files of the Ansight demo app.\n" +
		"  ansight app call <session> files.list_directory\n" +
		"  ansight app call <session> files.begin_binary_download --arguments '{\"path\":\"welcome.txt\"}'\n" +
		"  ansight app call <session> files.push_file --arguments '{\"directoryPath\":\"inbox\",\"fileName\":\"hi.txt\",\"text\":\"hello\"}'\n"
	if err := os.WriteFile(filepath.Join(tmp, "welcome.txt"), []byte(welcome), 0o644); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	return tmp, nil
}
