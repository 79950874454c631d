package heuristics

import "strings"

// foldSet finds any of a list of ASCII needles in text, ignoring ASCII
// case, in one pass over the text: a table indexed by the text byte lists
// the needles that can start there. It answers exactly what a loop of
// containsFold over the needles would, without scanning the text once per
// needle. Needles are lower-cased when the set is built.
type foldSet struct {
	needles []string
	bits    []uint32 // bits[k] is what needle k marks (see scanBits)
	// start[c] lists the needles whose first byte is c, either case.
	start [256][]uint8
	// pairs has bit a<<8|b set for the first two bytes a, b of each
	// needle in every mix of ASCII case (for a one-byte needle, its byte
	// and any other): most positions of a text start no needle's first
	// two bytes, and one bit test on the raw bytes rules them out without
	// folding them or comparing any needle.
	pairs [1 << 16 / 64]uint64
	// short says some needle is one byte long, so the last byte of a
	// text may start one.
	short bool
}

// foldPair is the index of the byte pair a, b with ASCII letters folded
// to lower case, as equalFoldASCII compares them.
func foldPair(a, b byte) uint32 { return uint32(lowerByte(a))<<8 | uint32(lowerByte(b)) }

// mayStart reports whether a needle can start at s[i], i < len(s).
func (fs *foldSet) mayStart(s string, i int) bool {
	if i+1 >= len(s) {
		return fs.short
	}
	return fs.pairStarts(s[i], s[i+1])
}

// pairStarts reports whether some needle starts with the bytes a, b.
func (fs *foldSet) pairStarts(a, b byte) bool {
	k := uint32(a)<<8 | uint32(b)
	return fs.pairs[k>>6]&(1<<(k&63)) != 0
}

// markPair sets the bit of the pair a, b in every mix of ASCII case.
func (fs *foldSet) markPair(a, b byte) {
	for _, x := range [2]byte{lowerByte(a), upperByte(a)} {
		for _, y := range [2]byte{lowerByte(b), upperByte(b)} {
			k := uint32(x)<<8 | uint32(y)
			fs.pairs[k>>6] |= 1 << (k & 63)
		}
	}
}

func upperByte(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 32
	}
	return c
}

// newFoldSet builds a set whose needles all mark bit 1.
func newFoldSet(needles ...string) *foldSet {
	fs := &foldSet{}
	fs.addAll(1, needles)
	return fs
}

// addAll adds needles that mark bit.
func (fs *foldSet) addAll(bit uint32, needles []string) {
	for _, n := range needles {
		if n == "" || len(fs.needles) >= 255 {
			panic("heuristics: foldSet needle empty or too many needles")
		}
		n = strings.ToLower(n)
		if len(n) == 1 {
			fs.short = true
			for b := range 256 {
				fs.markPair(n[0], byte(b))
			}
		} else {
			fs.markPair(n[0], n[1])
		}
		idx := uint8(len(fs.needles))
		fs.needles = append(fs.needles, n)
		fs.bits = append(fs.bits, bit)
		c := n[0]
		fs.start[c] = append(fs.start[c], idx)
		if c >= 'a' && c <= 'z' {
			fs.start[c-32] = append(fs.start[c-32], idx)
		}
	}
}

// in reports whether s contains any needle, ignoring ASCII case.
func (fs *foldSet) in(s string) bool {
	last := len(s) - 1
	for i := 0; i < last; i++ {
		if fs.pairStarts(s[i], s[i+1]) && fs.matchAt(s, i) {
			return true
		}
	}
	return last >= 0 && fs.short && fs.matchAt(s, last)
}

// matchAt reports whether a needle starts at s[i].
func (fs *foldSet) matchAt(s string, i int) bool {
	for _, k := range fs.start[s[i]] {
		n := fs.needles[k]
		if len(s)-i >= len(n) && equalFoldASCII(s[i:i+len(n)], n) {
			return true
		}
	}
	return false
}

// scanBits returns the union of the bits of every needle s contains,
// stopping early once all of want are found.
func (fs *foldSet) scanBits(s string, want uint32) uint32 {
	var got uint32
	for i := 0; i < len(s); i++ {
		if !fs.mayStart(s, i) {
			continue
		}
		for _, k := range fs.start[s[i]] {
			if got&fs.bits[k] != 0 {
				continue
			}
			n := fs.needles[k]
			if len(s)-i >= len(n) && equalFoldASCII(s[i:i+len(n)], n) {
				got |= fs.bits[k]
				if got&want == want {
					return got
				}
			}
		}
	}
	return got
}

// keyringMarkers are the calls that read a secret from the desktop keyring
// (GNOME Keyring, KWallet, macOS Keychain) from code: Python's keyring
// and secretstorage, libsecret through GObject, Node's keytar.
var keyringMarkers = []string{
	"keyring.get_password", "keyring.get_credential", "get_secret(", "secret.password_lookup", "secret_password_lookup",
	"keytar.getpassword", "keytar').getpassword(", "keytar\").getpassword(", "findcredentials(", "findpassword(",
}

