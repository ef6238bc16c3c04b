package schema

// Exact comparison of JSON number literals, without allocating: JSON Schema compares
// numbers mathematically (1.0 equals 1, 0.1 is not 0.1000000000000000055…), and float64
// would blur the boundaries of minimum/maximum and the integer test.

// decimal is a JSON number literal split into sign, significant digits and the position
// of the decimal point relative to them: value = ±0.d₁d₂… × 10^point.
type decimal struct {
	neg    bool
	intg   []byte // integer-part digits
	frac   []byte // fraction digits
	lead   int    // leading zeros to skip in intg+frac
	n      int    // number of significant digits (leading and trailing zeros removed)
	point  int    // decimal point position
	isZero bool
}

// saturate keeps exponent arithmetic far from overflow; no JSON document is long enough
// for the difference to matter.
const saturate = 1 << 40

// parseDecimal reads a valid JSON number literal.
func parseDecimal(b []byte) decimal {
	var d decimal
	i := 0
	if i < len(b) && b[i] == '-' {
		d.neg = true
		i++
	}
	start := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	d.intg = b[start:i]
	if i < len(b) && b[i] == '.' {
		i++
		start = i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		d.frac = b[start:i]
	}
	exp := 0
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		eneg := false
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			eneg = b[i] == '-'
			i++
		}
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			if exp < saturate {
				exp = exp*10 + int(b[i]-'0')
			}
		}
		if eneg {
			exp = -exp
		}
	}
	total := len(d.intg) + len(d.frac)
	for d.lead < total && d.digit(d.lead) == '0' {
		d.lead++
	}
	if d.lead == total {
		d.isZero = true
		return d
	}
	last := total
	for d.digit(last-1) == '0' {
		last--
	}
	d.n = last - d.lead
	d.point = len(d.intg) - d.lead + exp
	return d
}

// digit returns the i-th digit of intg+frac.
func (d *decimal) digit(i int) byte {
	if i < len(d.intg) {
		return d.intg[i]
	}
	return d.frac[i-len(d.intg)]
}

// sig returns the i-th significant digit, '0' past the end.
func (d *decimal) sig(i int) byte {
	if i >= d.n {
		return '0'
	}
	return d.digit(d.lead + i)
}

// isInteger reports whether the number has no fractional part.
func (d *decimal) isInteger() bool { return d.isZero || d.n <= d.point }

// compareDecimal returns -1, 0 or +1 as the number a is less than, equal to or greater
// than b.
func compareDecimal(a, b []byte) int {
	x, y := parseDecimal(a), parseDecimal(b)
	return x.cmp(&y)
}

func (x *decimal) cmp(y *decimal) int {
	switch {
	case x.isZero && y.isZero:
		return 0
	case x.isZero:
		if y.neg {
			return 1
		}
		return -1
	case y.isZero:
		if x.neg {
			return -1
		}
		return 1
	case x.neg != y.neg:
		if x.neg {
			return -1
		}
		return 1
	}
	m := x.cmpMagnitude(y)
	if x.neg {
		return -m
	}
	return m
}

func (x *decimal) cmpMagnitude(y *decimal) int {
	if x.point != y.point {
		if x.point < y.point {
			return -1
		}
		return 1
	}
	for i := 0; i < max(x.n, y.n); i++ {
		if a, b := x.sig(i), y.sig(i); a != b {
			if a < b {
				return -1
			}
			return 1
		}
	}
	return 0
}
