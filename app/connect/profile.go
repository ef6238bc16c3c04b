package connect

import (
	"os"

	"github.com/ansight-go/ansight/wire/session"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// SDKName is the sdk.name this SDK reports in its device profile.
const SDKName = "ansight-go"

// modulePath is the SDK's Go module, reported as sdk.packageId.
const modulePath = "github.com/ansight-go/ansight"

// sdkVersion is the module version compiled into the binary ("(devel)" inside the module
// itself or when unknown).
var sdkVersion = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel)"
	}
	if bi.Main.Path == modulePath {
		return bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == modulePath {
			if d.Replace != nil {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return "(devel)"
})

// profileSeq numbers the profiles this process sends, as the official SDKs do.
var profileSeq atomic.Int64

// profileReasonSessionStart is the reasonCode of the profile sent when a session opens.
const profileReasonSessionStart = 1

// newDeviceProfile builds the device.profile payload. Only members whose JSON type is
// known are written, because the official host decodes the profile into a typed model and
// refuses the session on a type mismatch.
func newDeviceProfile(c *config, now time.Time) session.DeviceProfile {
	return session.DeviceProfile{
		Type:       session.DeviceProfileType,
		Schema:     session.DeviceProfileSchema,
		SentAt:     now.UnixMilli(),
		ReasonCode: profileReasonSessionStart,
		ProfileSeq: profileSeq.Add(1),
		SDK:        session.ProfileSDK{Name: SDKName, PackageID: modulePath, Version: sdkVersion(), Language: "go"},
		Device: session.ProfileDevice{
			TimeZone:     timeZoneName(now),
			OSName:       osName(runtime.GOOS),
			CPUArch:      runtime.GOARCH,
			CPUCoreCount: runtime.NumCPU(),
		},
		App: session.ProfileApp{AppID: c.AppID, AppName: c.AppName, ProcessID: int64(os.Getpid()), VersionName: c.AppVersion},
		// Announces that this SDK understands the host's sessionJpegCapture reply; it never
		// streams JPEG frames itself, so "app" and "host" modes both leave it idle.
		SessionJpegCaptureControlVersion: 1,
	}
}

// osName maps GOOS to the names the official SDKs report.
func osName(goos string) string {
	switch goos {
	case "linux":
		return "Linux"
	case "darwin":
		return "macOS"
	case "windows":
		return "Windows"
	case "android":
		return "Android"
	case "ios":
		return "iOS"
	case "freebsd":
		return "FreeBSD"
	}
	return goos
}

// timeZoneName returns the local IANA zone name when it can be found (TZ, or the target of
// /etc/localtime), else the zone's abbreviation; time.Local itself is only named "Local".
func timeZoneName(now time.Time) string {
	if tz := strings.TrimPrefix(os.Getenv("TZ"), ":"); tz != "" && !strings.HasPrefix(tz, "/") {
		return tz
	}
	if target, err := os.Readlink("/etc/localtime"); err == nil {
		if _, name, ok := strings.Cut(target, "zoneinfo/"); ok && name != "" {
			return name
		}
	}
	name, _ := now.Zone()
	return name
}

func utcNow(now time.Time) string { return now.UTC().Format(time.RFC3339Nano) }