// setuidMarkers are calls that switch a process to root: code that makes
// them abuses a capability (cap_setuid) or a setuid interpreter.
var setuidMarkers = []string{
	"setuid(0)", "setgid(0)", "setresuid(0", "setreuid(0", "setresgid(0", "setregid(0", "setuid 0", "process::sys.setuid(0",
	"process.uid = 0", "process.uid=0",
}

// forkMarkers are calls that fork the running program (os.fork(), Perl's
// bare fork, Ruby's fork { }, pcntl_fork(), child_process.fork()).
var forkMarkers = []string{"fork(", "fork ", "fork;", "fork{", "fork}", "fork\n"}

// endlessMarkers are loops with no end condition written (while True,
// while 1, for (;;), loop { }, setInterval, iter(int, 1)).
var endlessMarkers = []string{
	"while true", "while 1", "while(1)", "while (1)", "while(true)", "while (true)", "while :", "for(;;)", "for (;;)",
	"loop {", "loop do", "until false", "setinterval(",
	// Endless iterators (Python's iter(int, 1), itertools.count()), and
	// a loop whose condition forks (perl's fork while fork): the parent
	// never leaves it.
	"iter(int", "itertools.count(", "while fork", "while(fork", "while (fork",
}

// Traits of interpreter code (an inline one-liner), found together in one
// pass by codeMarkers.
const (
	traitFetch      uint32 = 1 << iota // fetchMarkers: downloads something
	traitExec                          // execMarkers: runs dynamic code or programs
	traitDecode                        // decodeMarkers: decodes an encoding
	traitSocket                        // socketMarkers: opens a socket
	traitShell                         // shellMarkers: spawns a shell or process
	traitPost                          // ".post("
	traitSocketWord                    // "socket"
	traitKeyring                       // keyringMarkers: reads the desktop keyring
	traitSetuidRoot                    // setuidMarkers: switches to uid or gid 0
	traitFork                          // forkMarkers: forks the process
	traitEndless                       // endlessMarkers: loops with no end written
	traitReplace                       // replaceCalls: replace / sub calls
	traitWrites                        // "write", "dump(": writes a file
	traitDataFile                      // ".json", ".toml", ".yml": names a data file
	// Traits of the module flags (moduleFlags) rather than the code.
	traitModFetch
	traitModSocket
)

var (
	decodeSet = newFoldSet(decodeMarkers...)

	codeMarkers = func() *foldSet {
		fs := &foldSet{}
		fs.addAll(traitFetch, fetchMarkers)
		fs.addAll(traitExec, execMarkers)
		fs.addAll(traitDecode, decodeMarkers)
		fs.addAll(traitSocket, socketMarkers)
		fs.addAll(traitShell, shellMarkers)
		fs.addAll(traitPost, []string{".post("})
		fs.addAll(traitSocketWord, []string{"socket"})
		fs.addAll(traitKeyring, keyringMarkers)
		fs.addAll(traitSetuidRoot, setuidMarkers)
		fs.addAll(traitFork, forkMarkers)
		fs.addAll(traitEndless, endlessMarkers)
		fs.addAll(traitReplace, []string{"replace", "sub("})
		fs.addAll(traitWrites, []string{"write", "dump("})
		fs.addAll(traitDataFile, []string{".json", ".toml", ".yml"})
		return fs
	}()
	moduleMarkers = func() *foldSet {
		fs := &foldSet{}
		fs.addAll(traitModFetch, fetchMarkers)
		fs.addAll(traitModSocket, socketMarkers)
		return fs
	}()
)

const allCodeTraits = traitFetch | traitExec | traitDecode | traitSocket | traitShell | traitPost | traitSocketWord | traitKeyring | traitSetuidRoot |
	traitFork | traitEndless | traitReplace | traitWrites | traitDataFile
const allModuleTraits = traitModFetch | traitModSocket

// codeTraits returns the traits of v's inline code and module flags,
// computed on first use. A view without inline code has none.
func (v *cmdView) codeTraits() uint32 {
	if !v.traitsDone {
		v.traitsDone = true
		if v.hasCode {
			code := v.code
			if v.kind == "node" && strings.IndexByte(code, '`') >= 0 {
				// A JavaScript backtick opens a template literal, not a
				// command substitution as in shell, Perl and Ruby.
				code = strings.ReplaceAll(code, "`", "'")
			}
			v.traits = codeMarkers.scanBits(code, allCodeTraits)
			if m := moduleFlags(v); m != "" {
				v.traits |= moduleMarkers.scanBits(m, allModuleTraits)
			}
		}
	}
	return v.traits
}

// codeAny reports whether v has inline code with any of the traits.
func (v *cmdView) codeAny(t uint32) bool { return v.hasCode && v.codeTraits()&t != 0 }

// codeAll reports whether v has inline code with all of the traits.
func (v *cmdView) codeAll(t uint32) bool { return v.hasCode && v.codeTraits()&t == t }
