package player

import (
	"embed"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/ansight-go/ansight/wire"
)

// webFS holds the page: plain HTML, CSS and JavaScript, no build step, nothing fetched
// from elsewhere.
//
//go:embed web
var webFS embed.FS

var refusedPage = template.Must(template.ParseFS(webFS, "web/refused.html"))

// asset serves one embedded file of web/ (index.html only through page).
func (p *Player) asset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if name == "index.html" || name == "refused.html" || strings.ContainsAny(name, `/\`) {
		writeError(w, http.StatusNotFound, wire.CodeResourceNotFound, "no such asset")
		return
	}
	b, err := fs.ReadFile(webFS, "web/"+name)
	if err != nil {
		writeError(w, http.StatusNotFound, wire.CodeResourceNotFound, "no such asset")
		return
	}
	ct := mime.TypeByExtension(path.Ext(name))
	if ct == "" {
		ct = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ct)
	// Assets change with the binary only; revalidating each load keeps upgrades simple.
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(b)
}

// artifactURL is the URL serving a file the host saved, or "" when path is not under
// the artifact directory.
func (p *Player) artifactURL(file string) string {
	if p.opts.ArtifactDir == "" || file == "" {
		return ""
	}
	rel, err := filepath.Rel(p.opts.ArtifactDir, file)
	if err != nil || rel == "." || !filepath.IsLocal(rel) {
		return ""
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return "/api/artifacts/" + strings.Join(parts, "/")
}

func pathEscape(s string) string { return url.PathEscape(s) }

// servedTypes are the media types an artifact is shown inline with; anything else is a
// download, so that a file an app named .html never runs in the player's origin.
var servedTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
	".txt": "text/plain; charset=utf-8", ".json": "application/json", ".log": "text/plain; charset=utf-8",
}

// artifact serves a file from the artifact directory. os.Root confines the lookup: no
// "..", no absolute path and no symbolic link leads outside.
func (p *Player) artifact(w http.ResponseWriter, r *http.Request) {
	rel := r.PathValue("path")
	if p.opts.ArtifactDir == "" || !filepath.IsLocal(filepath.FromSlash(rel)) {
		writeError(w, http.StatusNotFound, wire.CodeResourceNotFound, "no such artifact")
		return
	}
	root, err := os.OpenRoot(p.opts.ArtifactDir)
	if err != nil {
		writeError(w, http.StatusNotFound, wire.CodeResourceNotFound, "no such artifact")
		return
	}
	defer root.Close()
	f, err := root.Open(filepath.FromSlash(rel))
	if err != nil {
		writeError(w, http.StatusNotFound, wire.CodeResourceNotFound, "no such artifact")
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		writeError(w, http.StatusNotFound, wire.CodeResourceNotFound, "no such artifact")
		return
	}
	ct, inline := servedTypes[strings.ToLower(path.Ext(rel))]
	if !inline {
		ct = "application/octet-stream"
		w.Header().Set("Content-Disposition", "attachment; filename*=UTF-8''"+url.PathEscape(path.Base(rel)))
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "private, max-age=3600")
	http.ServeContent(w, r, "", st.ModTime(), f)
}
