// Package readme checks the repository's documentation against the code:
// every README.md and every page of docs/. Every Go snippet in them is
// part of a compiled, tested function, or is a whole program that is
// built and served to a real client; every JSON snippet parses; every
// local path a shell snippet gives the go command exists; every relative
// link leads to a file, and to a heading there if it names one; and the
// README's test command is the one .ci/run runs. A snippet cannot drift
// from the code it shows.
package readme

import (
	"bufio"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// root is the repository's root, relative to this package.
const root = "../.."

// A snippet is one fenced code block of a page.
type snippet struct {
	file string // the page, relative to root
	line int    // of the opening fence
	lang string
	text string
}

// A page is one Markdown file the checks cover.
type page struct {
	file  string   // relative to root
	lines []string // its text, line by line
}

// pages returns every README.md in the repository and every Markdown file
// under docs/.
func pages(t *testing.T) []page {
	t.Helper()
	var out []page
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, path)
		isDoc := strings.HasPrefix(rel, "docs"+string(filepath.Separator)) && strings.HasSuffix(rel, ".md")
		if d.IsDir() || d.Name() != "README.md" && !isDoc {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		p := page{file: rel}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			p.lines = append(p.lines, sc.Text())
		}
		out = append(out, p)
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("no page found: is the README where it was?")
	}
	return out
}

// fence reports whether line opens or closes a fenced code block, and
// the language it names.
func fence(line string) (lang string, ok bool) {
	trimmed := strings.TrimSpace(line)
	if !strings.HasPrefix(trimmed, "```") {
		return "", false
	}
	return strings.TrimPrefix(trimmed, "```"), true
}

// snippets returns the fenced code blocks of every page.
func snippets(t *testing.T) []snippet {
	t.Helper()
	var out []snippet
	for _, p := range pages(t) {
		var cur *snippet
		var body []string
		for i, line := range p.lines {
			lang, isFence := fence(line)
			switch {
			case cur == nil && isFence:
				cur = &snippet{file: p.file, line: i + 1, lang: lang}
				body = nil
			case cur != nil && isFence && lang == "":
				cur.text = strings.Join(body, "\n")
				out = append(out, *cur)
				cur = nil
			case cur != nil:
				body = append(body, line)
			}
		}
	}
	return out
}

