// Logs is an MCP resource server that exposes a large log file as slices:
// one service's lines in one 4-hour window of one day, read as
//
//	log://{service}/{date}/{hourRange}
//
// such as log://api/2026-11-20/04-08, where hourRange is one of 00-04,
// 04-08, 08-12, 12-16, 16-20 and 20-24 (UTC; a range holds its start hour
// and excludes its end, so 04:00:00 belongs to 04-08).
//
// It shows how to:
//
//   - list a template's instances with [resource.WithInstances]: every
//     slice that holds at least one line, in key order, with its size,
//     each URI built with [resource.Registry.Expand];
//   - tell subscriptions which instances exist with [resource.WithExists]:
//     a subscription to a slice with no lines (an unknown service, a day
//     or hours the file does not cover) is refused, from the index alone;
//   - complete each template variable with [resource.WithCompleter],
//     narrowing by the variables already chosen: the dates of the chosen
//     service, the hour ranges of the chosen service and date;
//   - serve a read from a small index built by one pass over the file at
//     start: the file is sorted by time, so each window is one contiguous
//     byte span, and a read scans only that span (io.SectionReader over
//     os.File.ReadAt), never the whole file, keeping the requested
//     service's lines. A slice larger than -max-slice (4 MiB) is refused;
//   - follow a file that grows (-follow 1s): poll it, index the lines
//     appended while reads go on, and tell subscribers with
//     [resource.Registry.Changed] which slices changed, and every client
//     with [resource.Registry.NotifyListChanged] that new slices appeared;
//   - serve streamable HTTP with [serve.ListenAndServe], to clients of
//     every protocol version on http://ADDR/mcp;
//   - encrypt list cursors with keys given in a file (-cursor-keys) or in
//     $MCPRES_CURSOR_KEYS, so that a client's walk through the list
//     survives a restart of the server, or reaches another replica.
//
// The file is given with -file; each line is
//
//	2026-11-20T13:04:05Z service level message
//
// (a UTC RFC 3339 timestamp, a service name of letters, digits, '.', '_'
// and '-', a level, a free-text message), sorted by time. Without -file the
// server writes a sample file of three days and three services to a
// temporary directory, and removes it on exit:
//
//	go run ./examples/logs
//	go run ./examples/logs -file /var/log/app.log
//	go run ./examples/logs -http 127.0.0.1:8080
//	go run ./examples/logs -file /var/log/app.log -follow 1s
//
// Over HTTP it serves http://127.0.0.1:8080/mcp. Without -follow the file
// must not change while the server runs: the server reads it once, at
// start, and its slices never change, so a subscriber is never told of an
// update (nor of a change to the list).
//
// With -follow DURATION the server looks at the file every DURATION. Lines
// appended are indexed once complete (a last line without its '\n' waits
// for it), and must go on in time order; each slice that gained lines is
// reported to its subscribers, and new slices to every client as a change
// to the list. A file truncated, rewritten (its first line changed) or
// replaced (rotated: the path names another file) is indexed afresh from
// its start, and every slice reported changed. An appended line out of
// order or malformed stops the indexing there, logged at Error, until the
// file is truncated or replaced; the lines before it are still served.
//
// Logs go to stderr: on stdio, stdout carries the protocol. The HTTP server
// has no authentication; keep it on a loopback address.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// logTemplate is the URI template of a slice.
const logTemplate = "log://{service}/{date}/{hourRange}"

// defaultMaxSlice is the largest slice a read returns, by default.
const defaultMaxSlice = 4 << 20

// config is what the command line chooses.
type config struct {
	httpAddr   string
	file       string
	maxSlice   int64
	pageSize   int
	cursorKeys string
	follow     time.Duration // 0: read the file once
}

func main() {
	var cfg config
	flag.StringVar(&cfg.httpAddr, "http", "", "serve streamable HTTP on `addr` (such as 127.0.0.1:8080), at /mcp, instead of stdio")
	flag.StringVar(&cfg.file, "file", "", "the log `file` to serve, sorted by time; without it, a generated sample")
	flag.Int64Var(&cfg.maxSlice, "max-slice", defaultMaxSlice, "refuse to read a slice of more than `bytes`")
	flag.IntVar(&cfg.pageSize, "page-size", 0, "resources per resources/list page (0: the registry's default, 100)")
	flag.StringVar(&cfg.cursorKeys, "cursor-keys", "", "read the keys of list cursors from `file` (one base64 key a line, the first in use); else $"+cursor.KeysEnv+"; else a random key")
	flag.DurationVar(&cfg.follow, "follow", 0, "look at the file every `duration` (such as 1s) for lines appended, truncation and rotation, and notify clients; 0: read it once, at start")
	flag.Parse()

	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(cfg, logger); err != nil {
		logger.Error("server failed", "error", err)
		os.Exit(1)
	}
}

