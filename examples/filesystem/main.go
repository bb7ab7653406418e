// Filesystem is an MCP resource server for the files under one directory,
// built with mcpres, meant to be copied as the starting point of your own.
//
// Every regular file under the root is a resource file:///<path relative
// to the root>, each segment percent-encoded as RFC 3986 requires
// (file:///notes/caf%C3%A9%20menu.md), and every directory a resource
// file:///<path>/ of type inode/directory, whose content is its listing.
// It shows how to:
//
//   - serve a whole tree through one resource template, file:///{+path},
//     with resource.WithSafePaths (a decoded ".." segment, NUL, backslash
//     or absolute path is not found before the read function runs) and
//     every read going through an os.Root, which refuses symbolic links
//     that lead out of the directory;
//   - list it with resource.WithInstances: a keyset-paginated walk through
//     a sorted index of each directory, read once and kept while the
//     directory does not change, in a cache of bounded size (-list-cache),
//     so that a page costs the same in a directory of a thousand files as
//     in one of a million, and a walk lists every file that stays, once,
//     whatever changes around it;
//   - type content with mimetype.Detect, delivering text as text and the
//     rest as base64 blobs;
//   - refuse oversized files with a clear error instead of a huge answer;
//   - back resources/subscribe with fsnotify, watching only what clients
//     subscribe to (resource.SubscriptionOptions.OnWatch and OnUnwatch),
//     accepting a subscription only to a file or directory that exists
//     (resource.WithExists), and send notifications/resources/list_changed
//     when files come and go;
//   - serve streamable HTTP to clients of every protocol version on one
//     URL, /mcp, each receiving its notifications (serve.ListenAndServe);
//   - keep list cursors valid across restarts and replicas with keys from
//     a file or the environment (cursor.LoadCodec).
//
// Run it over stdio, the way MCP hosts launch servers, from the root of
// the mcpres repository:
//
//	go run ./examples/filesystem -root DIR
//
// or over streamable HTTP, at http://127.0.0.1:8080/mcp:
//
//	go run ./examples/filesystem -root DIR -http 127.0.0.1:8080
//
// Logs go to stderr: on stdio, stdout carries the protocol. The HTTP server
// has no authentication; keep it on a loopback address.
//
// Hidden files and directories (a name starting with '.') are never
// served, nor anything a -deny pattern matches; see README.md for the
// flags and what is served.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// config is what the flags set.
type config struct {
	root        string
	httpAddr    string
	cursorKeys  string
	maxSize     int64
	deny        []string
	pageSize    int
	listCache   int64
	listChanged bool
}

// defaultDeny is what -deny defaults to: version control, dependencies,
// and private keys. Hidden files are never served, whatever -deny says.
const defaultDeny = ".git,node_modules,*.key,*.pem"

