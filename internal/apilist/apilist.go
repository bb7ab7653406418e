// Package apilist lists the exported API of the repository's packages,
// one line a name, the way Go keeps api/go1.*.txt. The listing is
// checked in as api/mcpres.txt, and a test fails when the code and the
// file disagree, so every change of the API is a diff in review. To
// update the file:
//
//	go test ./internal/apilist -update
//
// The listing covers every module of the repository: the core and the
// nested ones (each directory with a go.mod). A package's import path is
// its module's path and its directory below the module. It leaves out
// testdata, _test.go files, internal packages and commands (package
// main).
//
// It reads syntax only, with no type checking, so it does not resolve
// types: a var's type is the one written, or guessed from its value
// (errors.New is an error, &T{} a *T); methods promoted from embedded
// fields are not listed; and a file for one platform counts like any
// other, so the listing is the same everywhere.
package apilist

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// List returns the API lines of every package under root, sorted.
func List(root string) ([]string, error) {
	var lines []string
	err := filepath.WalkDir(root, func(dir string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if dir != root && (name == "testdata" || name == "internal" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		pkg, err := importPath(root, dir)
		if err != nil {
			return err
		}
		l, err := packageLines(dir, pkg)
		lines = append(lines, l...)
		return err
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(lines)
	return slices.Compact(lines), nil
}

// packageLines returns the API lines of the package in dir, whose import
// path is pkg: none if dir holds no Go package or package main.
func packageLines(dir, pkg string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		if !ignored(f) {
			files = append(files, f)
		}
	}
	if len(files) == 0 || files[0].Name.Name == "main" {
		return nil, nil
	}
	var lines []string
	for _, f := range files {
		lines = append(lines, fileLines(f, "pkg "+pkg+", ")...)
	}
	return lines, nil
}

// ignored reports whether f is excluded from every build by the
// constraint "//go:build ignore".
func ignored(f *ast.File) bool {
	for _, g := range f.Comments {
		if g.Pos() >= f.Package {
			break
		}
		for _, c := range g.List {
			if strings.TrimSpace(c.Text) == "//go:build ignore" {
				return true
			}
		}
	}
	return false
}

// importPath returns the import path of the package in dir: the module
// path of the nearest go.mod at or above it, within root, joined with
// dir's path below that go.mod.
func importPath(root, dir string) (string, error) {
	for mod := dir; ; mod = filepath.Dir(mod) {
		if p, err := modulePath(filepath.Join(mod, "go.mod")); err == nil {
			rel, err := filepath.Rel(mod, dir)
			if err != nil {
				return "", err
			}
			return path.Join(p, filepath.ToSlash(rel)), nil
		} else if !os.IsNotExist(err) {
			return "", err
		}
		if mod == root || mod == filepath.Dir(mod) {
			return "", fmt.Errorf("apilist: no go.mod at or above %s within %s", dir, root)
		}
	}
}

// modulePath returns the path the module line of the go.mod file names.
func modulePath(gomod string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "//")
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module")
		if !ok || rest == "" || rest[0] != ' ' && rest[0] != '\t' {
			continue
		}
		p := strings.TrimSpace(rest)
		if u, err := strconv.Unquote(p); err == nil {
			p = u
		}
		return p, nil
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("apilist: %s has no module line", gomod)
}
