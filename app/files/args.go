package files

import (
	"strings"

	"github.com/ansight-go/ansight/internal/flatargs"
)

// Encodings of content in results, as requested (auto, utf8, base64).
const (
	encodingAuto   = "auto"
	encodingUTF8   = "utf8"
	encodingBase64 = "base64"
)

// encoding returns the requested encoding: auto (the default), utf8 (also utf-8) or base64,
// in any case.
func encoding(a flatargs.Args) (string, error) {
	switch v := strings.ToLower(a.Str("encoding")); v {
	case "", encodingAuto:
		return encodingAuto, nil
	case encodingUTF8, "utf-8":
		return encodingUTF8, nil
	case encodingBase64:
		return encodingBase64, nil
	}
	return "", flatargs.Invalid("The argument 'encoding' must be one of: auto, utf8, base64.")
}
