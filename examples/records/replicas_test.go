package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPostgresReplicas runs three replica processes on loopback against
// one Postgres database, sharing changes through NATS (an in-process
// server) and then through Postgres itself, behind a small round-robin
// proxy: a 2026-07-28 client listening through one replica and a
// 2025-11-25 client subscribed on another each receive the update for a
// row changed through the third, and for one changed with psql; a list
// walk goes from replica to replica, and goes on, losing nothing, when a
// replica is killed in the middle of it and the client retries.
func TestPostgresReplicas(t *testing.T) {
	schemaDSN, schema := postgresSchema(t)
	keys, write := keysFile(t)
	write(newKey())
	ns := startNATS(t)

	for _, bus := range []string{ns.ClientURL(), "postgres"} {
		name := "nats"
		if bus == "postgres" {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) {
			var replicas []*mcptest.Server
			for range 3 {
				// One at a time: the first creates and fills the tables.
				replicas = append(replicas, mcptest.StartServer(t, binPath,
					"-dsn", schemaDSN, "-bus", bus, "-cursor-keys", keys, "-page-size", "1000"))
			}
			p := newProxy(t, replicas)
			checkReplicaUpdates(t, p, schema, schemaDSN)
			checkReplicaWalk(t, p, replicas)
		})
	}
}

// checkReplicaUpdates checks that a change made through one replica, or
// with psql, reaches clients of both eras on the two others, and that a
// row inserted or deleted with psql changes their lists.
func checkReplicaUpdates(t *testing.T, p *proxy, schema, dsn string) {
	const uri = "db://users/7"
	listener, subscriber := new(mcptest.Notifications), new(mcptest.Notifications)
	l := mcptest.ConnectHTTP(t, p.pinned(0), "", "2026-07-28", listener.ClientOptions(nil))
	s := mcptest.ConnectHTTP(t, p.pinned(1), "", "2025-11-25", subscriber.ClientOptions(nil))
	w := mcptest.ConnectHTTP(t, p.pinned(2), "", "2025-11-25", nil)
	require.NoError(t, l.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}))
	require.NoError(t, s.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}))

	var name string
	listener.WaitUpdated(t, uri, setName(t, w, 7, &name))
	subscriber.WaitUpdated(t, uri, nil)
	assert.Equal(t, name, readJSON(t, l, uri)["name"], "read through replica 0")
	assert.Equal(t, name, readJSON(t, s, uri)["name"], "read through replica 1")

	name = fmt.Sprintf("psql %d", time.Now().UnixNano())
	listener.WaitUpdated(t, uri, func() { psql(t, dsn, fmt.Sprintf("UPDATE %s.users SET name = '%s' WHERE id = 7", schema, name)) })
	subscriber.WaitUpdated(t, uri, nil)
	assert.Equal(t, name, readJSON(t, l, uri)["name"])

	// A row inserted, then deleted, with psql: the list changed, twice.
	for _, statement := range []string{
		"INSERT INTO %s.users (id, name, email, updated_at) VALUES (900001, 'new', 'new@example.com', 'now')",
		"DELETE FROM %s.users WHERE id = 900001",
	} {
		listener.WaitListChanged(t, func() { psql(t, dsn, fmt.Sprintf(statement, schema)) })
		subscriber.WaitListChanged(t, nil)
	}
	assert.Equal(t, 3, p.served(), "the clients were served by every replica")
}

