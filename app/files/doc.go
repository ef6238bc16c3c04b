// Package files lets a Go app list, serve and receive files in directories it chooses,
// and hand artifacts it produces to a host, with the standard tools of the official SDKs:
//
//	files.list_directory         read   the entries of a directory under a root
//	files.begin_binary_download  read   a file's bytes, streamed to the host over ASFT
//	files.push_file              write  a file the host sends (base64 or text) written under a root
//	artifacts.query              read   the artifacts the app's providers can produce
//	artifacts.request            read   one artifact, created now and streamed over ASFT
//
// Ids, arguments, results and error codes are those of the official SDKs, so the official
// host's `app push-file`, its file browser, its binary downloads and its artifact capture
// work with a Go app as they do with a .NET, Android or iOS one. The two transfer tools put
// their ASFT descriptor where the official host looks for it — the result object itself —
// which is what makes their bytes arrive there (see app.Call.SendArtifact); our host
// accepts them too.
//
// # Roots and confinement
//
// [Register] takes the directories to expose as [Root]s, each with an alias ("documents",
// "logs"). A request names a root by alias (or by its absolute path) and a path relative to
// it; an absolute path is accepted when it lies inside a root. Every file operation goes
// through an os.Root opened on the root's directory, so no path can leave it: ".."
// components, absolute paths and symbolic links that point outside the root are refused
// (reason "outside_root"), and a listing leaves such links out. A root marked ReadOnly is
// never written. files.push_file writes at most Options.MaxPushBytes per file (16 MiB by
// default) and replaces an existing file only when asked, atomically (a temporary file
// renamed over it); files.begin_binary_download serves regular files of at most
// Options.MaxDownloadBytes.
//
// Failures use the official codes (filesystem_list_failed, filesystem_binary_download_failed,
// filesystem_push_failed, artifact_provider_not_found, artifact_request_failed) with a
// details.reason that says what went wrong: root_unknown, outside_root, not_found,
// not_a_directory, not_a_file, ambiguous_path, exists, read_only, invalid_file_name,
// invalid_content, too_large.
package files
