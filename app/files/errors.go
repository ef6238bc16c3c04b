package files

import (
	"errors"
	"fmt"

	"github.com/ansight-go/ansight/app"
	"github.com/ansight-go/ansight/internal/flatargs"
	"github.com/ansight-go/ansight/wire"
)

// Failure codes: the official SDKs' codes, one per tool.
const (
	CodeListFailed               wire.Code = "filesystem_list_failed"
	CodeDownloadFailed           wire.Code = "filesystem_binary_download_failed"
	CodePushFailed               wire.Code = "filesystem_push_failed"
	CodeReadFailed               wire.Code = "filesystem_read_failed"
	CodeChecksumFailed           wire.Code = "filesystem_checksum_failed"
	CodeDownloadChunkFailed      wire.Code = "filesystem_download_failed"
	CodeVersionMismatch          wire.Code = "filesystem_download_version_mismatch" // the file changed between chunks
	CodeOffsetInvalid            wire.Code = "filesystem_download_offset_invalid"   // the offset is past the end of the file
	CodeCopyFailed               wire.Code = "filesystem_copy_failed"
	CodeMoveFailed               wire.Code = "filesystem_move_failed"
	CodeDeleteFailed             wire.Code = "filesystem_delete_failed"
	CodeArtifactProviderNotFound wire.Code = "artifact_provider_not_found"
	CodeArtifactRequestFailed    wire.Code = "artifact_request_failed"
)

// Reasons (details.reason) that say why a file tool failed.
const (
	reasonRootUnknown     = "root_unknown"      // root names no configured root
	reasonOutsideRoot     = "outside_root"      // the path leaves its root (.., absolute, symlink)
	reasonNotFound        = "not_found"         // nothing at the path
	reasonNotADirectory   = "not_a_directory"   // a file where a directory is needed
	reasonNotAFile        = "not_a_file"        // a directory or special file where a file is needed
	reasonAmbiguousPath   = "ambiguous_path"    // a relative path present in several roots
	reasonExists          = "exists"            // the file exists and overwrite is false
	reasonReadOnly        = "read_only"         // the root is read-only
	reasonInvalidFileName = "invalid_file_name" // fileName is not one plain file name
	reasonInvalidContent  = "invalid_content"   // not exactly one of contentBase64 and text, or bad base64
	reasonTooLarge        = "too_large"         // above the configured limit
	reasonInvalidArgument = "invalid_argument"  // an argument missing, not an integer, a boolean, an encoding or an algorithm
	reasonNotText         = "not_text"          // utf8 asked for bytes that are not UTF-8
	reasonSamePath        = "same_path"         // a copy or move onto its own source
	reasonVersionMismatch = "version_mismatch"  // the file changed since the version the caller expects
	reasonOffsetInvalid   = "offset_invalid"    // an offset past the end of the file
	reasonIO              = "io_error"          // the file system failed
)

// problem is a file tool's failure before it gets its tool's code.
type problem struct {
	reason string
	msg    string
}

func (p *problem) Error() string { return p.msg }

// failure returns a problem with a reason and a formatted message.
func failure(reason, format string, args ...any) error {
	return &problem{reason: reason, msg: fmt.Sprintf(format, args...)}
}

// toolFailure turns err into the tool failure with code and details {reason, root, path}
// (root and path when the request got as far as naming them).
func toolFailure(code wire.Code, g target, err error) error {
	var p *problem
	var arg *flatargs.Error
	switch {
	case errors.As(err, &p):
	case errors.As(err, &arg):
		p = &problem{reason: reasonInvalidArgument, msg: arg.Error()}
	default:
		p = &problem{reason: reasonIO, msg: err.Error()}
	}
	details := map[string]string{"reason": p.reason}
	if g.root != nil {
		details["root"] = g.root.Alias
		details["path"] = g.slash()
	}
	return app.ToolErrorDetails(code, p.msg, details)
}
