package heuristics

import (
	"math"
	"strconv"
	"strings"
)

// Filling the disk. A file of tens of gigabytes, or one an endless
// source writes until the disk is full (dd from /dev/zero with no count,
// yes or cat /dev/urandom into a file), stops everything on the machine
// that writes: databases, logs, builds, other users. A test image or a
// swap file of a few gigabytes is everyday, as are endless sources sent
// to /dev/null or into a pipe.

// diskFillBytes is the size from which a file made at once is asked about.
const diskFillBytes = 32 << 30

// endlessSources are devices that never run out.
var endlessSources = []string{"/dev/zero", "/dev/urandom", "/dev/random", "/dev/full"}

func (s *scan) checkDiskFill(cs *cmdScan, v *cmdView) {
	if !s.enabled(rDisruptDiskFill) {
		return
	}
	size, endless := int64(0), false
	switch v.prog {
	case "fallocate", "mkfile", "xfs_mkfile":
		if v.prog == "fallocate" {
			flagValues(v.args, 'l', "length", func(val string) { size = max(size, byteCount(val)) })
		} else if ops := v.plainOperands(); len(ops) > 0 {
			size = byteCount(strings.TrimPrefix(ops[0], "-n"))
		}
	case "dd":
		size, endless = ddWrites(cs, v)
	case "head":
		if !readsEndless(v.plainOperands()) || !writesFile(cs, v) {
			return
		}
		flagValues(v.args, 'c', "bytes", func(val string) { size = max(size, byteCount(val)) })
	case "yes":
		endless = writesFile(cs, v)
	case "cat", "pv":
		endless = readsEndless(v.plainOperands()) && writesFile(cs, v)
	case "seq":
		// seq 1 100000000 | xargs touch: a file for each number, until
		// the file system has no inodes left.
		if n := seqCount(v.plainOperands()); n >= manyFiles && feedsFileMaker(cs, v) {
			s.add(rDisruptDiskFill, "makes a file for each of "+strconv.FormatInt(n, 10)+" numbers (seq | xargs touch): the file system runs out of inodes, and every service that writes stops; make fewer",
				"seq "+evJoin(v.args))
		}
		return
	default:
		return
	}
	switch {
	case endless:
		s.add(rDisruptDiskFill, v.prog+" writes from a source that never ends into a file until the disk is full: every service that writes stops; give it a size",
			v.prog+" "+evJoin(v.args))
	case size >= diskFillBytes:
		s.add(rDisruptDiskFill, v.prog+" makes a file of "+humanBytes(size)+": that fills most disks, and every service that writes stops; make it smaller or let a human approve it",
			v.prog+" "+evJoin(v.args))
	}
}

// manyFiles is how many files made at once are asked about.
const manyFiles = 1_000_000

// seqCount is how many numbers seq FIRST [INCREMENT] LAST (or seq LAST)
// prints; 0 when its operands are not whole numbers.
func seqCount(ops []string) int64 {
	nums := make([]int64, 0, 3)
	for _, op := range ops {
		n, err := strconv.ParseInt(op, 10, 64)
		if err != nil {
			return 0
		}
		nums = append(nums, n)
	}
	first, step, last := int64(1), int64(1), int64(0)
	switch len(nums) {
	case 1:
		last = nums[0]
	case 2:
		first, last = nums[0], nums[1]
	case 3:
		first, step, last = nums[0], nums[1], nums[2]
	default:
		return 0
	}
	if step <= 0 || last < first {
		return 0
	}
	if first < 0 && last > math.MaxInt64+first {
		return math.MaxInt64 // the span overflows: more than any disk holds
	}
	return (last-first)/step + 1
}

// feedsFileMaker reports a pipe from v into xargs running touch, mkdir
// or fallocate: one file per line.
func feedsFileMaker(cs *cmdScan, v *cmdView) bool {
	for _, i := range cs.after(v) {
		// A view sees through xargs to the program it runs.
		if u := cs.view(i); u != nil && (u.c.Program == "xargs" || u.c.Via == "xargs") {
			switch u.prog {
			case "touch", "mkdir", "fallocate":
				return true
			}
		}
	}
	return false
}

// ddWrites reads dd's operands: how many bytes it writes to a file, or
// endless when it copies an endless source to a file with no count.
// Writing to a device is checkDestructive's (a disk wipe).
func ddWrites(cs *cmdScan, v *cmdView) (size int64, endless bool) {
	in, out, bs, count := "", "", int64(512), int64(-1)
	for _, a := range v.args {
		key, val, ok := strings.Cut(a, "=")
		if !ok {
			continue
		}
		switch key {
		case "if":
			in = val
		case "of":
			out = val
		case "bs", "obs":
			bs = byteCount(val)
		case "count":
			count = byteCount(val)
		}
	}
	if out == "" || strings.HasPrefix(cs.resolveIn(v.c, out).Abs, "/dev/") {
		return 0, false
	}
	if count < 0 {
		return 0, readsEndless([]string{in})
	}
	if bs > 0 && count > (1<<62)/bs {
		return 1 << 62, false
	}
	return bs * count, false
}

// readsEndless reports an endless source among a command's inputs.
func readsEndless(ops []string) bool {
	for _, op := range ops {
		for _, src := range endlessSources {
			if op == src {
				return true
			}
		}
	}
	return false
}

// writesFile reports a command whose standard output goes to a file
// (not a device such as /dev/null, not a pipe).
func writesFile(cs *cmdScan, v *cmdView) bool {
	for _, r := range v.c.Redirects {
		switch r.Op {
		case ">", ">>", ">|", "&>", "&>>":
		default:
			continue
		}
		if r.FD != "" && r.FD != "1" || strings.HasPrefix(r.Target, "&") {
			continue
		}
		if !strings.HasPrefix(cs.resolveIn(v.c, r.Target).Abs, "/dev/") {
			return true
		}
	}
	return false
}

// byteCount reads a size as fallocate, head and dd write it: a number
// with an optional unit (K, M, G, T, P, E in powers of 1024, KB, MB, …
// in powers of 1000, dd's c, w and b); -1 when it is not one. A size
// too large for the type reads as the largest.
func byteCount(val string) int64 {
	i := 0
	for i < len(val) && val[i] >= '0' && val[i] <= '9' {
		i++
	}
	if i == 0 {
		return -1
	}
	n, err := strconv.ParseInt(val[:i], 10, 64)
	if err != nil {
		return 1 << 62 // more digits than the type holds
	}
	unit := val[i:]
	var mul int64
	switch unit {
	case "", "c":
		mul = 1
	case "w":
		mul = 2
	case "b":
		mul = 512
	default:
		powers := strings.IndexByte("KMGTPE", unit[0]&^0x20)
		if powers < 0 {
			return -1
		}
		base := int64(1024)
		if strings.EqualFold(unit[1:], "B") {
			base = 1000
		} else if unit[1:] != "" && !strings.EqualFold(unit[1:], "iB") {
			return -1
		}
		mul = 1
		for range powers + 1 {
			mul *= base
		}
	}
	if n > (1<<62)/mul {
		return 1 << 62
	}
	return n * mul
}

// humanBytes writes a size in the largest binary unit it fills.
func humanBytes(n int64) string {
	for _, u := range []struct {
		name  string
		shift uint
	}{{"EiB", 60}, {"PiB", 50}, {"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n >= 1<<u.shift {
			return strconv.FormatInt(n>>u.shift, 10) + " " + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