// checkReplicaWalk walks the whole list through the round-robin path,
// page after page on replica after replica, and kills a replica half-way:
// a page request that fails is retried with the same cursor, and lands on
// another replica.
func checkReplicaWalk(t *testing.T, p *proxy, replicas []*mcptest.Server) {
	cs := mcptest.ConnectHTTP(t, p.roundRobin(), "", "2026-07-28", nil)
	var uris []string
	var cursor string
	retries, failed := 0, 0 // in all, and in a row
	for pages := 0; ; pages++ {
		if pages == 20 {
			replicas[2].Kill()
		}
		res, err := cs.ListResources(t.Context(), &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			retries++
			failed++
			require.Less(t, failed, len(replicas), "page %d: %v", pages, err)
			continue // the same cursor, on the next replica
		}
		failed = 0
		for _, r := range res.Resources {
			uris = append(uris, r.URI)
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	want := len(tables) // the schemas
	for _, tb := range tables {
		want += tb.rows
	}
	assert.Len(t, uris, want, "every resource listed")
	assert.Equal(t, len(uris), len(slices.Compact(slices.Clone(uris))), "no resource listed twice")
	assert.GreaterOrEqual(t, retries, 1, "a page was refused by the killed replica")
	t.Logf("walked %d resources in pages of 1,000 across %d replicas, %d requests retried after replica 2 was killed", len(uris), p.listedBy(), retries)
	assert.GreaterOrEqual(t, p.listedBy(), 3, "list pages came from every replica")
}

// postgresSchema returns the DSN of a new schema in the test database,
// dropped when t ends, and the schema's name; it skips t without
// MCPRES_TEST_POSTGRES_DSN.
func postgresSchema(t *testing.T) (dsn, schema string) {
	base := os.Getenv(postgresDSNEnv)
	if base == "" {
		t.Skip("set " + postgresDSNEnv + "=postgres://… to run against Postgres (CI does, with scripts/postgres.sh)")
	}
	st, err := openPostgres(base)
	require.NoError(t, err)
	ctx := t.Context()
	require.NoError(t, st.db.PingContext(ctx), "connecting to %s", postgresDSNEnv)
	schema = fmt.Sprintf("mcpres_records_test_%d", time.Now().UnixNano())
	_, err = st.db.ExecContext(ctx, "CREATE SCHEMA "+schema)
	require.NoError(t, err)
	t.Cleanup(func() {
		defer st.Close()
		_, err := st.db.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		require.NoError(t, err)
	})
	u, err := url.Parse(base)
	require.NoError(t, err)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), schema
}

// psql runs one SQL statement with psql, as an operator would, or, where
// psql is not installed, through pgx.
func psql(t *testing.T, dsn, statement string) {
	t.Helper()
	if path, err := exec.LookPath("psql"); err == nil {
		u, err := url.Parse(dsn)
		require.NoError(t, err)
		q := u.Query()
		q.Del("search_path") // pgx's, not libpq's; the statement names the schema
		u.RawQuery = q.Encode()
		out, err := exec.Command(path, "-v", "ON_ERROR_STOP=1", "-X", "-q", u.String(), "-c", statement).CombinedOutput()
		require.NoError(t, err, "psql: %s", out)
		return
	}
	t.Logf("psql not found: running %q through pgx", statement)
	st, err := openPostgres(dsn)
	require.NoError(t, err)
	defer st.Close()
	_, err = st.db.ExecContext(t.Context(), statement)
	require.NoError(t, err)
}

// startNATS starts a NATS server on a free loopback port, stopped when t
// ends.
func startNATS(t *testing.T) *natsserver.Server {
	ns, err := natsserver.NewServer(&natsserver.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	require.NoError(t, err)
	go ns.Start()
	require.True(t, ns.ReadyForConnections(10*time.Second), "NATS server did not start")
	t.Cleanup(ns.Shutdown)
	return ns
}

// A proxy stands in front of the replicas, as a load balancer does: on
// /mcp, a request that belongs to a session (Mcp-Session-Id) goes to the
// replica that made the session, and any other to the next replica in
// turn; /r<N>/mcp goes to replica N. A replica that cannot be reached is
// answered with 502, and the client may retry.
type proxy struct {
	url      string
	backends []string

	mu       sync.Mutex
	next     int
	sessions map[string]int         // session ID → replica
	methods  map[int]map[string]int // replica → JSON-RPC method → requests served
}

func newProxy(t *testing.T, replicas []*mcptest.Server) *proxy {
	p := &proxy{sessions: map[string]int{}, methods: map[int]map[string]int{}}
	for _, r := range replicas {
		p.backends = append(p.backends, r.URL(mcpPath))
	}
	hs := httptest.NewServer(p)
	t.Cleanup(hs.Close)
	p.url = hs.URL
	return p
}

// roundRobin is the URL of the round-robin endpoint.
func (p *proxy) roundRobin() string { return p.url + mcpPath }

// pinned is the URL of the endpoint that reaches replica i only.
func (p *proxy) pinned(i int) string { return p.url + "/r" + strconv.Itoa(i) + mcpPath }

// served returns the number of replicas that served a request.
func (p *proxy) served() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.methods)
}

// listedBy returns the number of replicas that served resources/list.
func (p *proxy) listedBy() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, m := range p.methods {
		if m["resources/list"] > 0 {
			n++
		}
	}
	return n
}

// pick chooses the replica for r.
func (p *proxy) pick(r *http.Request) (int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r.URL.Path != mcpPath {
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/r"), mcpPath))
		return n, err == nil && n >= 0 && n < len(p.backends)
	}
	if id := r.Header.Get("Mcp-Session-Id"); id != "" {
		i, ok := p.sessions[id]
		return i, ok
	}
	i := p.next
	p.next = (p.next + 1) % len(p.backends)
	return i, true
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i, ok := p.pick(r)
	if !ok {
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg struct {
		Method string `json:"method"`
	}
	json.Unmarshal(body, &msg) // a GET has no body, a batch no method
	req, err := http.NewRequestWithContext(r.Context(), r.Method, p.backends[i], bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		http.Error(w, "replica unreachable: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	p.mu.Lock()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		p.sessions[id] = i
	}
	if p.methods[i] == nil {
		p.methods[i] = map[string]int{}
	}
	p.methods[i][msg.Method]++
	p.mu.Unlock()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	// Event streams are passed on as they come.
	flusher, _ := w.(http.Flusher)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}
