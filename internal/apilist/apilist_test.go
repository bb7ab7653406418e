package apilist

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite "+apiFile+" from the code")

const (
	// root is the repository's root, relative to this package.
	root = "../.."
	// apiFile is the checked-in listing, relative to root.
	apiFile = "api/mcpres.txt"
	// updateCommand is what to run, at root, to rewrite apiFile.
	updateCommand = "go test ./internal/apilist -update"
)

// The checked-in listing is the code's: an API change shows as a diff of
// api/mcpres.txt in review.
func TestAPIFile(t *testing.T) {
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		t.Skip("not a checkout of the repository, whose nested modules the listing covers")
	}
	lines, err := List(root)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join(lines, "\n") + "\n"
	path := filepath.Join(root, apiFile)
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: %d lines", apiFile, len(lines))
		return
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v\nWrite it with:\n\t%s", err, updateCommand)
	}
	if string(got) == want {
		return
	}
	file := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	var diff []string
	for _, l := range lines {
		if !slices.Contains(file, l) {
			diff = append(diff, "+"+l)
		}
	}
	for _, l := range file {
		if !slices.Contains(lines, l) {
			diff = append(diff, "-"+l)
		}
	}
	if len(diff) == 0 {
		diff = []string{"(the same lines, in another order or repeated)"}
	}
	t.Errorf("%s is not the code's API (+ in the code only, - in the file only):\n%s\n\nIf the change is meant, update the file, at the repository's root, with:\n\t%s",
		apiFile, strings.Join(diff, "\n"), updateCommand)
}

// List names every kind of exported name in its own way, and leaves out
// what is not API.
func TestList(t *testing.T) {
	got, err := List("testdata/mod")
	if err != nil {
		t.Fatal(err)
	}
	const p = "pkg example.com/mod/p, "
	want := []string{
		"pkg example.com/nested/q, type Q int", // nested module, quoted module path
		p + "const First Code",                 // iota: no value
		p + "const Second Code",                // repeats the spec before
		p + "const Typed Kind = \"k\"",
		p + "const Untyped = 100",
		p + "func New[T comparable](...T) *Set[T]",
		p + "func Run(int, int, <-chan string, map[string][]byte) (Kind, error)",
		p + "method (*Set[T]) Add(T)",
		p + "method (Options) Close() error",
		p + "type Alias = Options",
		p + "type Code int",
		p + "type Doer interface",
		p + "type Doer interface, Do(context.Context, ...string) error",
		p + "type Doer interface, embedded io.Closer",
		p + "type Doer interface, unexported methods",
		p + "type Kind string",
		p + "type Options struct",
		p + "type Options struct, Hook func(context.Context, string) (int, error)",
		p + "type Options struct, Nested struct{ A int; B int }",
		p + "type Options struct, Size int",
		p + "type Options struct, embedded io.Reader",
		p + "type Set[T comparable] struct",
		p + "var Computed = len(\"abc\")",
		p + "var Default *Options",
		p + "var ErrX error",
		p + "var Plain Options",
	}
	slices.Sort(want)
	for _, l := range want {
		if !slices.Contains(got, l) {
			t.Errorf("missing: %s", l)
		}
	}
	for _, l := range got {
		if !slices.Contains(want, l) {
			t.Errorf("unexpected: %s", l)
		}
	}
	if !slices.IsSorted(got) {
		t.Errorf("not sorted:\n%s", strings.Join(got, "\n"))
	}
}
