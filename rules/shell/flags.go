package shell

import "strings"

// Option helpers for Tier 0 matchers and Tier 1 heuristics.
//
// They follow the common getopt conventions: "-rf" combines the short
// options r and f; "--name" and "--name=value" are long options; "--" ends
// the options; a lone "-" is an operand (usually stdin). Without knowing
// each program's option table they cannot tell which short options take a
// value, so "-ofile" reads as o, f, i, l, e for HasFlag, and the value of
// "-o file" counts as an operand. Programs with single-dash long options
// (find -delete, java -jar) should be matched on Args directly.

// HasFlag reports whether the command was given the short option (as in
// -r or combined, -rf) or the long option (--long or --long=value). Pass 0
// or "" for the form that does not exist. Only arguments before "--" count.
func (c *Command) HasFlag(short byte, long string) bool {
	for _, a := range c.Args {
		if a == "--" {
			return false
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		if a[1] == '-' {
			if long == "" {
				continue
			}
			name := a[2:]
			if eq := strings.IndexByte(name, '='); eq >= 0 {
				name = name[:eq]
			}
			if name == long {
				return true
			}
			continue
		}
		if short != 0 && strings.IndexByte(a[1:], short) >= 0 {
			return true
		}
	}
	return false
}

// Operands returns the arguments that are not options: everything after
// "--", a lone "-", and every argument not starting with "-". It returns
// nil when there are none.
func (c *Command) Operands() []string {
	var out []string
	for i, a := range c.Args {
		if a == "--" {
			return append(out, c.Args[i+1:]...)
		}
		if len(a) < 2 || a[0] != '-' {
			out = append(out, a)
		}
	}
	return out
}

// FlagValue returns the value given to an option: "-o value", "-ovalue",
// "-xzf value" (the option last in a combined group takes the next
// argument), "--long value" or "--long=value". short is one character or
// "". The first occurrence wins; ok is false if the option is absent or
// has no value.
func (c *Command) FlagValue(short, long string) (string, bool) {
	return flagValue(c.Args, short, long)
}

func flagValue(args []string, short, long string) (string, bool) {
	for i, a := range args {
		if a == "--" {
			return "", false
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		if a[1] == '-' {
			if long == "" {
				continue
			}
			name := a[2:]
			if eq := strings.IndexByte(name, '='); eq >= 0 {
				if name[:eq] == long {
					return name[eq+1:], true
				}
				continue
			}
			if name == long {
				return next(args, i)
			}
			continue
		}
		if len(short) != 1 {
			continue
		}
		if j := strings.IndexByte(a[1:], short[0]); j >= 0 {
			if rest := a[2+j:]; rest != "" {
				return rest, true
			}
			return next(args, i)
		}
	}
	return "", false
}

func next(args []string, i int) (string, bool) {
	if i+1 < len(args) {
		return args[i+1], true
	}
	return "", false
}
