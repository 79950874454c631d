package heuristics

import (
	"strconv"
	"strings"
	"testing"
)

// inetAtonReference is parseInetAton written with strings.Split and
// strconv: the plain reading of inet_aton the faster parser must match.
func inetAtonReference(s string) (uint32, bool) {
	if s == "" || len(s) > 64 {
		return 0, false
	}
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return 0, false
	}
	vals := make([]uint64, 0, 4)
	for _, p := range parts {
		if p == "" {
			return 0, false
		}
		base := 10
		switch {
		case len(p) > 2 && (p[:2] == "0x" || p[:2] == "0X"):
			base, p = 16, p[2:]
		case len(p) > 1 && p[0] == '0':
			base, p = 8, p[1:]
		}
		n, err := strconv.ParseUint(p, base, 32)
		if err != nil {
			return 0, false
		}
		vals = append(vals, n)
	}
	var ip uint64
	last := len(vals) - 1
	for i, v := range vals[:last] {
		if v > 0xFF {
			return 0, false
		}
		ip |= v << (24 - 8*uint(i))
	}
	if vals[last] >= 1<<(8*uint(4-last)) {
		return 0, false
	}
	ip |= vals[last]
	return uint32(ip), true
}

var inetAtonSeeds = []string{
	"169.254.169.254", "0xA9FEA9FE", "0xa9.0xfe.0xa9.0xfe", "0251.0376.0251.0376", "2852039166", "169.254.43518",
	"169.16689662", "1.2.3.4.5", "1..2", "", ".", "0x", "0x0x1", "08", "0", "00", "4294967295", "4294967296",
	"1.2.3.256", "256.1.1.1", "1.16777216", "+1", "1_0", "0XFF.1", "metadata", "1.2.3.", "-1", "99999999999999999999",
	"0x100000000", "017777777777", "037777777777", "040000000000",
}

func TestParseInetAtonMatchesReference(t *testing.T) {
	for _, s := range inetAtonSeeds {
		gotIP, gotOK := parseInetAton(s)
		wantIP, wantOK := inetAtonReference(s)
		if gotIP != wantIP || gotOK != wantOK {
			t.Errorf("parseInetAton(%q) = %#x, %v; want %#x, %v", s, gotIP, gotOK, wantIP, wantOK)
		}
	}
}

func FuzzParseInetAton(f *testing.F) {
	for _, s := range inetAtonSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		gotIP, gotOK := parseInetAton(s)
		wantIP, wantOK := inetAtonReference(s)
		if gotIP != wantIP || gotOK != wantOK {
			t.Errorf("parseInetAton(%q) = %#x, %v; want %#x, %v", s, gotIP, gotOK, wantIP, wantOK)
		}
	})
}