func main() {
	cfg := config{maxSize: 4 << 20, listCache: defaultListCache}
	flag.StringVar(&cfg.root, "root", ".", "serve the files under `dir`")
	flag.StringVar(&cfg.httpAddr, "http", "", "serve streamable HTTP at http://`addr`/mcp (such as 127.0.0.1:8080), to clients of every protocol version, instead of stdio")
	flag.StringVar(&cfg.cursorKeys, "cursor-keys", "", "read list cursor keys from `file` (one base64 key a line, the first encrypts); default $"+cursor.KeysEnv+", else a random key")
	flag.Var((*byteSize)(&cfg.maxSize), "max-size", "refuse to read files larger than `size` (bytes, or with a KiB, MiB or GiB suffix)")
	deny := flag.String("deny", defaultDeny, "do not serve paths matching these comma-separated path.Match `patterns`, matched against each path segment and the path from the root")
	flag.IntVar(&cfg.pageSize, "page-size", 0, "resources/list page size (0 means 100)")
	flag.Var((*cacheSize)(&cfg.listCache), "list-cache", "keep sorted directory indexes for resources/list in at most `size` bytes of memory (with a KiB, MiB or GiB suffix; 0: keep none, scan each directory at each page)")
	flag.BoolVar(&cfg.listChanged, "list-changed", true, "watch every directory to send notifications/resources/list_changed (false: watch only the directories of subscribed resources)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "unexpected arguments %q; give the directory with -root\n", flag.Args())
		flag.Usage()
		os.Exit(2)
	}
	cfg.deny = splitList(*deny)

	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(cfg, logger); err != nil {
		logger.Error("server failed", "error", err)
		os.Exit(1)
	}
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// run serves the files under cfg.root over stdio, or over streamable HTTP
// if cfg.httpAddr is set, until the client hangs up (on stdio) or the
// process is interrupted.
func run(cfg config, logger *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if cfg.maxSize <= 0 {
		return errors.New("-max-size must be positive")
	}
	// Every replica, and a restarted server, must hold the same keys for
	// a client to go on with a list it began.
	cursors, keysFrom, err := cursor.LoadCodec(cfg.cursorKeys, cursor.KeysEnv, nil)
	if err != nil {
		return err
	}
	cursor.LogKeys(logger, keysFrom, cfg.httpAddr != "", "-cursor-keys FILE or $"+cursor.KeysEnv)
	files, err := newFileServer(cfg.root, cfg.maxSize, cfg.listCache, cfg.deny)
	if err != nil {
		return err
	}
	defer files.Close()
	live, err := newLiveWatcher(files, cfg.listChanged, logger)
	if err != nil {
		return err
	}
	defer live.Close() // last, after the server and the registry: no goroutine outlives run

	reg, err := resource.NewRegistry(&resource.Options{
		Logger:   logger,
		PageSize: cfg.pageSize,
		Cursors:  cursors,
		Subscriptions: resource.SubscriptionOptions{
			// Watch a file only while someone is subscribed to it: the
			// registry records the subscriptions of resources/subscribe
			// and calls OnWatch and OnUnwatch.
			OnWatch:   live.watch,
			OnUnwatch: live.unwatch,
		},
	})
	if err != nil {
		return err
	}
	defer reg.Close() // after the server has stopped; it drops the subscriptions, calling OnUnwatch
	// One template serves the tree: file:///{+path} (see register).
	if err := files.register(reg); err != nil {
		return err
	}
	live.start(reg)

	server, err := reg.NewServer(&mcp.Implementation{Name: "filesystem", Title: "mcpres filesystem", Version: "v0.1.0"}, nil)
	if err != nil {
		return err
	}
	logger.Info("serving files", "root", files.dir, "max_size", cfg.maxSize, "list_cache", cfg.listCache, "deny", cfg.deny)

	if cfg.httpAddr != "" {
		return serve.ListenAndServe(ctx, cfg.httpAddr, server, &serve.Options{Logger: logger, Registry: reg})
	}
	err = server.Run(ctx, &mcp.StdioTransport{})
	if errors.Is(err, context.Canceled) {
		return nil // interrupted
	}
	return err
}

// httpPath is where the HTTP server serves MCP: package serve's default.
const httpPath = serve.DefaultPath

// byteSize is a flag.Value for a size in bytes: a whole number, optionally
// followed by KiB, MiB or GiB (or K, M, G, KB, MB, GB, all powers of 1024).
type byteSize int64

func (b *byteSize) String() string { return strconv.FormatInt(int64(*b), 10) }

func (b *byteSize) Set(s string) error {
	num, unit := s, int64(1)
	upper := strings.ToUpper(strings.TrimSpace(s))
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}} {
		if strings.HasSuffix(upper, u.suffix) {
			num, unit = strings.TrimSpace(upper[:len(upper)-len(u.suffix)]), u.size
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/unit {
		return fmt.Errorf("want a positive size such as 1048576 or 4MiB, got %q", s)
	}
	*b = byteSize(n * unit)
	return nil
}

// cacheSize is a flag.Value for a size in bytes, as byteSize, that may
// also be 0.
type cacheSize int64

func (c *cacheSize) String() string { return strconv.FormatInt(int64(*c), 10) }

func (c *cacheSize) Set(s string) error {
	if strings.TrimSpace(s) == "0" {
		*c = 0
		return nil
	}
	var b byteSize
	if err := b.Set(s); err != nil {
		return fmt.Errorf("want 0 or a positive size such as 64MiB, got %q", s)
	}
	*c = cacheSize(b)
	return nil
}
