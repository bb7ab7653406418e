package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests of this file audit servers nobody here wrote, at pinned
// versions: go-sdk's and mcp-go's examples, built from the module cache
// (or the module proxy), and the TypeScript SDK's
// @modelcontextprotocol/server-everything, installed with npm where Node
// is. Each is audited at every version, over each transport it serves, and
// makes no MUST finding; what it breaks, the test names, with the clause
// that makes it a finding (see the table of docs/auditing.md). A server
// that cannot be built or installed here (no network, no cache, no Node)
// is skipped, saying why.

// installGo builds the main package pkg@version, outside this module, and
// returns the binary; it skips t if go cannot. The binary goes to a
// directory of the user's cache kept for pkg@version (cacheDir), so that a
// later run finds it up to date and does not link it again.
func installGo(t *testing.T, pkg string) string {
	t.Helper()
	dir := cacheDir(t, "go", pkg)
	cmd := exec.Command("go", "install", pkg)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "GOBIN="+dir, "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("cannot build %s here (no module cache, no proxy?): %v\n%s", pkg, err, out)
	}
	name, _, _ := strings.Cut(path.Base(pkg), "@")
	return filepath.Join(dir, name)
}

// cacheDir returns a directory of the user's cache for the tests of
// this file, named by kind and the hash of key (a pinned version, the
// files an install is made of), made if it is missing; without a user's
// cache, a directory of t's.
func cacheDir(t *testing.T, kind, key string) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		return t.TempDir()
	}
	sum := sha256.Sum256([]byte(key))
	dir := filepath.Join(cache, "mcpres", "mcpaudit-test", kind, hex.EncodeToString(sum[:8]))
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// npmInstall runs npm install in a directory holding files (name to
// content), with args, and returns the directory; it skips t if npm
// cannot. The directory is one of the user's cache, kept for files and
// args: a later run, or a test of this run, that installs the same finds
// it installed. An install is made in a directory of its own and renamed
// into place once whole, so a directory found is a whole install.
func npmInstall(t *testing.T, npm string, files map[string][]byte, args ...string) string {
	t.Helper()
	key := strings.Join(args, "\x00")
	for _, name := range slices.Sorted(maps.Keys(files)) {
		key += "\x00" + name + "\x00" + string(files[name])
	}
	parent := cacheDir(t, "npm", key)
	dir := filepath.Join(parent, "install")
	if _, err := os.Stat(dir); err == nil {
		return dir
	}
	tmp, err := os.MkdirTemp(parent, "installing-")
	require.NoError(t, err)
	defer os.RemoveAll(tmp)
	for name, data := range files {
		require.NoError(t, os.WriteFile(filepath.Join(tmp, name), data, 0o644))
	}
	install := exec.Command(npm, append([]string{"install", "--no-audit", "--no-fund", "--silent", "--prefix", tmp}, args...)...)
	if out, err := install.CombinedOutput(); err != nil {
		t.Skipf("cannot npm install %q here (no registry?): %v\n%s", args, err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(dir); statErr != nil {
			t.Fatal(err) // not that another test renamed its install first
		}
	}
	return dir
}

// startEnv starts bin with args and env, which make it serve HTTP at
// addr, and waits until addr accepts connections. It kills it when t
// ends.
func startEnv(t *testing.T, addr string, env []string, bin string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = mcptest.Stderr(t, cmd)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	// Real clock: a server process we did not write says nothing when it
	// listens, so its port is polled.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		require.True(t, time.Now().Before(deadline), "%s does not listen at %s", bin, addr)
	}
}

// nodeAndNPM returns the paths of node and npm; it skips t if either is
// missing.
func nodeAndNPM(t *testing.T) (node, npm string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node here")
	}
	npm, err = exec.LookPath("npm")
	if err != nil {
		t.Skip("no npm here")
	}
	return node, npm
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	return mcptest.FreePort(t)
}

