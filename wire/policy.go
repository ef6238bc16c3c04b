package wire

import (
	"fmt"
	"strings"
)

// Policy is a tool's risk level. Policies are ordered read < write < critical.
type Policy string

// The three policies.
const (
	PolicyRead     Policy = "read"
	PolicyWrite    Policy = "write"
	PolicyCritical Policy = "critical"
)

// ParsePolicy reads a policy name case-insensitively; "delete" is an alias of critical
// (docs/protocol/authorization.md#policies). Unknown names are an error.
func ParsePolicy(s string) (Policy, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "read":
		return PolicyRead, nil
	case "write":
		return PolicyWrite, nil
	case "critical", "delete":
		return PolicyCritical, nil
	}
	return "", fmt.Errorf("wire: unknown tool policy %q (want read, write or critical)", s)
}

// Rank orders policies: read 1, write 2, critical 3; anything else 0.
func (p Policy) Rank() int {
	switch p {
	case PolicyRead:
		return 1
	case PolicyWrite:
		return 2
	case PolicyCritical:
		return 3
	}
	return 0
}

// Valid reports whether p is one of the three policies.
func (p Policy) Valid() bool { return p.Rank() > 0 }

// AllowedBy reports whether p is at or below max.
func (p Policy) AllowedBy(max Policy) bool { return p.Valid() && max.Valid() && p.Rank() <= max.Rank() }

// UnmarshalText accepts any case and the "delete" alias, so catalogs written by other SDKs
// read the same.
func (p *Policy) UnmarshalText(b []byte) error {
	v, err := ParsePolicy(string(b))
	if err != nil {
		return err
	}
	*p = v
	return nil
}
