package heuristics

import "testing"

func TestDiskFill(t *testing.T) {
	runRuleCases(t, "disruption.disk-fill", []ruleCase{
		cmdCase("fallocate -l 900G /var/tmp/fill", true),
		cmdCase("fallocate --length=2T big.img", true),
		cmdCase("dd if=/dev/zero of=/tmp/fill bs=1M count=900000", true),
		cmdCase("dd if=/dev/urandom of=~/noise bs=4M", true),
		cmdCase("head -c 500G /dev/zero > ~/big", true),
		cmdCase("yes AAAA > /tmp/x", true),
		cmdCase("cat /dev/urandom >> ~/.cache/blob", true),
		cmdCase("for i in 1 2; do fallocate -l 64G /data/f$i; done", true),
		// Sizes of test images and swap files, sparse files, sources
		// sent to /dev/null or a pipe, devices as targets (disk wipes).
		cmdCase("fallocate -l 10M test.img", false),
		cmdCase("dd if=/dev/zero of=disk.img bs=1M count=64", false),
		cmdCase("dd if=/dev/urandom of=key.bin bs=32 count=1", false),
		cmdCase("truncate -s 1T sparse.img", false),
		cmdCase("yes > /dev/null", false),
		cmdCase("yes | head -n 5", false),
		cmdCase("cat /dev/urandom | head -c 32 | base64", false),
		cmdCase("head -c 16 /dev/urandom > salt.bin", false),
		cmdCase("dd if=image.iso of=/dev/null bs=4M", false),
	})
}

func TestInterpreterForkBombs(t *testing.T) {
	runRuleCases(t, "destructive.fork-bomb", []ruleCase{
		cmdCase("perl -e 'fork while 1'", true),
		cmdCase("python3 -c \"import os\nwhile True: os.fork()\"", true),
		cmdCase("ruby -e 'loop { fork }'", true),
		cmdCase("node -e \"while(1) require('child_process').fork(__filename)\"", true),
		cmdCase("python3 - <<'EOF'\nimport os\nwhile 1:\n    os.fork()\nEOF", true),
		// A fork that waits, exits or breaks; a loop that does not fork.
		cmdCase("python3 -c 'import os\npid = os.fork()\nif pid == 0: print(1)\nelse: os.wait()'", false),
		cmdCase("perl -e 'while (1) { my $p = fork; if (!$p) { exit 0 } waitpid($p, 0); last }'", false),
		cmdCase("python3 -c 'while True:\n  line = input()\n  if not line: break'", false),
		cmdCase("node -e 'setInterval(() => console.log(Date.now()), 1000)'", false),
	})
}

func TestByteCount(t *testing.T) {
	for in, want := range map[string]int64{
		"512": 512, "4K": 4 << 10, "1M": 1 << 20, "900G": 900 << 30, "2T": 2 << 40, "1GiB": 1 << 30, "1GB": 1e9,
		"3k": 3 << 10, "2b": 1024, "5c": 5, "3w": 6, "99999999999999999999": 1 << 62, "9E": 1 << 62,
		"": -1, "x": -1, "10Q": -1, "1Gx": -1,
	} {
		if got := byteCount(in); got != want {
			t.Errorf("byteCount(%q) = %d, want %d", in, got, want)
		}
	}
	for _, tc := range []struct {
		ops  []string
		want int64
	}{{[]string{"100"}, 100}, {[]string{"5", "10"}, 6}, {[]string{"1", "2", "10"}, 5}, {[]string{"10", "1"}, 0},
		{[]string{"-9223372036854775807", "9223372036854775807"}, 1<<63 - 1}, {[]string{"x"}, 0}, {[]string{"1", "0", "5"}, 0}} {
		if got := seqCount(tc.ops); got != tc.want {
			t.Errorf("seqCount(%q) = %d, want %d", tc.ops, got, tc.want)
		}
	}
}

func FuzzByteCount(f *testing.F) {
	for _, s := range []string{"900G", "1GiB", "99999999999999999999E", "2b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n := byteCount(s); n < -1 || n > 1<<62 {
			t.Fatalf("byteCount(%q) = %d: outside [-1, 2^62]", s, n)
		}
		humanBytes(byteCount(s))
		if n := seqCount([]string{"-" + s, s}); n < 0 {
			t.Fatalf("seqCount(-%q, %q) = %d", s, s, n)
		}
		// The other readers of this round's untrusted text must not
		// panic on any input.
		passwordHashTable(s)
		hogsMemory(s)
		serviceKeyFile("/etc/" + s)
		stagingSpot("/tmp/"+s, "/home/dev")
		remoteStore(s)
		bucketName(s)
	})
}

func TestInodeExhaustion(t *testing.T) {
	runRuleCases(t, "disruption.disk-fill", []ruleCase{
		cmdCase("mkdir -p ~/.cache/t && cd ~/.cache/t && seq 1 100000000 | xargs touch", true),
		cmdCase("seq 5000000 | xargs -n 1000 mkdir -p", true),
		cmdCase("seq 1 20 | xargs -I{} touch file{}.txt", false),
		cmdCase("seq 1 10000000 | awk '{s+=$1} END {print s}'", false),
	})
}

func TestMemoryHogs(t *testing.T) {
	runRuleCases(t, "disruption.memory-hog", []ruleCase{
		cmdCase(`node -e "const a=[];setInterval(()=>a.push(Buffer.alloc(1<<28,1)),10)"`, true),
		cmdCase("python3 -c 'l=[]\nwhile 1: l.append(\" \"*10**8)'", true),
		cmdCase("ruby -e 'a=[]; loop { a << \"x\" * 100000000 }'", true),
		cmdCase("python3 -c 'import time\nwhile True:\n  print(time.time()); time.sleep(1)'", false),
		cmdCase("python3 -c 'buf=[]\nwhile True:\n  line=input()\n  if not line: break\n  buf.append(\"x\"*10**8)'", false),
		cmdCase("python3 -c 'l=[\" \"*10**8 for _ in range(3)]'", false),
	})
}
