package mcptest

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// tinyModule writes a module holding one main package, whose main.go is
// src, into a new directory named "tiny" under a temporary directory,
// makes that temporary directory the current directory and returns the
// absolute path of "tiny".
func tinyModule(t *testing.T, src string) string {
	t.Helper()
	// Build the module on its own even if the environment names a go.work
	// file.
	t.Setenv("GOWORK", "off")
	root := t.TempDir()
	dir := filepath.Join(root, "tiny")
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/tiny\n\ngo 1.22\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644))
	t.Chdir(root)
	// t.TempDir may lie behind a symbolic link; build reports the path
	// filepath.Abs gives, from the current directory.
	abs, err := filepath.Abs("tiny")
	require.NoError(t, err)
	return abs
}

// took matches the elapsed time build reports, a time.Duration rounded to
// a tenth of a second, such as "0s", "300ms", "1.2s" or "1m2.3s".
const took = `((\d+h)?\d+m)?[\d.]+(ms|s)`

// A build still running after the delay (here 0: at once) says what it
// builds, and then how long it took.
func TestBuildNotice(t *testing.T) {
	abs := tinyModule(t, "package main\n\nfunc main() {}\n")
	var w bytes.Buffer
	bin, out, err := build("./tiny", t.TempDir(), &w, 0)
	require.NoError(t, err, "go build:\n%s", out)
	require.FileExists(t, bin)
	require.Equal(t, "tiny", strings.TrimSuffix(filepath.Base(bin), ".exe"))
	require.Regexp(t, "^"+regexp.QuoteMeta("mcptest: building ./tiny ("+abs+") for the tests; a first build can take a minute...\n")+
		regexp.QuoteMeta("mcptest: built ./tiny in ")+took+"\n$", w.String())
}

// A build that fails after the notice says so, and returns the build's
// output.
func TestBuildNoticeFailure(t *testing.T) {
	abs := tinyModule(t, "package main\n\nfunc main() { undefinedName() }\n")
	var w bytes.Buffer
	_, out, err := build("./tiny", t.TempDir(), &w, 0)
	require.Error(t, err)
	require.Contains(t, string(out), "undefinedName")
	require.Regexp(t, "^"+regexp.QuoteMeta("mcptest: building ./tiny ("+abs+") for the tests; a first build can take a minute...\n")+
		regexp.QuoteMeta("mcptest: building ./tiny failed after ")+took+"\n$", w.String())
}

// A build that ends before the delay prints nothing.
func TestBuildQuiet(t *testing.T) {
	tinyModule(t, "package main\n\nfunc main() {}\n")
	var w bytes.Buffer
	bin, out, err := build("./tiny", t.TempDir(), &w, time.Hour)
	require.NoError(t, err, "go build:\n%s", out)
	require.FileExists(t, bin)
	require.Empty(t, w.String())
}

// An absolute directory is named once.
func TestBuildNoticeAbsolute(t *testing.T) {
	abs := tinyModule(t, "package main\n\nfunc main() {}\n")
	var w bytes.Buffer
	_, out, err := build(abs, t.TempDir(), &w, 0)
	require.NoError(t, err, "go build:\n%s", out)
	require.Regexp(t, "^"+regexp.QuoteMeta("mcptest: building "+abs+" for the tests; a first build can take a minute...\n")+
		regexp.QuoteMeta("mcptest: built "+abs+" in ")+took+"\n$", w.String())
}
