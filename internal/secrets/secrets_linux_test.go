package secrets

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/parapet-dev/parapet/internal/secrets/secretstest"
)

// The test binary re-executes itself as the child process of these tests.
const envChild = "SECRETS_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(envChild); mode != "" {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

// child reads its secret from the descriptor in argv, makes itself
// non-dumpable when asked, says so on stdout and waits for stdin to close.
func child(mode string) int {
	fd, _ := strconv.Atoi(os.Args[len(os.Args)-1])
	secret, err := ReadFD(fd)
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	if mode == "nodump" {
		if err := NonDumpable(); err != nil {
			fmt.Println("error:", err)
			return 1
		}
	}
	// The descriptor is closed after the read: nothing the child starts
	// later can inherit it.
	if _, err := os.Stat("/proc/self/fd/" + strconv.Itoa(fd)); !errors.Is(err, fs.ErrNotExist) {
		fmt.Println("error: descriptor still open:", err)
		return 1
	}
	fmt.Printf("secret %s\n", secret)
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

type running struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	line  string
}

func start(t *testing.T, u *secretstest.User, mode, secret string) *running {
	t.Helper()
	cmd := exec.Command(u.Exe)
	u.Apply(cmd)
	cmd.Env = append(os.Environ(), envChild+"="+mode)
	fd, done, err := PassFD(cmd, []byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Args = append(cmd.Args, strconv.Itoa(fd))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	err = cmd.Start()
	done()
	if err != nil {
		t.Fatal(err)
	}
	r := &running{cmd: cmd, stdin: stdin}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	r.line, _ = bufio.NewReader(stdout).ReadString('\n')
	return r
}

func TestPassFDNonDumpable(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef"
	u := secretstest.New(t)
	r := start(t, u, "nodump", secret)
	if r.line != "secret "+secret+"\n" {
		t.Fatalf("child said %q", r.line)
	}
	pid := strconv.Itoa(r.cmd.Process.Pid)
	for _, f := range []string{"environ", "mem", "maps", "fd/0"} {
		b, err := u.Read("/proc/" + pid + "/" + f)
		if err == nil || !strings.Contains(err.Error(), "Permission denied") {
			t.Errorf("reading /proc/%s/%s of a non-dumpable child as the same user: %d bytes, error %v; want permission denied", pid, f, len(b), err)
		}
	}
}

// The control: the same child left dumpable shows its environment to this
// process, so the test above proves what NonDumpable changes. The secret
// is still not in it: it came on the pipe.
func TestPassFDDumpableControl(t *testing.T) {
	const secret = "fedcba9876543210fedcba9876543210"
	u := secretstest.New(t)
	r := start(t, u, "dump", secret)
	if r.line != "secret "+secret+"\n" {
		t.Fatalf("child said %q", r.line)
	}
	env, err := u.Read("/proc/" + strconv.Itoa(r.cmd.Process.Pid) + "/environ")
	if err != nil {
		t.Fatalf("a dumpable child's environ should be readable: %v", err)
	}
	if !strings.Contains(string(env), envChild+"=dump") || strings.Contains(string(env), secret) {
		t.Fatalf("environ %q", env)
	}
}

func TestPassFDRefusesBadSecrets(t *testing.T) {
	for _, s := range [][]byte{nil, make([]byte, MaxSecret+1)} {
		if _, _, err := PassFD(exec.Command("true"), s); err == nil {
			t.Errorf("PassFD accepted a secret of %d bytes", len(s))
		}
	}
}

func TestReadFDErrors(t *testing.T) {
	if _, err := ReadFD(1); err == nil {
		t.Error("ReadFD(1) read stdout")
	}
	if _, err := ReadFD(987); err == nil {
		t.Error("ReadFD of a closed descriptor succeeded")
	}
	r, w, _ := os.Pipe()
	w.Close()
	if _, err := ReadFD(int(r.Fd())); err == nil || !strings.Contains(err.Error(), "no secret") {
		t.Errorf("empty pipe: %v", err)
	}
}
