// Package files lets a Go app list, read, serve, receive and manage files in directories it
// chooses, and hand artifacts it produces to a host, with the standard tools of the
// official SDKs:
//
//	files.list_directory         read      the entries of a directory under a root
//	files.read_file              read      the start of a file, as text or base64
//	files.get_file_checksum      read      md5, sha1, sha256, sha384, sha512, crc32 of a file
//	files.download_file          read      a file in chunks (text or base64), each with the next request
//	files.begin_binary_download  read      a file's bytes, streamed to the host over ASFT
//	files.push_file              write     a file the host sends (base64 or text) written under a root
//	files.copy_file              write     a file copied to a path under a writable root
//	files.move_file              write     a file of a writable root moved or renamed
//	files.delete_file            critical  a file of a writable root deleted
//	artifacts.query              read      the artifacts the app's providers can produce
//	artifacts.request            read      one artifact, created now and streamed over ASFT
//
// Ids, arguments, results and error codes are those of the official SDKs, so the official
// host's `app push-file`, its file browser, its binary downloads and its artifact capture
// work with a Go app as they do with a .NET, Android or iOS one. The two transfer tools put
// their ASFT descriptor where the official host looks for it — the result object itself —
// which is what makes their bytes arrive there (see app.Call.SendArtifact); our host
// accepts them too. The write tools are registered when a root is writable;
// files.delete_file is critical, so the default guard hides it (catalog.GuardFullAccess
// exposes it).
//
// # Arguments
//
// files.read_file, files.get_file_checksum, files.download_file, files.copy_file,
// files.move_file and files.delete_file are declared as the official SDKs declare them:
// flattened-string tools, whose arguments arrive as a string map. An integer may come as a
// JSON number or as its text (files.download_file's nextRequest writes "65536"), a boolean
// as true, "true" (any case), "1" or "0"; names match regardless of case. Integers are
// clamped to their bounds and anything else is refused with invalid_argument, as the
// official SDKs do. Content (read_file, download_file) is "auto" by default: UTF-8 text
// when the bytes are UTF-8 and either the MIME type is a text type or no control byte other
// than tab, CR and LF occurs, else base64; "utf8" refuses bytes that are not UTF-8 and
// "base64" always encodes. A chunk may end inside a multi-byte character, so text that is
// paged is best read as base64. files.download_file's version is the official token,
// "<size>:<ticks>" (.NET ticks of the last modification), so an expectedVersion from any
// SDK's chunk compares; a file that changed between chunks fails with
// filesystem_download_version_mismatch, an offset past its end with
// filesystem_download_offset_invalid.
//
// # Roots and confinement
//
// [Register] takes the directories to expose as [Root]s, each with an alias ("documents",
// "logs"). A request names a root by alias (or by its absolute path) and a path relative to
// it; an absolute path is accepted when it lies inside a root. Every file operation goes
// through an os.Root opened on the root's directory, so no path can leave it: ".."
// components, absolute paths and symbolic links that point outside the root are refused
// (reason "outside_root"), and a listing leaves such links out. (The official SDKs check a
// path's text only, so a link inside a root reaches anything; here it never does.) A root
// marked ReadOnly is never written: not pushed or copied into, not moved or deleted from.
// files.push_file writes at most Options.MaxPushBytes per file (16 MiB by default);
// files.read_file and files.download_file return at most 1 MiB per call;
// files.begin_binary_download serves regular files of at most Options.MaxDownloadBytes and
// files.copy_file copies at most Options.MaxCopyBytes. A new file is created exclusively and
// a replaced one is written aside and renamed over it (readers see the old file or the new
// one, and a symbolic link at the destination is replaced, never written through); a move
// within a root is a rename, across roots a copy then the removal of the source.
//
// Failures use the official codes, one per tool (filesystem_list_failed,
// filesystem_read_failed, filesystem_checksum_failed, filesystem_download_failed and its
// version and offset codes, filesystem_binary_download_failed, filesystem_push_failed,
// filesystem_copy_failed, filesystem_move_failed, filesystem_delete_failed,
// artifact_provider_not_found, artifact_request_failed), with a details.reason that says
// what went wrong: root_unknown, outside_root, not_found, not_a_directory, not_a_file,
// ambiguous_path, exists, read_only, invalid_file_name, invalid_content, invalid_argument,
// not_text, same_path, version_mismatch, offset_invalid, too_large, io_error.
package files