// audits runs mcpaudit with args and -format json, and returns the exit
// code and, for each audit ("transport asked→negotiated"), the rules it
// found broken, as "SEVERITY rule", sorted; and what each skipped.
func audits(t *testing.T, args ...string) (int, map[string][]string, map[string][]string) {
	t.Helper()
	codes, found, skipped := auditsTogether(t, args)
	return codes[0], found, skipped
}

// auditsTogether runs mcpaudit with each of argss and -format json, all at
// once, and returns the exit codes, in the order of argss, and what their
// audits found and skipped, as audits does. Audits with a process of
// their own each, that have nothing to share, can so wait on -wait's clock
// together.
func auditsTogether(t *testing.T, argss ...[]string) ([]int, map[string][]string, map[string][]string) {
	t.Helper()
	runs := make([]outcome, len(argss))
	together(len(argss), func(i int) {
		runs[i] = audited(append([]string{"-format", "json"}, argss[i]...)...)
	})
	return parseAudits(t, runs)
}

// parseAudits returns the exit codes of runs of mcpaudit with -format
// json, and what their audits found and skipped, as audits does.
func parseAudits(t *testing.T, runs []outcome) ([]int, map[string][]string, map[string][]string) {
	t.Helper()
	codes := make([]int, len(runs))
	found, skipped := map[string][]string{}, map[string][]string{}
	for i, r := range runs {
		codes[i] = r.code
		var got struct {
			Audits []struct {
				Transport, Asked, Error string
				Report                  *struct {
					Protocol string
					Skipped  []string
					Findings []struct{ Rule, Severity, Target, Seen string }
				}
			}
		}
		require.NoError(t, json.Unmarshal([]byte(r.out), &got), "%s\n%s", r.out, r.stderr)
		for _, a := range got.Audits {
			require.Empty(t, a.Error, r.stderr)
			key := fmt.Sprintf("%s %s→%s", a.Transport, a.Asked, a.Report.Protocol)
			require.NotContains(t, found, key, "two audits of %s", key)
			var rules []string
			for _, f := range a.Report.Findings {
				assert.NotEqual(t, "MUST", f.Severity, "%s: %s %s: %s", key, f.Rule, f.Target, f.Seen)
				if r := f.Severity + " " + f.Rule; !slices.Contains(rules, r) {
					rules = append(rules, r)
				}
			}
			slices.Sort(rules)
			found[key], skipped[key] = rules, a.Report.Skipped
		}
	}
	return codes, found, skipped
}

// go-sdk's examples: "everything" over stdio and HTTP, and
// "sequentialthinking" over stdio.
func TestGoSDKExamples(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds go-sdk's examples")
	}
	everything := installGo(t, "github.com/modelcontextprotocol/go-sdk/examples/server/everything@v1.8.0")
	addr := freeAddr(t)
	startEnv(t, addr, nil, everything, "-http", addr) // it does not stop cleanly on an interrupt, as mcptest.StartHTTP wants
	url := "http://" + addr + "/"
	code, found, _ := audits(t, "-protocol", "all", "-url", url, "--", everything)
	assert.Equal(t, 0, code)
	// It completes a variable its template does not have (ADVICE: no
	// version forbids it), and answers a resource not found with -32602,
	// where 2025-11-25 says -32002 (SHOULD).
	unknown := "ADVICE complete.unknown-argument"
	wrongCode := "SHOULD notfound.code"
	assert.Equal(t, map[string][]string{
		"stdio 2025-06-18→2025-06-18": {unknown},
		"stdio 2025-11-25→2025-11-25": {unknown, wrongCode},
		"stdio 2026-07-28→2026-07-28": {unknown},
		"http 2025-06-18→2025-06-18":  {unknown},
		"http 2025-11-25→2025-11-25":  {unknown, wrongCode},
		// Its stateful HTTP handler answers 2026-07-28 at 2025-11-25.
		"http 2026-07-28→2025-11-25": {unknown, wrongCode},
	}, found)

	thinking := installGo(t, "github.com/modelcontextprotocol/go-sdk/examples/server/sequentialthinking@v1.8.0")
	code, found, _ = audits(t, "-protocol", "all", "--", thinking)
	assert.Equal(t, 0, code)
	assert.Equal(t, map[string][]string{
		"stdio 2025-06-18→2025-06-18": nil,
		"stdio 2025-11-25→2025-11-25": {wrongCode},
		"stdio 2026-07-28→2026-07-28": nil,
	}, found)
}

