package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startingReplicas is how many replicas TestPostgresReplicasStartTogether
// starts at once.
const startingReplicas = 5

// TestPostgresReplicasStartTogether starts replica processes at the same
// moment on a new, empty database: one creates and fills the tables and
// installs the trigger while the others wait for it, and then every
// replica serves, each seeded row is there once, and a change made with
// psql reaches a client of each replica through the one trigger.
func TestPostgresReplicasStartTogether(t *testing.T) {
	dsn, _ := postgresDatabase(t)
	keys, write := keysFile(t)
	write(newKey())

	replicas := make([]*mcptest.Server, startingReplicas)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range replicas {
		wg.Go(func() {
			<-start
			replicas[i] = mcptest.StartServer(goroutineTB{t}, binPath,
				"-dsn", dsn, "-bus", "postgres", "-cursor-keys", keys)
		})
	}
	close(start) // all at once
	wg.Wait()
	for i, r := range replicas {
		require.NotNil(t, r, "replica %d did not come up", i)
	}

	// One replica filled the tables; the others found them filled.
	filled := 0
	for _, r := range replicas {
		if strings.Contains(r.Stderr.String(), `msg="created and filled the tables" rows=55000`) {
			filled++
		}
	}
	assert.Equal(t, 1, filled, "replicas that filled the tables")

	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	defer db.Close()
	for _, tb := range tables {
		var n, distinct, lowest, highest int64
		require.NoError(t, db.QueryRowContext(t.Context(),
			"SELECT count(*), count(DISTINCT id), min(id), max(id) FROM "+tb.Name).Scan(&n, &distinct, &lowest, &highest))
		assert.Equal(t, []int64{int64(tb.rows), int64(tb.rows), 1, int64(tb.rows)}, []int64{n, distinct, lowest, highest},
			"%s: count, distinct ids, lowest and highest id", tb.Name)
		var triggers int
		require.NoError(t, db.QueryRowContext(t.Context(),
			"SELECT count(*) FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal", tb.Name).Scan(&triggers))
		assert.Equal(t, 1, triggers, "%s: triggers", tb.Name)
	}

	// Every replica serves, and hears of a write made with psql.
	const uri = "db://users/11"
	clients := make([]*mcp.ClientSession, len(replicas))
	notes := make([]*mcptest.Notifications, len(replicas))
	for i, r := range replicas {
		notes[i] = new(mcptest.Notifications)
		clients[i] = mcptest.ConnectHTTP(t, r.URL(mcpPath), "", "2025-11-25", notes[i].ClientOptions(nil))
		require.NoError(t, clients[i].Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}), "replica %d", i)
	}
	name := fmt.Sprintf("psql %d", time.Now().UnixNano())
	notes[0].WaitUpdated(t, uri, func() { psql(t, dsn, "UPDATE users SET name = '"+name+"' WHERE id = 11") })
	for i, c := range clients {
		if i > 0 {
			notes[i].WaitUpdated(t, uri, nil)
		}
		assert.Equal(t, name, readJSON(t, c, uri)["name"], "read through replica %d", i)
	}
}

// A goroutineTB is a test's testing.TB for a goroutine the test started:
// FailNow, Fatal and Fatalf mark the test failed and end the goroutine
// (runtime.Goexit), not the test, which testing.T's own may do only on
// the test's goroutine. The rest is the test's, safe from any goroutine.
type goroutineTB struct{ testing.TB }

func (g goroutineTB) FailNow() {
	g.TB.Fail()
	runtime.Goexit()
}

func (g goroutineTB) Fatal(args ...any) {
	g.TB.Error(args...)
	runtime.Goexit()
}

func (g goroutineTB) Fatalf(format string, args ...any) {
	g.TB.Errorf(format, args...)
	runtime.Goexit()
}