// run serves the slices of the log file over stdio, or over streamable
// HTTP on cfg.httpAddr if it is set, until the client hangs up (on stdio)
// or the process is interrupted. With cfg.follow set it follows the file
// meanwhile.
func run(cfg config, logger *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if cfg.follow < 0 {
		return fmt.Errorf("-follow %v: want a positive duration, or 0 not to follow", cfg.follow)
	}
	codec, keysFrom, err := cursor.LoadCodec(cfg.cursorKeys, cursor.KeysEnv, nil)
	if err != nil {
		return err
	}
	cursor.LogKeys(logger, keysFrom, cfg.httpAddr != "", "-cursor-keys FILE or $"+cursor.KeysEnv) // a warning over HTTP for a random key
	path := cfg.file
	if path == "" {
		dir, err := os.MkdirTemp("", "mcpres-logs-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "sample.log")
		if err := writeSample(path); err != nil {
			return err
		}
		logger.Info("no -file given; serving a generated sample", "file", path)
	}
	start := time.Now()
	lf, err := openLog(path, cfg.follow > 0)
	if err != nil {
		return err
	}
	defer lf.Close()  // after the registry has closed
	idx := lf.index() // nothing changes it yet
	logger.Info("indexed log file", "file", path, "slices", len(idx.keys),
		"services", len(idx.services), "elapsed", time.Since(start).Round(time.Millisecond))

	reg, err := newRegistry(lf, cfg, codec, logger)
	if err != nil {
		return err
	}
	defer reg.Close() // after the server has stopped
	if cfg.follow > 0 {
		// The file is followed until run returns, once the server has
		// stopped, and before the registry closes.
		logger.Info("following the log file", "file", path, "every", cfg.follow)
		stopFollowing := startFollowing(ctx, lf, reg, cfg.follow, logger)
		defer stopFollowing()
	}
	server, err := reg.NewServer(&mcp.Implementation{Name: "logs", Title: "mcpres log slices", Version: "v0.1.0"}, nil)
	if err != nil {
		return err
	}

	if cfg.httpAddr != "" {
		return serve.ListenAndServe(ctx, cfg.httpAddr, server, &serve.Options{Logger: logger, Registry: reg})
	}
	err = server.Run(ctx, &mcp.StdioTransport{})
	if errors.Is(err, context.Canceled) {
		return nil // interrupted
	}
	return err
}

// newRegistry returns a registry serving the slices of lf, with list
// cursors encrypted by codec. Each request asks lf for its current index.
func newRegistry(lf *logFile, cfg config, codec *cursor.Codec, logger *slog.Logger) (*resource.Registry, error) {
	maxSlice := cfg.maxSlice
	if maxSlice <= 0 {
		maxSlice = defaultMaxSlice
	}
	reg, err := resource.NewRegistry(&resource.Options{Logger: logger, PageSize: cfg.pageSize, Cursors: codec})
	if err != nil {
		return nil, err
	}
	complete := func(variable string) resource.TemplateOption {
		return resource.WithCompleter(variable, func(ctx context.Context, partial string, bound map[string]string) ([]string, error) {
			return lf.index().complete(variable, partial, bound), nil
		})
	}
	err = reg.AddTemplate(&mcp.ResourceTemplate{
		URITemplate: logTemplate,
		Name:        "log-slice",
		Title:       "Log slice",
		Description: "The lines of {service} from {hourRange} (UTC hours, such as 04-08) on {date} (YYYY-MM-DD).",
		MIMEType:    "text/plain",
	}, func(ctx context.Context, req *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
		return readSlice(lf, maxSlice, vars)
	},
		resource.WithInstances(func(ctx context.Context, after string, limit int) ([]cursor.Item[*mcp.Resource], error) {
			idx := lf.index()
			keys := idx.After(after, limit)
			out := make([]cursor.Item[*mcp.Resource], len(keys))
			for i, k := range keys {
				// An index gains slices, and never loses one.
				st, _ := idx.Stat(k)
				res, err := describe(reg, k, st)
				if err != nil {
					return nil, err
				}
				out[i] = cursor.Item[*mcp.Resource]{Key: k.String(), Value: res}
			}
			return out, nil
		}),
		// A subscription is accepted only for a slice that has lines: the
		// index answers without reading the file. A slice that appears
		// as the file grows (-follow) is accepted from then on.
		resource.WithExists(func(ctx context.Context, vars resource.Vars) (bool, error) {
			_, ok := lf.index().lookup(vars)
			return ok, nil
		}),
		complete("service"), complete("date"), complete("hourRange"))
	if err != nil {
		reg.Close()
		return nil, err
	}
	return reg, nil
}

// sliceURI returns the URI of slice k, which reg builds from the template:
// the URI the listing gives, and follow reports changed.
func sliceURI(reg *resource.Registry, k sliceKey) (string, error) {
	// Expand percent-encodes each value as a client sends it. (A service
	// name is made of characters no URI encodes, so concatenation would
	// do today; Expand stays right if the names allowed grow.)
	return reg.Expand(logTemplate, "service", k.service, "date", k.date, "hourRange", hourRanges[k.hr])
}

// describe returns the listing entry of slice k.
func describe(reg *resource.Registry, k sliceKey, st sliceStat) (*mcp.Resource, error) {
	r := hourRanges[k.hr]
	uri, err := sliceURI(reg, k)
	if err != nil {
		return nil, err
	}
	return &mcp.Resource{
		URI:         uri,
		Name:        k.String(),
		Title:       fmt.Sprintf("%s logs, %s %s:00-%s:00 UTC", k.service, k.date, r[:2], r[3:]),
		Description: fmt.Sprintf("%d lines of %s", st.lines, k.service),
		MIMEType:    "text/plain",
		Size:        st.size,
	}, nil
}

// lookup returns the key of the slice that vars, the variables of
// log://{service}/{date}/{hourRange}, name, and whether it exists: false
// for a service with no lines, a malformed date or range, or a slice with
// no lines. The index holds only slices of well-formed keys, so one look
// at it answers for all of them.
func (x *Index) lookup(vars resource.Vars) (sliceKey, bool) {
	hr := rangeIndex(vars.Get("hourRange"))
	if hr < 0 {
		return sliceKey{}, false
	}
	k := sliceKey{service: vars.Get("service"), window: window{date: vars.Get("date"), hr: hr}}
	_, ok := x.Stat(k)
	return k, ok
}

// readSlice reads log://{service}/{date}/{hourRange} from lf. A slice that
// does not exist (see Index.lookup) is not found.
func readSlice(lf *logFile, maxSlice int64, vars resource.Vars) (*mcp.ReadResourceResult, error) {
	text, ok, err := lf.read(vars, maxSlice)
	if !ok {
		return nil, resource.ErrNotFound
	}
	var tooLarge *SliceTooLargeError
	if errors.As(err, &tooLarge) {
		// Sent to the client as is: it says what to do.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: tooLarge.Error()}
	}
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: string(text)}}}, nil
}

// writeSample writes a sample log file at path: three days, three
// services, a line every few seconds to minutes (some thousands of lines),
// the same every time.
func writeSample(path string) error {
	services := []string{"api", "db", "worker"}
	levels := []string{"INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR"}
	messages := []string{
		"request served in %d ms",
		"cache miss for key user:%d",
		"connection pool at %d%%",
		"job %d finished",
		"retrying after %d ms",
		"slow query took %d ms",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var b []byte
	t := time.Date(2026, 11, 18, 0, 0, 0, 0, time.UTC)
	end := t.AddDate(0, 0, 3)
	for t.Before(end) {
		svc := services[rng.IntN(len(services))]
		b = fmt.Appendf(b, "%s %s %s ", t.Format(time.RFC3339), svc, levels[rng.IntN(len(levels))])
		b = fmt.Appendf(b, messages[rng.IntN(len(messages))]+"\n", rng.IntN(1000))
		t = t.Add(time.Duration(1+rng.IntN(90)) * time.Second)
	}
	return os.WriteFile(path, b, 0o644)
}
