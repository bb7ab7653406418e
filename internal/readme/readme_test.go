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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
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

// The README's test command is the one CI runs: go test -race -p 4 over the
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
	want := "go test -race -p 4 ./... " + strings.Join(strings.Fields(string(m[1])), " ")
	for _, s := range snippets(t) {
		if s.file == "README.md" && s.lang == "sh" && slices.Contains(strings.Split(s.text, "\n"), want) {
			return
		}
	}
	t.Errorf("README.md has no sh snippet with the line CI runs:\n%s", want)
}

// exampleFunc matches the declaration of an Example function.
var exampleFunc = regexp.MustCompile(`(?m)^func (Example\w*)\(\)`)

// exampleEntry matches a line of docs/examples.md's index: a link to a
// test file, then its Examples.
var exampleEntry = regexp.MustCompile("^- \\[`([^`]+)`\\]\\(\\.\\./([^)]+)\\): (.*)$")

// docs/examples.md lists every Example function of the repository, by
// file, and no other: go doc does not show them, so the page is where a
// reader finds them before pkg.go.dev does.
func TestExamplesPageListsEvery(t *testing.T) {
	want := map[string][]string{} // file -> its Examples, in order
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, m := range exampleFunc.FindAllStringSubmatch(string(src), -1) {
			want[filepath.ToSlash(rel)] = append(want[filepath.ToSlash(rel)], m[1])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(root, "docs", "examples.md"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, line := range strings.Split(string(src), "\n") {
		m := exampleEntry.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if m[1] != m[2] {
			t.Errorf("docs/examples.md: %s links to %s", m[1], m[2])
		}
		for _, name := range strings.Split(m[3], ", ") {
			got[m[2]] = append(got[m[2]], strings.Trim(name, "`"))
		}
	}
	for file, names := range want {
		if g := got[file]; !slices.Equal(g, names) {
			t.Errorf("docs/examples.md lists for %s:\n\t%v\nwant, as the file declares them:\n\t%v", file, g, names)
		}
	}
	for file := range got {
		if _, ok := want[file]; !ok {
			t.Errorf("docs/examples.md lists %s, which declares no Example", file)
		}
	}
}

// inspector is the Inspector's npm package, as a command names it.
const inspector = "npx @modelcontextprotocol/inspector"

// Every Inspector command pins major version 2, the one the README's
// Node requirement is for: without it, npm on an older Node quietly picks
// an old Inspector that cannot do what the pages show.
func TestInspectorPinned(t *testing.T) {
	n := 0
	for _, s := range snippets(t) {
		for _, line := range strings.Split(s.text, "\n") {
			if !strings.Contains(line, inspector) {
				continue
			}
			n++
			if !strings.Contains(line, inspector+"@2 ") {
				t.Errorf("%s:%d: %q does not pin the Inspector: %s@2", s.file, s.line, line, inspector)
			}
		}
	}
	if n == 0 {
		t.Fatal("no Inspector command found")
	}
}

// A goCommand is one go command of a shell snippet, run from the root of
// a checkout.
type goCommand struct {
	where string   // page:line
	line  string   // as written
	sub   string   // install, build or run
	args  []string // after the subcommand
}

// shellWord matches what makes a line more than a plain command: shell
// syntax, a placeholder or an ellipsis, a second command.
var shellWord = regexp.MustCompile(`[$|<>;"'&…]|\b[A-Z]{2,}\b| -- `)

// goCommands returns the go install, go build and go run commands of
// every shell snippet that name packages of the checkout, each with the
// arguments up to a comment.
func goCommands(t *testing.T) []goCommand {
	var out []goCommand
	for _, s := range snippets(t) {
		if s.lang != "sh" && s.lang != "bash" && s.lang != "" {
			continue
		}
		for i, line := range strings.Split(s.text, "\n") {
			line, _, _ = strings.Cut(line, " #")
			line = strings.TrimSpace(line)
			fields := strings.Fields(line)
			if len(fields) < 3 || fields[0] != "go" {
				continue // the Inspector's go run is the Inspector's
			}
			sub := fields[1]
			if sub != "install" && sub != "build" && sub != "run" {
				continue
			}
			local := false
			for _, f := range fields[2:] {
				local = local || strings.HasPrefix(f, "./")
			}
			if !local {
				continue // a published path: scripts/installcheck.sh
			}
			out = append(out, goCommand{where: fmt.Sprintf("%s:%d", s.file, s.line+1+i), line: line, sub: sub, args: fields[2:]})
		}
	}
	return out
}

// Every go install, go build and go run of the checkout's packages that a
// page gives works as written from the root of a checkout: go install
// installs, go build builds, and go run's package builds and, where the
// line is a plain command, starts without refusing its flags. A server so
// started reads from no host, and is stopped after a second if it has not
// ended; an address it is told to listen on is replaced with a free port.
//
// What they install and build goes to a directory of the user's cache
// kept for this checkout (outputDir), not the test's, in a directory
// named after the command, so that moving it on its page does not leave
// another behind: the go command then links again only what changed
// since the last run, and each command still builds its packages from
// source. The go commands run one at a
// time, in the order of the pages; the servers started then run together.
func TestShellGoCommandsWork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every example")
	}
	t.Parallel()
	cmds := goCommands(t)
	if len(cmds) < 10 {
		t.Fatalf("found %d go commands of the checkout in the pages; is the parsing broken?", len(cmds))
	}
	out := outputDir(t)
	built := map[string]string{} // package -> binary
	var started []goCommand      // each with its binary in place of its package
	for _, c := range cmds {
		t.Run(c.where, func(t *testing.T) {
			switch c.sub {
			case "install":
				dir := filepath.Join(out, "install", fileName(c.line))
				cmd := exec.Command("go", append([]string{"install"}, c.args...)...)
				cmd.Dir, cmd.Env = root, append(os.Environ(), "GOBIN="+dir)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s: %v\n%s", c.line, err, out)
				}
			case "build":
				args := []string{"build", "-o", filepath.Join(out, "build", fileName(c.line)) + string(filepath.Separator)}
				for i := 0; i < len(c.args); i++ {
					if c.args[i] == "-o" {
						i++ // the page's output path, left alone
						continue
					}
					args = append(args, c.args[i])
				}
				cmd := exec.Command("go", args...)
				cmd.Dir = root
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s: %v\n%s", c.line, err, out)
				}
			case "run":
				pkg, flags := c.args[0], c.args[1:]
				bin, ok := built[pkg]
				if !ok {
					bin = filepath.Join(out, "run", fileName(pkg))
					cmd := exec.Command("go", "build", "-o", bin, pkg)
					cmd.Dir = root
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Fatalf("%s: go build %s: %v\n%s", c.line, pkg, err, out)
					}
					built[pkg] = bin
				}
				if shellWord.MatchString(c.line) {
					return // built; its arguments are a reader's to fill in
				}
				c.args = append([]string{bin}, flags...)
				started = append(started, c)
			}
		})
	}
	t.Run("started", func(t *testing.T) {
		for _, c := range started {
			t.Run(c.where, func(t *testing.T) {
				t.Parallel()
				runFlags(t, c, c.args[0], c.args[1:])
			})
		}
	})
}