// postgresDatabase returns the DSN of a new, empty database on the server
// MCPRES_TEST_POSTGRES_DSN names, dropped when t ends, and the database's
// name; it skips t without MCPRES_TEST_POSTGRES_DSN.
func postgresDatabase(t *testing.T) (dsn, name string) {
	base := os.Getenv(postgresDSNEnv)
	if base == "" {
		t.Skip("set " + postgresDSNEnv + "=postgres://… to run against Postgres (CI does, with scripts/postgres.sh)")
	}
	admin, err := sql.Open("pgx", base)
	require.NoError(t, err)
	ctx := t.Context()
	require.NoError(t, admin.PingContext(ctx), "connecting to %s", postgresDSNEnv)
	name = fmt.Sprintf("mcpres_records_test_%d", time.Now().UnixNano())
	_, err = admin.ExecContext(ctx, "CREATE DATABASE "+name)
	require.NoError(t, err)
	t.Cleanup(func() { // after the servers using it have stopped
		defer admin.Close()
		_, err := admin.ExecContext(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)")
		require.NoError(t, err)
	})
	u, err := url.Parse(base)
	require.NoError(t, err)
	u.Path = "/" + name
	return u.String(), name
}

// TestFlagsRefused checks that flags that do not go together, or that no
// server could serve with, are refused before anything is created: the
// server exits with a message naming the mistake, and leaves no SQLite
// database behind, neither the -db file nor the default one in the user
// cache directory (here a directory of the test's own), nor anything in
// its working directory. Nothing here reaches Postgres: a -dsn names a
// port nothing listens on.
func TestFlagsRefused(t *testing.T) {
	t.Parallel()
	const nowhere = "postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=1"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bus postgres without dsn", []string{"-bus", "postgres"}, "-bus postgres needs -dsn"},
		{"bus nats without dsn", []string{"-bus", "nats://127.0.0.1:4222"}, "-bus nats://127.0.0.1:4222 needs -dsn"},
		{"bus with db", []string{"-bus", "postgres", "-db", "records.db"}, "-bus postgres needs -dsn"},
		{"unknown bus", []string{"-bus", "kafka://127.0.0.1:9092", "-dsn", nowhere}, `-bus "kafka://127.0.0.1:9092": want nats://HOST:PORT or postgres`},
		{"unknown bus without dsn", []string{"-bus", "redis"}, `-bus "redis": want nats://HOST:PORT or postgres`},
		{"db and dsn", []string{"-db", "records.db", "-dsn", nowhere}, "give -db or -dsn, not both"},
		{"poll", []string{"-poll", "0s"}, "-poll must be positive"},
		{"negative page size", []string{"-page-size", "-1"}, "-page-size -1: want 1 to 10000 (0 means 100)"},
		{"page size too large", []string{"-page-size", "10001"}, "-page-size 10001: want 1 to 10000 (0 means 100)"},
		{"otel", []string{"-otel", "jaeger"}, `-otel "jaeger": want stdout or otlp`},
		{"http without port", []string{"-http", "8080"}, `-http "8080": want HOST:PORT`},
		{"missing cursor keys", []string{"-cursor-keys", "no-such-keys"}, "no-such-keys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			work, cache := t.TempDir(), t.TempDir()
			cmd := exec.Command(binPath, tc.args...)
			cmd.Dir = work
			// The default database is records.db in the mcpres folder of
			// the user cache directory: $XDG_CACHE_HOME, else
			// $HOME/.cache.
			cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache, "HOME="+cache)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "the server must exit with an error:\n%s", out)
			assert.NotZero(t, exit.ExitCode())
			assert.Contains(t, string(out), tc.want)
			assert.NotContains(t, string(out), "created and filled")
			for _, dir := range []string{work, cache} {
				entries, err := os.ReadDir(dir)
				require.NoError(t, err)
				assert.Empty(t, entries, "%s: left behind", dir)
			}
			assert.NoFileExists(t, filepath.Join(work, "records.db"))
			assert.NoFileExists(t, filepath.Join(cache, "mcpres", "records.db"))
		})
	}
}
