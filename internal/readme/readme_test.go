// Package readme checks the repository's README files against the code:
// every Go snippet in them is part of a compiled, tested function, every
// JSON snippet parses, and every local path a shell snippet gives the go
// command exists. A snippet cannot drift from the code it shows.
package readme

import (
	"bufio"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the repository's root, relative to this package.
const root = "../.."

// A snippet is one fenced code block of a README.
type snippet struct {
	file string // the README, relative to root
	line int    // of the opening fence
	lang string
	text string
}

// readmes returns the snippets of every README.md in the repository.
func readmes(t *testing.T) []snippet {
	t.Helper()
	var out []snippet
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.Name() != "README.md" {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		rel, _ := filepath.Rel(root, path)
		sc := bufio.NewScanner(f)
		var cur *snippet
		var body []string
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			trimmed := strings.TrimSpace(line)
			switch {
			case cur == nil && strings.HasPrefix(trimmed, "```"):
				cur = &snippet{file: rel, line: n, lang: strings.TrimPrefix(trimmed, "```")}
				body = nil
			case cur != nil && trimmed == "```":
				cur.text = strings.Join(body, "\n")
				out = append(out, *cur)
				cur = nil
			case cur != nil:
				body = append(body, line)
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// normalize trims each line of s and drops trailing empty lines, so that a
// snippet matches code indented to any depth.
func normalize(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// testedBodies returns the source of the body of every function in every
// _test.go file of the repository, normalized: the code a snippet may
// show.
func testedBodies(t *testing.T) []string {
	t.Helper()
	var out []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Body != nil {
				from, to := fset.Position(fn.Body.Lbrace).Offset, fset.Position(fn.Body.Rbrace).Offset
				out = append(out, normalize(string(src[from+1:to])))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Every Go snippet is a run of whole lines of a function in a test file
// (an Example, most often), so that it compiles and runs in CI.
func TestGoSnippetsAreTested(t *testing.T) {
	bodies := testedBodies(t)
	n := 0
	for _, s := range readmes(t) {
		if s.lang != "go" {
			continue
		}
		n++
		want := normalize(s.text)
		found := false
		for _, b := range bodies {
			if strings.HasPrefix(b, want+"\n") || strings.HasSuffix(b, "\n"+want) || b == want || strings.Contains(b, "\n"+want+"\n") {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("%s:%d: this Go snippet is not part of any function in a _test.go file; copy it from an Example (whole lines):\n%s", s.file, s.line, s.text)
		}
	}
	if n == 0 {
		t.Fatal("no Go snippet found: is the README where it was?")
	}
}

// Every JSON snippet parses.
func TestJSONSnippetsParse(t *testing.T) {
	for _, s := range readmes(t) {
		if s.lang == "json" && !json.Valid([]byte(s.text)) {
			t.Errorf("%s:%d: this JSON snippet does not parse:\n%s", s.file, s.line, s.text)
		}
	}
}

// localPath matches a local package path in a go command: ./x/y/...
var localPath = regexp.MustCompile(`(?:^|\s)(\./[^\s@]*)`)

// Every local path a shell snippet gives the go command exists, relative
// to the repository's root or to the README's own directory.
func TestShellSnippetPathsExist(t *testing.T) {
	for _, s := range readmes(t) {
		if s.lang != "sh" && s.lang != "bash" && s.lang != "" {
			continue
		}
		for _, line := range strings.Split(s.text, "\n") {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "go ") && !strings.Contains(line, " go ") {
				continue
			}
			for _, m := range localPath.FindAllStringSubmatch(line, -1) {
				p := strings.TrimSuffix(strings.TrimSuffix(m[1], "/..."), "...")
				if _, err := os.Stat(filepath.Join(root, p)); err == nil {
					continue
				}
				if _, err := os.Stat(filepath.Join(root, filepath.Dir(s.file), p)); err == nil {
					continue
				}
				t.Errorf("%s:%d: %q names %s, which does not exist", s.file, s.line, line, p)
			}
		}
	}
}