// mcp-go's examples: "everything" over stdio, "conformance" over HTTP.
func TestMCPGoExamples(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds mcp-go's examples")
	}
	everything := installGo(t, "github.com/mark3labs/mcp-go/examples/everything@v1.2.1")
	conformance := installGo(t, "github.com/mark3labs/mcp-go/examples/conformance@v1.2.1")
	addr := freeAddr(t)
	startEnv(t, addr, []string{"CONFORMANCE_ADDR=" + addr}, conformance)
	code, found, _ := audits(t, "-protocol", "all", "-url", "http://"+addr+"/mcp", "--", everything)
	assert.Equal(t, 0, code)
	// Its cursors are the base64 of a name, and take any: base64 of "3"
	// is a position (ADVICE). Its not-found error has no data (ADVICE:
	// only the example has it).
	want := []string{"ADVICE cursor.forgeable", "ADVICE notfound.data"}
	assert.Equal(t, map[string][]string{
		"stdio 2025-06-18→2025-06-18": want,
		"stdio 2025-11-25→2025-11-25": want,
		"stdio 2026-07-28→2026-07-28": want,
		"http 2025-06-18→2025-06-18":  want,
		"http 2025-11-25→2025-11-25":  want,
		"http 2026-07-28→2026-07-28":  want,
	}, found)
}

// The TypeScript SDK's server-everything, over stdio and HTTP, with its
// tools as the changes: toggle-subscriber-updates sends an update to each
// subscription at once, gzip-file-as-resource adds a resource.
func TestServerEverything(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("installs @modelcontextprotocol/server-everything")
	}
	node, npm := nodeAndNPM(t)
	dir := npmInstall(t, npm, nil, "@modelcontextprotocol/server-everything@2026.8.31")
	server := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	addr := freeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	startEnv(t, addr, []string{"PORT=" + port}, node, server, "streamableHttp")

	// Over HTTP and over stdio at once: the HTTP audits share a server,
	// the stdio ones start their own.
	flags := []string{"-protocol", "all", "-wait", "3s",
		"-change", "tool:toggle-subscriber-updates",
		"-list-change", `tool:gzip-file-as-resource {"name": "audit.gz", "data": "data:text/plain;base64,aGVsbG8="}`}
	codes, found, skipped := auditsTogether(t,
		append(slices.Clone(flags), "-url", "http://"+addr+"/mcp"),
		append(slices.Clone(flags), "--", node, server, "stdio"))
	assert.Equal(t, []int{0, 0}, codes)
	// It answers any cursor, garbage too, with the first page (SHOULD);
	// a string that is not a URI with -32603 (ADVICE); a resource not
	// found with -32602, without data: at 2025-11-25 the code is the
	// finding (SHOULD), at 2025-06-18, whose page says -32602, the data
	// (ADVICE). It speaks no 2026-07-28: asked for it, it answers at
	// 2025-11-25.
	at20250618 := []string{"ADVICE notfound.data", "ADVICE notfound.malformed-uri", "SHOULD cursor.invalid"}
	at20251125 := []string{"ADVICE notfound.malformed-uri", "SHOULD cursor.invalid", "SHOULD notfound.code"}
	assert.Equal(t, map[string][]string{
		"stdio 2025-06-18→2025-06-18": at20250618,
		"stdio 2025-11-25→2025-11-25": at20251125,
		"stdio 2026-07-28→2025-11-25": at20251125,
		"http 2025-06-18→2025-06-18":  at20250618,
		"http 2025-11-25→2025-11-25":  at20251125,
		"http 2026-07-28→2025-11-25":  at20251125,
	}, found)
	for key, s := range skipped {
		assert.Empty(t, s, "%s: delivery and list changes were checked", key)
	}
}

