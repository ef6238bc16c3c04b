//go:build !unix

package bench

import "time"

// processCPU is unknown here: CPU figures come out as zero, and the report says so.
func processCPU() time.Duration { return 0 }
