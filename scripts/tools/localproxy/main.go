// Command localproxy writes a Go module proxy, as a directory that
// GOPROXY=file://DIR serves, holding every module of this repository at
// every version its tags name, and at one would-be version not yet tagged.
// It lets CI and the release script fetch the modules exactly as users
// will, without publishing them.
//
// Usage:
//
//	localproxy -repo DIR -out DIR [-version vX.Y.Z] [-rev REV]
//
// The modules are those the repository's go.work uses. A module at
// directory d is released by tags d/vX.Y.Z (the core by vX.Y.Z), as the
// go command expects. For each module, each such tag becomes a version,
// made from the tagged commit; and -version, if that module has no tag
// for it, is made from -rev (HEAD if empty), as if the tag were there.
//
// Each version has the files the go command reads (the module proxy
// protocol, go help goproxy): @v/list, and VERSION.info, .mod and .zip,
// the zip made by golang.org/x/mod/zip from the commit's tree, as the go
// command itself makes one from a repository. Its hash is the one users will get.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	"golang.org/x/mod/zip"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("localproxy: ")
	repo := flag.String("repo", ".", "the repository's root")
	out := flag.String("out", "", "the proxy directory to write (required)")
	version := flag.String("version", "", "a would-be version, made from -rev for each module not tagged with it")
	rev := flag.String("rev", "HEAD", "the commit a would-be version is made from")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if *version != "" && (!semver.IsValid(*version) || semver.Canonical(*version) != *version) {
		log.Fatalf("-version %q is not a canonical semantic version (vX.Y.Z)", *version)
	}
	root, err := filepath.Abs(*repo)
	if err != nil {
		log.Fatal(err)
	}
	dirs, err := moduleDirs(root)
	if err != nil {
		log.Fatal(err)
	}
	tags, err := git(root, "tag", "--list")
	if err != nil {
		log.Fatal(err)
	}
	for _, dir := range dirs {
		if err := writeModule(root, *out, dir, strings.Fields(tags), *version, *rev); err != nil {
			log.Fatal(err)
		}
	}
}

// moduleDirs returns the directories, relative to root and slash-separated,
// of the modules go.work uses ("" for the root).
func moduleDirs(root string) ([]string, error) {
	src, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		return nil, err
	}
	wf, err := modfile.ParseWork("go.work", src, nil)
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, u := range wf.Use {
		d := path.Clean(filepath.ToSlash(u.Path))
		if d == "." {
			d = ""
		}
		dirs = append(dirs, d)
	}
	return dirs, nil
}

// writeModule writes the versions of the module at dir.
func writeModule(root, out, dir string, tags []string, wouldBe, rev string) error {
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	// version -> the commit it is made from
	versions := map[string]string{}
	for _, tag := range tags {
		v, ok := strings.CutPrefix(tag, prefix)
		if ok && semver.IsValid(v) && !strings.Contains(v, "/") {
			versions[v] = "refs/tags/" + tag
		}
	}
	if _, tagged := versions[wouldBe]; wouldBe != "" && !tagged {
		versions[wouldBe] = rev
	}
	if len(versions) == 0 {
		return nil
	}
	gomod, err := git(root, "show", rev+":"+prefix+"go.mod")
	if err != nil {
		return err
	}
	modPath := modfile.ModulePath([]byte(gomod))
	if modPath == "" {
		return fmt.Errorf("%sgo.mod at %s names no module", prefix, rev)
	}
	escaped, err := module.EscapePath(modPath)
	if err != nil {
		return err
	}
	vdir := filepath.Join(out, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return err
	}
	var list []string
	for v, commit := range versions {
		if err := writeVersion(root, vdir, prefix, module.Version{Path: modPath, Version: v}, commit); err != nil {
			return fmt.Errorf("%s@%s: %w", modPath, v, err)
		}
		list = append(list, v)
	}
	semver.Sort(list)
	return os.WriteFile(filepath.Join(vdir, "list"), []byte(strings.Join(list, "\n")+"\n"), 0o644)
}

// writeVersion writes the .info, .mod and .zip of one version, made from
// commit.
func writeVersion(root, vdir, prefix string, m module.Version, commit string) error {
	gomod, err := git(root, "show", commit+":"+prefix+"go.mod")
	if err != nil {
		return err
	}
	if got := modfile.ModulePath([]byte(gomod)); got != m.Path {
		return fmt.Errorf("go.mod at %s names module %q", commit, got)
	}
	when, err := git(root, "log", "-1", "--format=%cI", commit)
	if err != nil {
		return err
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(when))
	if err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{m.Version, t.UTC()})
	if err != nil {
		return err
	}
	// The commit's tree, as git archive gives it (what the go command
	// fetches from a repository), from which zip.CreateFromDir leaves out
	// nested modules and whatever else a module zip may not hold.
	// zip.CreateFromVCS would do the same but needs a .git directory, which
	// a worktree of the repository does not have.
	tree, err := os.MkdirTemp("", "localproxy-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tree)
	archive := exec.Command("sh", "-c", `git -C "$1" archive --format=tar "$2" | tar -x -C "$3"`, "sh", root, commit, tree)
	if out, err := archive.CombinedOutput(); err != nil {
		return fmt.Errorf("git archive %s: %v: %s", commit, err, out)
	}
	var z bytes.Buffer
	if err := zip.CreateFromDir(&z, m, filepath.Join(tree, filepath.FromSlash(prefix))); err != nil {
		return err
	}
	base := filepath.Join(vdir, m.Version)
	for ext, data := range map[string][]byte{".info": info, ".mod": []byte(gomod), ".zip": z.Bytes()} {
		if err := os.WriteFile(base+ext, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// git runs git in dir and returns what it printed.
func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	return string(out), nil
}
