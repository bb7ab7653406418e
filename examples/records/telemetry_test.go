package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// exportedSpan is what the stdout exporter writes of a span, as far as the
// test reads it.
type exportedSpan struct {
	Name        string
	SpanContext struct{ TraceID, SpanID string }
	Parent      struct {
		TraceID, SpanID string
		Remote          bool
	}
	SpanKind   int
	Attributes []struct {
		Key   string
		Value struct{ Value any }
	}
}

func (s exportedSpan) attr(key string) any {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value.Value
		}
	}
	return nil
}

// The trace of the README: with -otel stdout, a client's list walk and
// read, each request carrying the client's trace context in _meta, are
// exported as server spans of that trace, children of the client's
// spans, with their page sizes and the row template; the metrics are
// exported when the server exits. Over stdio, where stdout is the
// protocol, they go to stderr.
func TestTelemetryStdout(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(binPath, "-db", seededDB(t), "-page-size", "3", "-otel", "stdout")
	stderr := mcptest.Stderr(t, cmd)
	client := mcp.NewClient(&mcp.Implementation{Name: "mcptest", Version: "v0"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)

	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	parent := func(span string) mcp.Meta { return mcp.Meta{"traceparent": "00-" + trace + "-" + span + "-01"} }
	page, err := cs.ListResources(t.Context(), &mcp.ListResourcesParams{Meta: parent("00f067aa0ba90201")})
	require.NoError(t, err)
	_, err = cs.ListResources(t.Context(), &mcp.ListResourcesParams{Cursor: page.NextCursor, Meta: parent("00f067aa0ba90202")})
	require.NoError(t, err)
	_, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "db://users/42", Meta: parent("00f067aa0ba90203")})
	require.NoError(t, err)
	require.NoError(t, cs.Close(), "server exit") // flushes the exporters

	var spans []exportedSpan
	var metrics []string
	sc := bufio.NewScanner(strings.NewReader(stderr.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, `{"Name"`):
			var s exportedSpan
			require.NoError(t, json.Unmarshal([]byte(line), &s), line)
			spans = append(spans, s)
		case strings.HasPrefix(line, `{"Resource"`):
			metrics = append(metrics, line)
		}
	}
	require.Len(t, spans, 3, stderr.String())
	for i, want := range []struct {
		name, parent string
		entries      float64
	}{{"resources/list", "00f067aa0ba90201", 3}, {"resources/list", "00f067aa0ba90202", 3}, {"resources/read", "00f067aa0ba90203", 1}} {
		s := spans[i]
		assert.Equal(t, want.name, s.Name)
		assert.Equal(t, trace, s.SpanContext.TraceID, "the client's trace")
		assert.Equal(t, want.parent, s.Parent.SpanID)
		assert.True(t, s.Parent.Remote)
		assert.Equal(t, 2, s.SpanKind, "server")
		assert.Equal(t, want.name, s.attr("mcp.method.name"))
		assert.Equal(t, "2025-11-25", s.attr("mcp.protocol.version"))
		assert.Equal(t, "allowed", s.attr("mcpres.decision"))
		assert.Equal(t, want.entries, s.attr("mcpres.entries"))
	}
	read := spans[2]
	assert.Equal(t, "db://users/42", read.attr("mcp.resource.uri"))
	assert.Equal(t, rowTemplate, read.attr("mcpres.resource.template"))
	assert.Equal(t, "match", read.attr("mcpres.mime.check"))
	assert.NotZero(t, read.attr("mcpres.read.bytes"))

	require.NotEmpty(t, metrics, "metrics are exported at exit")
	last := metrics[len(metrics)-1]
	assert.Contains(t, last, `"mcp.server.operation.duration"`)
	assert.Contains(t, last, `"db://{table}/{id}"`)
	assert.NotContains(t, last, `db://users/42`, "metrics never name a URI")
}

// A wrong -otel is refused before anything is served.
func TestTelemetryFlagRefused(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(binPath, "-db", seededDB(t), "-otel", "jaeger").CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), `jaeger`)
	assert.Contains(t, string(out), `want stdout or otlp`)
}

// With -otel otlp, the spans and metrics go over OTLP/HTTP to the
// collector OTEL_EXPORTER_OTLP_ENDPOINT names: here a receiver that
// decodes what it is sent.
func TestTelemetryOTLP(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var spans []string
	var metrics []string
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		switch r.URL.Path {
		case "/v1/traces":
			var req coltrace.ExportTraceServiceRequest
			if proto.Unmarshal(body, &req) != nil {
				http.Error(w, "bad traces", http.StatusBadRequest)
				return
			}
			for _, rs := range req.ResourceSpans {
				for _, ss := range rs.ScopeSpans {
					for _, s := range ss.Spans {
						spans = append(spans, s.Name)
					}
				}
			}
		case "/v1/metrics":
			var req colmetrics.ExportMetricsServiceRequest
			if proto.Unmarshal(body, &req) != nil {
				http.Error(w, "bad metrics", http.StatusBadRequest)
				return
			}
			for _, rm := range req.ResourceMetrics {
				for _, sm := range rm.ScopeMetrics {
					for _, m := range sm.Metrics {
						metrics = append(metrics, m.Name)
					}
				}
			}
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()

	cmd := exec.Command(binPath, "-db", seededDB(t), "-otel", "otlp")
	cmd.Env = append(os.Environ(), "OTEL_EXPORTER_OTLP_ENDPOINT="+collector.URL)
	mcptest.Stderr(t, cmd)
	client := mcp.NewClient(&mcp.Implementation{Name: "mcptest", Version: "v0"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	require.NoError(t, err)
	_, err = cs.ListResources(t.Context(), nil)
	require.NoError(t, err)
	_, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "db://users/42"})
	require.NoError(t, err)
	require.NoError(t, cs.Close(), "server exit") // flushes the exporters

	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"resources/list", "resources/read"}, spans)
	assert.Contains(t, metrics, "mcp.server.operation.duration")
	assert.Contains(t, metrics, "mcpres.resource.read.size")
}
