package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/mimetype"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file keeps the listing resources/list had before directory
// indexes (commit c1c40cd), word for word but for its names, as the
// baseline of the benchmarks in bench_test.go: each page reads and sorts
// every directory on its way, then stats and sniffs its entries through
// the root.

// baselineList is the old fileServer.list.
func baselineList(s *fileServer) resource.ListFunc {
	return func(ctx context.Context, after string, limit int) ([]cursor.Item[*mcp.Resource], error) {
		w := &baselineWalker{s: s, ctx: ctx, after: after, limit: limit}
		if err := w.walk(""); err != nil && !errors.Is(err, errPageFull) {
			return nil, err
		}
		return w.items, nil
	}
}

type baselineEntry struct {
	name string
	key  string
	dir  bool
	link bool
}

func baselineEntries(s *fileServer, rel string) ([]baselineEntry, error) {
	f, err := s.root.Open(osName(rel))
	if err != nil {
		return nil, err
	}
	des, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return nil, err
	}
	out := make([]baselineEntry, 0, len(des))
	for _, de := range des {
		name := de.Name()
		if !s.allowed(joinRel(rel, name)) {
			continue
		}
		e := baselineEntry{name: name, key: name}
		switch t := de.Type(); {
		case t.IsDir():
			e.dir, e.key = true, name+"/"
		case t&fs.ModeSymlink != 0:
			e.link = true
		case !t.IsRegular():
			continue
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b baselineEntry) int { return strings.Compare(a.key, b.key) })
	return out, nil
}

type baselineWalker struct {
	s     *fileServer
	ctx   context.Context
	after string
	limit int
	items []cursor.Item[*mcp.Resource]
}

func (w *baselineWalker) walk(prefix string) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	rel := strings.TrimSuffix(prefix, "/")
	entries, err := baselineEntries(w.s, rel)
	if err != nil {
		if prefix == "" {
			return err
		}
		return nil
	}
	i, _ := slices.BinarySearchFunc(entries, w.after, func(e baselineEntry, after string) int {
		if prefix+e.key <= after {
			return -1
		}
		return 1
	})
	if i > 0 {
		if e := entries[i-1]; e.dir && strings.HasPrefix(w.after, prefix+e.key) {
			if err := w.walk(prefix + e.key); err != nil {
				return err
			}
		}
	}
	for _, e := range entries[i:] {
		child := prefix + e.name
		uri, err := w.s.uri(child, e.dir)
		if err != nil {
			continue
		}
		if e.dir {
			if err := w.emitDir(child, uri); err != nil {
				return err
			}
			if err := w.walk(child + "/"); err != nil {
				return err
			}
		} else if err := w.emitFile(child, uri); err != nil {
			return err
		}
	}
	return nil
}

func (w *baselineWalker) add(key string, r *mcp.Resource) error {
	w.items = append(w.items, cursor.Item[*mcp.Resource]{Key: key, Value: r})
	if len(w.items) >= w.limit {
		return errPageFull
	}
	return nil
}

func (w *baselineWalker) emitDir(rel, uri string) error {
	fi, err := w.s.statDir(rel)
	if err != nil {
		return nil
	}
	return w.add(rel+"/", &mcp.Resource{
		URI:         uri,
		Name:        rel + "/",
		Title:       path.Base(rel),
		MIMEType:    mimetype.Directory,
		Annotations: lastModified(fi.ModTime()),
	})
}

func (w *baselineWalker) emitFile(rel, uri string) error {
	r, err := baselineDescribeFile(w.s, rel, uri)
	if err != nil {
		return nil
	}
	return w.add(rel, r)
}

func baselineDescribeFile(s *fileServer, rel, uri string) (*mcp.Resource, error) {
	fi, err := s.statFile(rel)
	if err != nil {
		return nil, err
	}
	f, err := s.root.Open(osName(rel))
	if err != nil {
		return nil, err
	}
	var buf [sniffLen]byte
	n, err := io.ReadFull(f, buf[:])
	f.Close()
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, err
	}
	mt, _ := mimetype.Detect(path.Base(rel), buf[:n])
	return &mcp.Resource{
		URI:         uri,
		Name:        rel,
		Title:       path.Base(rel),
		MIMEType:    mt,
		Size:        fi.Size(),
		Annotations: lastModified(fi.ModTime()),
	}, nil
}

// baselineServerArg, as the test binary's first argument, makes it serve
// the baseline over stdio instead of running tests (see TestMain): the
// same registry, template and reads as the real server, with the old
// listing, so that benchmarks drive both through the same protocol.
const baselineServerArg = "-filesystem-baseline-server"

// serveBaseline serves the files under the -root given in args over
// stdio, with baselineList, until the client hangs up, and returns the
// exit code: 2 for bad arguments, 1 if serving fails.
func serveBaseline(args []string) int {
	fset := flag.NewFlagSet("baseline", flag.ContinueOnError)
	root := fset.String("root", ".", "serve the files under `dir`")
	pageSize := fset.Int("page-size", 0, "resources/list page size (0 means 100)")
	if err := fset.Parse(args); err != nil {
		return 2
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := runBaseline(*root, *pageSize, logger); err != nil {
		logger.Error("baseline server failed", "error", err)
		return 1
	}
	return 0
}

func runBaseline(root string, pageSize int, logger *slog.Logger) error {
	files, err := newFileServer(root, 4<<20, 0, splitList(defaultDeny))
	if err != nil {
		return err
	}
	defer files.Close()
	reg, err := resource.NewRegistry(&resource.Options{Logger: logger, PageSize: pageSize})
	if err != nil {
		return err
	}
	defer reg.Close()
	files.reg = reg
	if err := reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: uriTemplate, Name: "file"}, files.read,
		resource.WithSafePaths(), resource.WithInstances(baselineList(files))); err != nil {
		return err
	}
	server, err := reg.NewServer(&mcp.Implementation{Name: "filesystem-baseline", Version: "v0"}, nil)
	if err != nil {
		return err
	}
	if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("serving: %w", err)
	}
	return nil
}
