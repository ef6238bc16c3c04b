package usage

import (
	"strconv"
	"time"
)

// Millis is a duration that JSON writes as a number of milliseconds, to the microsecond:
// the JSON package has no default form for time.Duration, and reports name such fields
// with an "Ms" suffix.
type Millis time.Duration

// D is m as a time.Duration.
func (m Millis) D() time.Duration { return time.Duration(m) }

func (m Millis) String() string { return time.Duration(m).String() }

// MarshalJSON writes m in milliseconds.
func (m Millis) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, float64(time.Duration(m).Microseconds())/1000, 'f', -1, 64), nil
}

// UnmarshalJSON reads a number of milliseconds.
func (m *Millis) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return err
	}
	*m = Millis(f * float64(time.Millisecond))
	return nil
}
