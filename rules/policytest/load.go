package policytest

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// maxFileBytes bounds one case file. Case files may come from users
// (shieldd policy test DIR), so reading one must not exhaust memory.
const maxFileBytes = 8 << 20

// LoadDir loads every *.yaml and *.yml file directly in dir (not in
// subdirectories), in file-name order. Errors name file:line; all problems
// found are reported together so a case author can fix them in one pass.
func LoadDir(dir string) ([]Case, error) {
	return load(os.DirFS(dir), ".", func(name string) string { return filepath.Join(dir, name) })
}

// LoadFS is LoadDir on a file system, e.g. an embed.FS. dir is a slash
// path within fsys ("." for its root).
func LoadFS(fsys fs.FS, dir string) ([]Case, error) {
	return load(fsys, dir, func(name string) string { return path.Join(dir, name) })
}

func load(fsys fs.FS, dir string, display func(string) string) ([]Case, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("policytest: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if ext := path.Ext(e.Name()); ext == ".yaml" || ext == ".yml" {
			names = append(names, e.Name()) // fs.ReadDir returns names sorted
		}
	}
	if len(names) == 0 {
		// An empty suite passing silently would hide a wrong directory.
		return nil, fmt.Errorf("%s: no *.yaml or *.yml case files", display(""))
	}
	var cases []Case
	var errs []error
	for _, name := range names {
		file := display(name)
		data, err := readLimited(fsys, path.Join(dir, name))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", file, err))
			continue
		}
		cs, err := parseFile(file, data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cases = append(cases, cs...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return cases, nil
}

func readLimited(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("case file larger than %d bytes", maxFileBytes)
	}
	return data, nil
}
