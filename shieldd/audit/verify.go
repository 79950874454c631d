package audit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/parapet-dev/parapet/rules/action"
)

// Result is what Verify found in an intact chain.
type Result struct {
	Entries int
	// Head is the hash of the last entry (the starting hash when there are
	// no entries). Record it elsewhere: a hash chain cannot show that
	// entries were cut from its end, a known head can.
	Head    string
	LastSeq uint64
	// TornFile and TornBytes describe an interrupted final line at the end
	// of the last file (a crash during a write). It is not part of the
	// chain; shieldd removes it when it next opens the log.
	TornFile  string
	TornBytes int
}

// VerifyError names the first line that breaks the chain.
type VerifyError struct {
	File   string
	Line   int
	Reason string
}

func (e *VerifyError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason) }

// Verifier checks a chain fed to it line by line, file by file.
type Verifier struct {
	prev     string
	seq      uint64
	seqKnown bool
	res      Result
}

// NewVerifier starts a chain at prev: Genesis for a complete log, or the
// last hash of an earlier, already verified (or deleted) file.
func NewVerifier(prev string) (*Verifier, error) {
	if prev == "" {
		prev = Genesis
	}
	if !action.IsHexHash(prev) {
		return nil, errors.New("the starting hash must be 64 lower-case hex digits")
	}
	return &Verifier{prev: prev, seqKnown: prev == Genesis, res: Result{Head: prev}}, nil
}

// Line checks one line (without its newline).
func (v *Verifier) Line(line []byte) error {
	e, err := ParseLine(line)
	if err != nil {
		return err
	}
	want := v.seq + 1
	if e.PrevHash != v.prev {
		reason := "prev_hash does not match the previous entry's hash"
		if v.res.Entries == 0 && v.prev == Genesis {
			reason = "prev_hash is not the genesis value, but this is the first entry (an earlier file is missing?)"
		}
		if v.seqKnown && e.Seq != want {
			reason += fmt.Sprintf(" (seq %d where %d was expected: an entry is missing, inserted or out of order)", e.Seq, want)
		}
		return errors.New(reason)
	}
	if v.seqKnown && e.Seq != want {
		return fmt.Errorf("seq %d where %d was expected", e.Seq, want)
	}
	v.prev, v.seq, v.seqKnown = e.Hash, e.Seq, true
	v.res.Entries++
	v.res.Head, v.res.LastSeq = e.Hash, e.Seq
	return nil
}

// Result is the state so far.
func (v *Verifier) Result() Result { return v.res }

// Reader checks every line of r, named name in errors. A final line
// without a newline is reported as torn (not an error) when last is true,
// and as an error otherwise.
func (v *Verifier) Reader(r io.Reader, name string, last bool) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := readLine(br)
		switch {
		case err == io.EOF && len(line) == 0:
			return nil
		case err == io.EOF:
			if !last {
				return &VerifyError{File: name, Line: n, Reason: "incomplete final line in a file that is not the last one"}
			}
			v.res.TornFile, v.res.TornBytes = name, len(line)
			return nil
		case errors.Is(err, errLineTooLong):
			return &VerifyError{File: name, Line: n, Reason: err.Error()}
		case err != nil:
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := v.Line(line); err != nil {
			return &VerifyError{File: name, Line: n, Reason: err.Error()}
		}
	}
}

var errLineTooLong = fmt.Errorf("line longer than %d bytes", maxLine)

// readLine returns one line without its newline; io.EOF with the bytes
// after the last newline at the end.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, err := br.ReadSlice('\n')
		if len(line)+len(part) > maxLine+1 {
			return nil, errLineTooLong
		}
		line = append(line, part...)
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return line, err
		}
	}
}

// Verify checks files in chain order (rotated files oldest first, then the
// active file), starting from prev ("" = Genesis). It returns a
// *VerifyError naming the first broken line.
func Verify(files []string, prev string) (Result, error) {
	v, err := NewVerifier(prev)
	if err != nil {
		return Result{}, err
	}
	for i, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return v.Result(), err
		}
		err = v.Reader(f, name, i == len(files)-1)
		f.Close()
		if err != nil {
			return v.Result(), err
		}
	}
	return v.Result(), nil
}
