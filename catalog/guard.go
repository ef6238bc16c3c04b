package catalog

import (
	"fmt"

	"github.com/ansight-go/ansight/wire"
)

// Guard is the app's authorization switch (docs/protocol/authorization.md#guard): whether tools can be discovered,
// whether they can be executed, and the highest policy allowed for either.
type Guard struct {
	DiscoveryEnabled bool
	ExecutionEnabled bool
	MaxPolicy        wire.Policy
}

// The guard presets of docs/protocol/authorization.md#guard.
var (
	// GuardDisabled hides every tool and denies every call.
	GuardDisabled = Guard{DiscoveryEnabled: false, ExecutionEnabled: false, MaxPolicy: wire.PolicyRead}
	// GuardReadOnly allows read tools only.
	GuardReadOnly = Guard{DiscoveryEnabled: true, ExecutionEnabled: true, MaxPolicy: wire.PolicyRead}
	// GuardReadWrite allows read and write tools.
	GuardReadWrite = Guard{DiscoveryEnabled: true, ExecutionEnabled: true, MaxPolicy: wire.PolicyWrite}
	// GuardFullAccess allows every tool, critical ones included.
	GuardFullAccess = Guard{DiscoveryEnabled: true, ExecutionEnabled: true, MaxPolicy: wire.PolicyCritical}
)

// Visible reports whether a tool of policy p is discoverable: discovery is enabled and p is
// at or below MaxPolicy.
func (g Guard) Visible(p wire.Policy) bool {
	return g.DiscoveryEnabled && p.AllowedBy(g.MaxPolicy)
}

// Executable reports whether the guard lets a tool of policy p run: execution is enabled
// and p is at or below MaxPolicy. Availability is a separate, runtime question.
func (g Guard) Executable(p wire.Policy) bool {
	return g.ExecutionEnabled && p.AllowedBy(g.MaxPolicy)
}

// Check reports an invalid MaxPolicy. The maximum is part of the catalog revision, so it
// must be one of the three policies even when discovery is disabled.
func (g Guard) Check() error {
	if !g.MaxPolicy.Valid() {
		return fmt.Errorf("catalog: guard maxPolicy %q is not read, write or critical", string(g.MaxPolicy))
	}
	return nil
}
