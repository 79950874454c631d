package audit

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

const crashChildEnv = "PARAPET_AUDIT_CRASH_CHILD"

func TestMain(m *testing.M) {
	if path := os.Getenv(crashChildEnv); path != "" {
		crashChild(path)
		return
	}
	os.Exit(m.Run())
}

// crashChild appends from several goroutines in always mode, with a small
// rotation size, and prints each acknowledged hash until it is killed.
func crashChild(path string) {
	l, err := Open(Config{Path: path, Mode: ModeAlways, MaxBytes: 4096})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				h, err := l.Append(evalEntry(g*1_000_000 + i))
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(3)
				}
				mu.Lock()
				fmt.Fprintln(out, h)
				out.Flush() // acknowledged = printed
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

func TestKilledWriterLosesNoAcknowledgedRecord(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	for round := range 2 { // the second run resumes the chain the first one left
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var acked []string
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			acked = append(acked, sc.Text())
			if len(acked) == 300 {
				cmd.Process.Signal(syscall.SIGKILL)
				break
			}
		}
		// Hashes already on the pipe were acknowledged too.
		for sc.Scan() {
			acked = append(acked, sc.Text())
		}
		err = cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("round %d: child was not killed (%v): %s", round, err, stderr.String())
		}

		rotated, err := RotatedFiles(path)
		if err != nil {
			t.Fatal(err)
		}
		// A kill between a rotation's rename and the new file's creation
		// leaves no active file: the chain is whole in the rotated ones,
		// and the next Open starts the active file from their last line.
		files := rotated
		if _, err := os.Stat(path); err == nil {
			files = append(files, path)
		} else if !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		res, err := Verify(files, "")
		if err != nil {
			t.Fatalf("round %d: chain broken after a kill: %v", round, err)
		}
		onDisk := map[string]bool{}
		for _, f := range files {
			for _, line := range lines(t, f) {
				e, err := ParseLine([]byte(strings.TrimSuffix(line, "\n")))
				if err != nil {
					t.Fatal(err)
				}
				onDisk[e.Hash] = true
			}
		}
		for _, h := range acked {
			if !onDisk[h] {
				t.Fatalf("round %d: acknowledged record %s is not in the log (%d entries verified)", round, h, res.Entries)
			}
		}
		t.Logf("round %d: %d acknowledged, %d entries in %d files, torn tail %d bytes", round, len(acked), res.Entries, len(files), res.TornBytes)
	}
}
