// Records is an MCP resource server that exposes tens of thousands of
// database rows as resources, not as a query tool, built with mcpres and
// meant to be copied as the starting point of your own.
//
// Every row is a resource db://<table>/<id> (application/json, the row as
// a JSON object), read through one template, db://{table}/{id}, and each
// table's schema is a resource db://<table>/schema. It shows how to:
//
//   - list a large table with a keyset-paginated provider: each page of
//     resources/list is one query, SELECT … WHERE id > ? ORDER BY id
//     LIMIT ?, so walking 50,000 rows never holds more than one page;
//   - read rows through a template without ever putting a client's string
//     into SQL: the table must be one the server knows, the id a positive
//     integer, and anything else is not found;
//   - deliver notifications/resources/updated when a subscribed row
//     changes, whoever changes it: the update_row tool tells the registry
//     at once; on SQLite a poller, running only while someone is
//     subscribed (resource.SubscriptionOptions.OnWatch and OnUnwatch),
//     notices the changes other processes make, and on Postgres a trigger
//     reports them with pg_notify;
//   - run several replicas behind a load balancer: with -bus, each
//     replica's changes reach the subscribers of every other
//     (resource.SubscriptionOptions.Bus), through NATS or Postgres.
//
// By default it serves an embedded SQLite database (the pure-Go
// modernc.org/sqlite, no cgo), created and filled with 50,000 users and
// 5,000 orders on first run, so that from the root of the mcpres
// repository
//
//	go run ./examples/records
//
// works with nothing installed. With -dsn it serves Postgres through pgx,
// creating and filling the tables if they do not exist, under an advisory
// lock, so that replicas started together on an empty database take
// turns:
//
//	go run ./examples/records -dsn postgres://user:pass@127.0.0.1:5432/db
//
// Add -http 127.0.0.1:8080 to serve streamable HTTP on
// http://127.0.0.1:8080/mcp instead of stdio: one URL serves clients of
// every protocol version (serve.ListenAndServe), each receiving the
// updates of what it subscribed to. List cursors are encrypted with the
// keys -cursor-keys (or $MCPRES_CURSOR_KEYS) gives, so that a walk through
// the list survives a restart and reaches every replica; without them a
// random key is made at start-up.
//
// Several replicas share one Postgres database, the cursor keys, and a
// bus:
//
//	go run ./examples/records -dsn postgres://… -http 127.0.0.1:8081 -cursor-keys keys -bus nats://127.0.0.1:4222
//	go run ./examples/records -dsn postgres://… -http 127.0.0.1:8082 -cursor-keys keys -bus nats://127.0.0.1:4222
//
// or -bus postgres on every replica, without a broker; -bus without -dsn
// is refused before anything is created. With -otel stdout
// (or otlp) it exports OpenTelemetry traces and metrics of every
// resource operation (package mcpotel). Logs go to stderr: on stdio, stdout
// carries the protocol. The HTTP server has no authentication and
// update_row writes to the database; keep it on a loopback address.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/mcpres/mcpres/subscribe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// config is what the flags set.
type config struct {
	dbPath     string
	dsn        string
	httpAddr   string
	cursorKeys string
	bus        string
	pageSize   int
	poll       time.Duration
	readOnly   bool
	otel       string
	otelEvery  time.Duration

	observer resource.Observer // what -otel makes: set by run, not by a flag
}

func main() {
	var cfg config
	flag.StringVar(&cfg.dbPath, "db", "", "SQLite database `file`, created and filled if need be (default records.db in the user cache directory's mcpres folder)")
	flag.StringVar(&cfg.dsn, "dsn", "", "serve the Postgres database at `url` (postgres://…) instead of SQLite")
	flag.StringVar(&cfg.httpAddr, "http", "", "serve streamable HTTP on `addr` (such as 127.0.0.1:8080) instead of stdio")
	flag.StringVar(&cfg.cursorKeys, "cursor-keys", "", "read the keys of list cursors from `file`: one base64 key a line, the first encrypting (default $"+cursor.KeysEnv+", else a random key)")
	flag.StringVar(&cfg.bus, "bus", "", "share changes with the other replicas through NATS (`nats://HOST:PORT`) or through Postgres (postgres, the -dsn database); needs -dsn")
	flag.IntVar(&cfg.pageSize, "page-size", 0, "resources/list page size (0 means 100)")
	flag.DurationVar(&cfg.poll, "poll", 500*time.Millisecond, "how often to check subscribed rows for changes made by other processes (SQLite; Postgres reports them through a trigger)")
	flag.BoolVar(&cfg.readOnly, "read-only", false, "do not offer the update_row tool")
	flag.StringVar(&cfg.otel, "otel", "", "export OpenTelemetry traces and metrics: `stdout` (to stdout over HTTP, to stderr on stdio, whose stdout is the protocol) or otlp (OTLP/HTTP, to $OTEL_EXPORTER_OTLP_ENDPOINT, default http://localhost:4318)")
	flag.DurationVar(&cfg.otelEvery, "otel-metrics-every", 10*time.Second, "with -otel, how often to export metrics")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "unexpected arguments %q\n", flag.Args())
		flag.Usage()
		os.Exit(2)
	}
	if err := cfg.check(); err != nil {
		fmt.Fprintf(os.Stderr, "records: %v (records -h lists the flags)\n", err)
		os.Exit(2)
	}

	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(cfg, logger); err != nil {
		logger.Error("server failed", "error", err)
		os.Exit(1)
	}
}