// isProgram reports whether a Go snippet is a whole program.
func isProgram(s snippet) bool {
	return strings.HasPrefix(strings.TrimSpace(s.text), "package main")
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

// Every Go snippet but a whole program is a run of whole lines of a
// function in a test file (an Example, most often), so that it compiles
// and runs in CI.
func TestGoSnippetsAreTested(t *testing.T) {
	bodies := testedBodies(t)
	n := 0
	for _, s := range snippets(t) {
		if s.lang != "go" || isProgram(s) {
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

// Every Go snippet that is a whole program (package main) is a server a
// reader can copy into a file and run: it builds against the repository's
// packages, serves a go-sdk client over stdio at every protocol version,
// lists resources, passes the audit (package audit, every rule, SHOULDs
// included), and exits cleanly when its client hangs up.
func TestProgramSnippetsServe(t *testing.T) {
	n := 0
	for _, s := range snippets(t) {
		if s.lang != "go" || !isProgram(s) {
			continue
		}
		n++
		t.Run(fmt.Sprintf("%s:%d", s.file, s.line), func(t *testing.T) {
			dir := t.TempDir()
			src, bin := filepath.Join(dir, "main.go"), filepath.Join(dir, "server")
			if err := os.WriteFile(src, []byte(s.text+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			// Built from the repository's root, so that its imports resolve
			// to the packages of this checkout.
			build := exec.Command("go", "build", "-o", bin, src)
			build.Dir = root
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("go build: %v\n%s", err, out)
			}
			for _, version := range mcptest.Versions {
				t.Run(version, func(t *testing.T) {
					cs := mcptest.Stdio(t, bin, nil, version, nil)
					if resources, _ := mcptest.ListAll(t, cs); len(resources) == 0 {
						t.Error("the program lists no resource")
					}
					if _, err := cs.ListResourceTemplates(t.Context(), &mcp.ListResourceTemplatesParams{}); err != nil {
						t.Error(err)
					}
					mcptest.Audit(t, cs, nil)
				})
			}
		})
	}
	if n == 0 {
		t.Fatal("no whole program found: the README's server is gone")
	}
}

// Every JSON snippet parses.
func TestJSONSnippetsParse(t *testing.T) {
	for _, s := range snippets(t) {
		if s.lang == "json" && !json.Valid([]byte(s.text)) {
			t.Errorf("%s:%d: this JSON snippet does not parse:\n%s", s.file, s.line, s.text)
		}
	}
}

// localPath matches a local package path in a go command: ./x/y/...
var localPath = regexp.MustCompile(`(?:^|\s)(\./[^\s@]*)`)

// Every local path a shell snippet gives the go command exists, relative
// to the repository's root or to the page's own directory.
func TestShellSnippetPathsExist(t *testing.T) {
	for _, s := range snippets(t) {
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

// link matches an inline Markdown link or image: [text](target).
var link = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// codeSpan matches inline code, in which brackets are not links.
var codeSpan = regexp.MustCompile("`[^`]*`")

// anchors returns the anchors GitHub gives the headings of a Markdown
// file: lower case, without punctuation, spaces as hyphens, a repeated one
// numbered.
func anchors(lines []string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	inCode := false
	for _, line := range lines {
		if _, ok := fence(line); ok {
			inCode = !inCode
			continue
		}
		if inCode || !strings.HasPrefix(line, "#") {
			continue
		}
		heading := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(heading) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// Every relative link of a page leads to a file or directory of the
// repository, and to one of its headings if it names one (#anchor), so
// that moving a section or a page cannot leave a reader at a dead end.
func TestRelativeLinksResolve(t *testing.T) {
	ps := pages(t)
	byFile := map[string]page{}
	for _, p := range ps {
		byFile[filepath.Clean(p.file)] = p
	}
	headings := func(file string) (map[string]bool, bool) {
		if p, ok := byFile[file]; ok {
			return anchors(p.lines), true
		}
		if !strings.HasSuffix(file, ".md") {
			return nil, false
		}
		src, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			return nil, false
		}
		return anchors(strings.Split(string(src), "\n")), true
	}
	for _, p := range ps {
		inCode := false
		for i, line := range p.lines {
			if _, ok := fence(line); ok {
				inCode = !inCode
				continue
			}
			if inCode {
				continue
			}
			for _, m := range link.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				file := filepath.Clean(p.file)
				if path != "" {
					file = filepath.Join(filepath.Dir(p.file), path)
					if _, err := os.Stat(filepath.Join(root, file)); err != nil {
						t.Errorf("%s:%d: the link %s leads to no file", p.file, i+1, target)
						continue
					}
				}
				if anchor == "" {
					continue
				}
				if hs, ok := headings(file); ok && !hs[anchor] {
					t.Errorf("%s:%d: the link %s names no heading of %s", p.file, i+1, target, file)
				}
			}
		}
	}
}

// ciNested matches the nested modules .ci/run names: nested=(./a/... ./b/...).
var ciNested = regexp.MustCompile(`(?m)^nested=\(([^)]*)\)`)

// The README's test command is the one CI runs: go test -race over the
// core and every nested module .ci/run names, word for word, so that a
// module added to CI is added to the README too.
func TestReadmeTestCommandIsCI(t *testing.T) {
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	m := ciNested.FindSubmatch(ci)
	if m == nil {
		t.Fatal(".ci/run names no nested=(…) modules")
	}
	want := "go test -race ./... " + strings.Join(strings.Fields(string(m[1])), " ")
	for _, s := range snippets(t) {
		if s.file == "README.md" && s.lang == "sh" && slices.Contains(strings.Split(s.text, "\n"), want) {
			return
		}
	}
	t.Errorf("README.md has no sh snippet with the line CI runs:\n%s", want)
}