// Resource servers written with the TypeScript SDK (1.32.2, from npm) as
// its docs write them (testdata/typescript): the high-level McpServer and
// the low-level Server, each over stdio and streamable HTTP, with
// subscriptions and list changes made by their tools touch and add. The
// SDK speaks no 2026-07-28: asked for it, they answer at 2025-11-25.
func TestTypeScriptSDK(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("installs @modelcontextprotocol/sdk")
	}
	node, npm := nodeAndNPM(t)
	files := map[string][]byte{}
	for _, name := range []string{"package.json", "serve.mjs", "mcpserver.mjs", "lowlevel.mjs"} {
		data, err := os.ReadFile(filepath.Join("testdata", "typescript", name))
		require.NoError(t, err)
		files[name] = data
	}
	dir := npmInstall(t, npm, files)
	// Both answer a resource not found with -32602, where 2025-11-25 says
	// -32002 (SHOULD), and at 2025-06-18, whose page says -32602, without
	// the data of its example (ADVICE, McpServer). McpServer lists
	// resources and templates without looking at the cursor, so a cursor
	// it never gave gets the first page, not -32602 (SHOULD), and a string
	// that is not a URI fails its URL parser, -32603 (ADVICE). The
	// low-level server pages its resources/list with opaque cursors and
	// refuses others, but its resources/templates/list, one page, ignores
	// the cursor as McpServer's does (SHOULD).
	cursors := "SHOULD cursor.invalid"
	code := "SHOULD notfound.code"
	cases := []struct {
		server string
		want   map[string][]string // by version asked→negotiated
	}{
		{"mcpserver.mjs", map[string][]string{
			"2025-06-18→2025-06-18": {"ADVICE notfound.data", "ADVICE notfound.malformed-uri", cursors},
			"2025-11-25→2025-11-25": {"ADVICE notfound.malformed-uri", cursors, code},
			"2026-07-28→2025-11-25": {"ADVICE notfound.malformed-uri", cursors, code},
		}},
		{"lowlevel.mjs", map[string][]string{
			"2025-06-18→2025-06-18": {cursors},
			"2025-11-25→2025-11-25": {cursors, code},
			"2026-07-28→2025-11-25": {cursors, code},
		}},
	}
	// Each server over HTTP and over stdio, all at once: each HTTP server
	// is the audits' of one server.
	flags := []string{"-protocol", "all", "-wait", "3s",
		"-change", `tool:touch {"uri": "{uri}"}`, "-list-change", "tool:add"}
	var argss [][]string
	for _, c := range cases {
		server := filepath.Join(dir, c.server)
		addr := freeAddr(t)
		_, port, _ := net.SplitHostPort(addr)
		startEnv(t, addr, nil, node, server, "http", port)
		argss = append(argss,
			append(slices.Clone(flags), "-format", "json", "-url", "http://"+addr+"/mcp"),
			append(slices.Clone(flags), "-format", "json", "--", node, server, "stdio"))
	}
	runs := make([]outcome, len(argss))
	together(len(argss), func(i int) { runs[i] = audited(argss[i]...) })
	for i, c := range cases {
		t.Run(c.server, func(t *testing.T) {
			exits, found, skipped := parseAudits(t, runs[2*i:2*i+2])
			assert.Equal(t, []int{0, 0}, exits)
			want := map[string][]string{}
			for key, rules := range c.want {
				want["stdio "+key] = rules
				want["http "+key] = rules
			}
			assert.Equal(t, want, found)
			for key, s := range skipped {
				assert.Empty(t, s, "%s: delivery and list changes were checked", key)
			}
		})
	}
}