// rowTemplate names every row of every served table.
const rowTemplate = "db://{table}/{id}"

// run serves the database over stdio, or over streamable HTTP if
// cfg.httpAddr is set, until the client hangs up (on stdio) or the process
// is interrupted.
func run(cfg config, logger *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if cfg.otelEvery <= 0 {
		cfg.otelEvery = 10 * time.Second
	}
	// The cursor keys are read before anything is opened: a missing or
	// bad key file must not leave a database behind.
	codec, keysFrom, err := cursor.LoadCodec(cfg.cursorKeys, cursor.KeysEnv, nil)
	if err != nil {
		return err
	}
	cursor.LogKeys(logger, keysFrom, cfg.httpAddr != "", "-cursor-keys FILE or $"+cursor.KeysEnv)
	telemetryOut := io.Writer(os.Stdout)
	if cfg.httpAddr == "" {
		telemetryOut = os.Stderr // stdout carries the protocol
	}
	observer, stopTelemetry, err := telemetry(ctx, cfg.otel, telemetryOut, cfg.otelEvery, logger)
	if err != nil {
		return err
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := stopTelemetry(ctx); err != nil {
			logger.Warn("telemetry not flushed", "error", err)
		}
	}()
	cfg.observer = observer
	var st *store
	if cfg.dsn != "" {
		st, err = openPostgres(cfg.dsn)
	} else {
		st, err = openSQLite(cfg.dbPath)
	}
	if err != nil {
		return err
	}
	defer st.Close()
	start := time.Now()
	n, err := st.setUp(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		logger.Info("created and filled the tables", "rows", n, "took", time.Since(start).Round(time.Millisecond))
	}
	bus, closeBus, err := openBus(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer closeBus() // after the registry has stopped listening

	server, reg, poller, err := newServer(st, codec, bus, cfg, logger)
	if err != nil {
		return err
	}
	defer poller.Close() // after the registry has dropped its subscriptions
	defer reg.Close()    // after the server has stopped
	logger.Info("serving database", "driver", st.dialect, "tables", len(tables))

	if cfg.httpAddr != "" {
		return serve.ListenAndServe(ctx, cfg.httpAddr, server, &serve.Options{Logger: logger, Registry: reg})
	}
	err = server.Run(ctx, &mcp.StdioTransport{})
	if errors.Is(err, context.Canceled) {
		return nil // interrupted
	}
	return err
}

// check refuses flags that do not go together, or that no server could
// run with, before anything is opened or created: a mistake on the
// command line must not leave behind a SQLite database, or tables in a
// Postgres one, that nobody asked for.
func (cfg *config) check() error {
	switch {
	case cfg.dbPath != "" && cfg.dsn != "":
		return errors.New("give -db or -dsn, not both")
	case cfg.bus != "" && cfg.bus != "postgres" && !strings.HasPrefix(cfg.bus, "nats://"):
		return fmt.Errorf("-bus %q: want nats://HOST:PORT or postgres", cfg.bus)
	case cfg.bus != "" && cfg.dsn == "":
		return fmt.Errorf("-bus %s needs -dsn: the replicas share one Postgres database, and a SQLite file is not shared between hosts", cfg.bus)
	case cfg.poll <= 0:
		return errors.New("-poll must be positive")
	case cfg.pageSize < 0 || cfg.pageSize > resource.MaxPageSize:
		return fmt.Errorf("-page-size %d: want 1 to %d (0 means %d)", cfg.pageSize, resource.MaxPageSize, resource.DefaultPageSize)
	case cfg.otel != "" && cfg.otel != "stdout" && cfg.otel != "otlp":
		return fmt.Errorf("-otel %q: want stdout or otlp", cfg.otel)
	}
	if cfg.httpAddr != "" {
		if _, _, err := net.SplitHostPort(cfg.httpAddr); err != nil {
			return fmt.Errorf("-http %q: want HOST:PORT, such as 127.0.0.1:8080 (%w)", cfg.httpAddr, err)
		}
	}
	return nil
}

// newServer returns a server for st's tables, whose list cursors codec
// encrypts (nil for a random key) and whose changes bus shares with the
// other replicas (nil for none), the registry it serves, and the poller
// behind its subscriptions (which runs on SQLite only: on Postgres, the
// trigger reports other writers' changes on the bus). The caller closes
// the registry, then the poller, once the server has stopped.
func newServer(st *store, codec *cursor.Codec, bus subscribe.Bus, cfg config, logger *slog.Logger) (_ *mcp.Server, _ *resource.Registry, _ *poller, err error) {
	// changed tells the registry that a row changed, whoever changed it;
	// the poller reports to the registry, which is made after it.
	var reg *resource.Registry
	changed := func(t *table, id int64) {
		uri, err := rowURI(reg, t, id)
		if err == nil {
			err = reg.Changed(uri)
		}
		if err != nil {
			logger.Error("cannot report a changed row", "table", t.Name, "id", id, "error", err)
		}
	}
	p := newPoller(st, cfg.poll, changed, logger)
	subs := resource.SubscriptionOptions{Bus: bus}
	if st.dialect == "sqlite" {
		// Poll a row only while someone is subscribed to it.
		subs.OnWatch, subs.OnUnwatch = p.watch, p.unwatch
	}
	reg, err = resource.NewRegistry(&resource.Options{
		Logger:        logger,
		PageSize:      cfg.pageSize,
		Cursors:       codec,
		Subscriptions: subs,
		Observer:      cfg.observer,
	})
	if err != nil {
		return nil, nil, nil, err
	}
	defer func() {
		if err != nil {
			reg.Close() // nothing is watched yet: the poller has not started
		}
	}()

	// Rows: one template reads them all, and tells resources/subscribe
	// which exist; one provider per table lists them, in id order
	// (providers are listed in name order).
	err = reg.AddTemplate(&mcp.ResourceTemplate{
		URITemplate: rowTemplate,
		Name:        "row",
		Title:       "Table rows",
		Description: "A row of a table, by table name and integer id, as a JSON object.",
		MIMEType:    "application/json",
	}, st.readRow, resource.WithExists(st.rowExists))
	if err != nil {
		return nil, nil, nil, err
	}
	for _, t := range tables {
		if err := reg.AddProvider("db://"+t.Name+"/", st.lister(reg, t)); err != nil {
			return nil, nil, nil, err
		}
		// The schema: a static resource, which takes precedence over the
		// template for its URI.
		schema := schemaJSON(t)
		err := reg.Add(&mcp.Resource{
			URI:         "db://" + t.Name + "/schema",
			Name:        t.Name + "/schema",
			Title:       "Schema of " + t.Name,
			Description: "The columns of table " + t.Name + ".",
			MIMEType:    "application/json",
			Size:        int64(len(schema)),
		}, resource.Text(schema))
		if err != nil {
			return nil, nil, nil, err
		}
	}

	server, err := reg.NewServer(&mcp.Implementation{Name: "records", Title: "mcpres records", Version: "v0.1.0"}, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	if !cfg.readOnly {
		addUpdateTool(server, st, reg, p, changed)
	}
	return server, reg, p, nil
}

// updateArgs are the arguments of the update_row tool.
type updateArgs struct {
	Table  string `json:"table" jsonschema:"the table: users or orders"`
	ID     int64  `json:"id" jsonschema:"the row's id"`
	Column string `json:"column" jsonschema:"the column to set: name or email (users), item or status (orders)"`
	Value  string `json:"value" jsonschema:"its new value"`
}

// updateResult is what update_row returns.
type updateResult struct {
	URI       string `json:"uri"`
	UpdatedAt string `json:"updated_at"`
}

// addUpdateTool adds update_row, the example's small admin path: it sets a
// column of a row, and reports the change with changed, which tells the
// registry, which notifies the row's subscribers.
func addUpdateTool(server *mcp.Server, st *store, reg *resource.Registry, p *poller, changed func(t *table, id int64)) {
	mcp.AddTool(server, &mcp.Tool{
		Name:        "update_row",
		Description: "Set one text column of a table row; subscribers to the row's resource are notified.",
	}, func(ctx context.Context, req *mcp.CallToolRequest, args updateArgs) (*mcp.CallToolResult, updateResult, error) {
		t, ok := tableByName(args.Table)
		if !ok {
			return nil, updateResult{}, fmt.Errorf("no table %q", args.Table)
		}
		at, err := st.update(ctx, t, args.ID, args.Column, args.Value)
		if errors.Is(err, resource.ErrNotFound) {
			return nil, updateResult{}, fmt.Errorf("no row %d in %s", args.ID, t.Name)
		}
		if err != nil {
			return nil, updateResult{}, err
		}
		uri, err := rowURI(reg, t, args.ID)
		if err != nil {
			return nil, updateResult{}, err
		}
		p.saw(t, args.ID, at) // the poller need not report it again
		changed(t, args.ID)
		return nil, updateResult{URI: uri, UpdatedAt: at}, nil
	})
}

// mcpPath is the path of the MCP endpoint: package serve's default. Every
// other path is 404.
const mcpPath = serve.DefaultPath