// fileName returns s with every byte but a letter, a digit, a dot and a
// dash replaced with an underscore: a name for a file.
func fileName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '.' || r == '-' || r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return r
		}
		return '_'
	}, s)
}

// outputDir returns a directory of the user's cache for what
// TestShellGoCommandsWork installs and builds and TestReadmeSetUpFromClone
// sets up, one for each checkout (by
// its absolute path), so that two checkouts tested at once do not write
// the same files; without a user's cache, a directory of the test's.
func outputDir(t *testing.T) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		return t.TempDir()
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(abs))
	dir := filepath.Join(cache, "mcpres", "readme-test", hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// hostPort matches a loopback listening address.
var hostPort = regexp.MustCompile(`^127\.0\.0\.1:[0-9]+$`)

// badFlag matches what the flag package says of a flag it refuses.
var badFlag = regexp.MustCompile(`flag provided but not defined|invalid value .* for flag|flag needs an argument`)

// runFlags starts bin with flags from the checkout's root and fails t if
// it exits as the flag package does on a bad flag: status 2, saying so.
func runFlags(t *testing.T, c goCommand, bin string, flags []string) {
	t.Helper()
	args := slices.Clone(flags)
	for i, a := range args {
		if hostPort.MatchString(a) {
			args[i] = "127.0.0.1:0"
		}
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = root
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// The real clock: a separate process, whose start-up takes what it
	// takes; two seconds are ample to parse flags, with every server of
	// the pages starting at once.
	timer := time.NewTimer(2 * time.Second)
	defer timer.Stop()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 2 && badFlag.MatchString(stderr.String()) {
			t.Errorf("%s: a bad flag:\n%s", c.line, stderr.String())
		}
	case <-timer.C:
		cmd.Process.Kill()
		<-done
	}
}

// replaceLine matches the README's set-up from a checkout cloned next to
// one's module.
var replaceLine = regexp.MustCompile(`^go mod edit (-replace github\.com/mcpres/mcpres\S*=\.\./mcpres\S* ?)+&& go mod tidy$`)

// nestedReplace matches a replace of one nested module.
var nestedReplace = regexp.MustCompile(`-replace (github\.com/mcpres/mcpres/\S+)=`)

// Every go mod edit -replace line of the README's set-up works as written
// in a new module next to the checkout: with the README's server as its
// main.go (and, for a line that replaces a nested module, an import of
// it), go mod tidy succeeds and the program builds. The modules come from
// the module cache, which the workspace's build fills, and what the build
// never needs from the user's proxy, as for the user: go mod tidy checks
// the modules of the tests of mcp-go's dependencies, which no build
// downloads.
func TestReadmeSetUpFromClone(t *testing.T) {
	t.Parallel()
	var program string
	var lines []string
	for _, s := range snippets(t) {
		if s.file != "README.md" {
			continue
		}
		if s.lang == "go" && isProgram(s) && program == "" {
			program = s.text
		}
		for _, line := range strings.Split(s.text, "\n") {
			if replaceLine.MatchString(line) {
				lines = append(lines, line)
			}
		}
	}
	if program == "" || len(lines) < 2 {
		t.Fatalf("README.md: want a server program and set-up lines for the core and a nested module; found %d lines", len(lines))
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range lines {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			// The same directory each run (of this checkout), so that the
			// go command finds the checkout's packages, compiled from the
			// same paths, in its build cache.
			dir := filepath.Join(outputDir(t), "clone", fmt.Sprint(i))
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(abs, filepath.Join(dir, "mcpres")); err != nil {
				t.Fatal(err)
			}
			app := filepath.Join(dir, "app")
			files := map[string]string{"main.go": program + "\n"}
			for _, m := range nestedReplace.FindAllStringSubmatch(line, -1) {
				files[path.Base(m[1])+".go"] = fmt.Sprintf("package main\n\nimport _ %q\n", m[1])
			}
			if err := os.Mkdir(app, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, text := range files {
				if err := os.WriteFile(filepath.Join(app, name), []byte(text), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
			for _, sh := range []string{"go mod init example.com/app", line, "go build ./..."} {
				cmd := exec.Command("sh", "-c", sh)
				cmd.Dir, cmd.Env = app, env
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s: %v\n%s", sh, err, out)
				}
			}
		})
	}
}
