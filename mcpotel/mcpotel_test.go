package mcpotel_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/mcpres/mcpres/mcpotel"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/mcpres/mcpres/subscribe"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/time/rate"
)

// telemetry is what a test's Observer records into.
type telemetry struct {
	spans   *tracetest.SpanRecorder
	metrics *sdkmetric.ManualReader
	tp      *sdktrace.TracerProvider
	obs     *mcpotel.Observer
	// notified, if not nil, hears of each notifications/resources/updated
	// mcpotel has counted as sent, by its URI (see newRegistry).
	notified chan string
}

// told is an mcpotel Observer that then tells notified of each
// notifications/resources/updated sent.
type told struct {
	*mcpotel.Observer
	notified chan<- string
}

func (o told) Event(e resource.Event) {
	o.Observer.Event(e)
	if e.Kind == resource.EventNotified && e.Method == "notifications/resources/updated" {
		o.notified <- e.URI
	}
}

func newTelemetry(t testing.TB) *telemetry {
	t.Helper()
	tel := &telemetry{spans: tracetest.NewSpanRecorder(), metrics: sdkmetric.NewManualReader()}
	tel.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tel.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.metrics))
	obs, err := mcpotel.New(&mcpotel.Options{TracerProvider: tel.tp, MeterProvider: mp,
		Attributes: []attribute.KeyValue{attribute.String("tenant", "acme")}, RecordIdentity: true})
	require.NoError(t, err)
	tel.obs = obs
	return tel
}

// ended returns the spans ended so far named name, in the order they ended.
func (tel *telemetry) ended(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range tel.spans.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// collect returns the metrics recorded so far, by name.
func (tel *telemetry) collect(t testing.TB) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.metrics.Collect(context.Background(), &rm))
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// sum is the value of counter name at the data point with exactly attrs
// (besides the tenant), 0 if there is none.
func sum(t testing.TB, ms map[string]metricdata.Metrics, name string, attrs ...attribute.KeyValue) int64 {
	t.Helper()
	m, ok := ms[name]
	if !ok {
		return 0
	}
	want := attribute.NewSet(append(attrs, attribute.String("tenant", "acme"))...)
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		if dp.Attributes.Equals(&want) {
			return dp.Value
		}
	}
	return 0
}

// attr returns the value of span s's attribute key, and whether it has it.
func attr(s sdktrace.ReadOnlySpan, key attribute.Key) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func str(s sdktrace.ReadOnlySpan, key attribute.Key) string {
	v, _ := attr(s, key)
	return v.AsString()
}

func num(s sdktrace.ReadOnlySpan, key attribute.Key) int64 {
	v, _ := attr(s, key)
	return v.AsInt64()
}

// newRegistry is a registry observed by tel (and, if tel.notified is not
// nil, telling it of each notification sent): three static resources, a
// template of users whose user 13 the Authorizer hides, a completer.
func newRegistry(t testing.TB, tel *telemetry, opts resource.Options) *resource.Registry {
	t.Helper()
	opts.Observer = tel.obs
	if tel.notified != nil {
		opts.Observer = told{tel.obs, tel.notified}
	}
	opts.PageSize = 2
	opts.Identity = func(context.Context, mcp.Request) string { return "alice" }
	opts.Authorize = func(_ context.Context, a resource.Access) error {
		if a.URI == "db://users/13" {
			return resource.ErrDenied
		}
		return nil
	}
	r, err := resource.NewRegistry(&opts)
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	for _, u := range []string{"docs://a", "docs://b", "docs://c"} {
		require.NoError(t, r.Add(&mcp.Resource{URI: u, Name: u, MIMEType: "text/plain"}, resource.Text("text of "+u)))
	}
	require.NoError(t, r.AddTemplate(&mcp.ResourceTemplate{URITemplate: "db://users/{id}", Name: "user", MIMEType: "application/json"},
		func(_ context.Context, req *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: `{"id":"` + vars.Get("id") + `"}`}}}, nil
		}, resource.WithCompleter("id", func(context.Context, string, map[string]string) ([]string, error) {
			return []string{"12", "13", "42"}, nil
		})))
	return r
}

// A client is a go-sdk client's session that knows when the server has
// acknowledged its subscriptions.
type client struct {
	*mcp.ClientSession
	acked chan string // the resource URIs of each notifications/subscriptions/acknowledged
}

// connect connects a go-sdk client with opts at version to server: in
// memory if url is "", else over streamable HTTP to url, where server is
// served. The session is closed when t ends (and, in memory, the server's
// session waited for).
func connect(t *testing.T, server *mcp.Server, url, version string, opts *mcp.ClientOptions) *client {
	t.Helper()
	c := &client{acked: make(chan string, 10)}
	sdk := mcp.NewClient(&mcp.Implementation{Name: "mcpotel-test", Version: "v0"}, opts)
	sdk.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.SubscriptionsAcknowledgedParams); ok {
				for _, u := range p.Notifications.ResourceSubscriptions {
					c.acked <- u
				}
			}
			return next(ctx, method, req)
		}
	})
	copts := &mcp.ClientSessionOptions{ProtocolVersion: version}
	var err error
	if url != "" {
		c.ClientSession, err = sdk.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: mcptest.HTTPClient(t, "")}, copts)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		require.Equal(t, version, c.InitializeResult().ProtocolVersion, "the version the server chose")
		return c
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(t.Context(), st, nil)
	require.NoError(t, err)
	c.ClientSession, err = sdk.Connect(t.Context(), ct, copts)
	require.NoError(t, err)
	t.Cleanup(func() {
		c.Close()
		ss.Wait()
	})
	require.Equal(t, version, c.InitializeResult().ProtocolVersion, "the version the server chose")
	return c
}

// subscribe subscribes to uri, and returns once the server has
// acknowledged it: go-sdk then holds the subscription, and a change
// reported from then on reaches the client. Before 2026-07-28 that is
// when Subscribe returns (go-sdk answers resources/subscribe once it has
// recorded the subscription). A 2026-07-28 Subscribe returns once its
// subscriptions/listen is sent: in memory, before the server has even
// read it (over streamable HTTP, once the listen's response begins, which
// go-sdk sends with the acknowledgment). go-sdk acknowledges a listen,
// with notifications/subscriptions/acknowledged, once it has recorded its
// subscriptions, after the registry's SubscribeHandler has returned. The
// registry counts a subscription (SubscriptionStats, the Observer,
// OnWatch) inside that handler, so a change reported as soon as it is
// counted can reach go-sdk's Server.ResourceUpdated before go-sdk records
// the subscription, and no one is notified.
func (c *client) subscribe(t *testing.T, uri string) {
	t.Helper()
	require.NoError(t, c.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri}))
	if c.InitializeResult().ProtocolVersion >= "2026-07-28" {
		// The acknowledgment of this listen, not of another (a client
		// with a ResourceListChangedHandler opens one as it connects).
		for mcptest.Receive(t, c.acked, "notifications/subscriptions/acknowledged of "+uri) != uri {
		}
	}
}

// A client's trace context, as SEP-414 has it in params._meta.
const (
	clientTrace     = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpan      = "00f067aa0ba902b7"
	clientTraceMeta = "00-" + clientTrace + "-" + clientSpan + "-01"
)

// Every operation gets its span, with the MCP conventions' attributes and
// mcpres's own, and its metrics, on every transport and in every
// protocol era: in memory, and over streamable HTTP with a session
// (before 2026-07-28) and without (2026-07-28).
func TestSpansAndMetricsOverTheProtocol(t *testing.T) {
	t.Parallel()
	type transport struct {
		name, version string
		http          bool
	}
	var cases []transport
	for _, v := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		cases = append(cases, transport{"memory/" + v, v, false}, transport{"http/" + v, v, true})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tel := newTelemetry(t)
			tel.notified = make(chan string, 10)
			r := newRegistry(t, tel, resource.Options{})
			server, err := r.NewServer(&mcp.Implementation{Name: "otel"}, nil)
			require.NoError(t, err)
			updated := make(chan string, 10)
			copts := &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
				updated <- req.Params.URI
			}}
			url := ""
			if tc.http {
				h, err := serve.Handler(server, &serve.Options{Logger: slog.New(slog.DiscardHandler)})
				require.NoError(t, err)
				srv := httptest.NewServer(h)
				t.Cleanup(srv.Close)
				url = srv.URL + serve.DefaultPath
			}
			cs := connect(t, server, url, tc.version, copts)
			ctx := t.Context()
			wantVersion := tc.version

			// A list walk: two pages, of 2 and 1.
			page, err := cs.ListResources(ctx, nil)
			require.NoError(t, err)
			_, err = cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: page.NextCursor})
			require.NoError(t, err)
			lists := tel.ended("resources/list")
			require.Len(t, lists, 2)
			for i, want := range []int64{2, 1} {
				s := lists[i]
				assert.Equal(t, trace.SpanKindServer, s.SpanKind())
				assert.Equal(t, "resources/list", str(s, mcpotel.AttrMethodName))
				assert.Equal(t, wantVersion, str(s, mcpotel.AttrProtocolVersion))
				assert.Equal(t, want, num(s, mcpotel.AttrEntries), "page size")
				assert.Equal(t, "allowed", str(s, mcpotel.AttrDecision))
				_, hasURI := attr(s, mcpotel.AttrResourceURI)
				assert.False(t, hasURI)
				if tc.http && tc.version < "2026-07-28" {
					assert.Equal(t, cs.ID(), str(s, mcpotel.AttrSessionID))
				}
				if tc.http {
					assert.Equal(t, "http", str(s, mcpotel.AttrNetworkProtocol))
					assert.Equal(t, "tcp", str(s, mcpotel.AttrTransport))
				} else {
					_, has := attr(s, mcpotel.AttrTransport)
					assert.False(t, has, "a transport mcpotel cannot tell")
				}
			}
			_, err = cs.ListResourceTemplates(ctx, nil)
			require.NoError(t, err)
			require.Len(t, tel.ended("resources/templates/list"), 1)
			assert.EqualValues(t, 1, num(tel.ended("resources/templates/list")[0], mcpotel.AttrEntries))

			// A read that continues the client's trace.
			_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://a", Meta: mcp.Meta{"traceparent": clientTraceMeta}})
			require.NoError(t, err)
			_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "db://users/42"})
			require.NoError(t, err)
			_, readErr := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "db://users/13"})
			require.Error(t, readErr)
			reads := tel.ended("resources/read")
			require.Len(t, reads, 3)
			static, tmpl, denied := reads[0], reads[1], reads[2]
			assert.Equal(t, clientTrace, static.SpanContext().TraceID().String(), "the client's trace goes on")
			assert.Equal(t, clientSpan, static.Parent().SpanID().String())
			assert.True(t, static.Parent().IsRemote())
			assert.Equal(t, "docs://a", str(static, mcpotel.AttrResourceURI))
			assert.Equal(t, "match", str(static, mcpotel.AttrMIMECheck))
			assert.EqualValues(t, len("text of docs://a"), num(static, mcpotel.AttrReadBytes))
			assert.Equal(t, "alice", str(static, mcpotel.AttrUserID))
			_, hasTemplate := attr(static, mcpotel.AttrTemplate)
			assert.False(t, hasTemplate, "a static resource matches no template")
			assert.Equal(t, codes.Unset, static.Status().Code)

			assert.NotEqual(t, clientTrace, tmpl.SpanContext().TraceID().String(), "no _meta: a trace of its own")
			assert.Equal(t, "db://users/{id}", str(tmpl, mcpotel.AttrTemplate))
			assert.Equal(t, "db://users/42", str(tmpl, mcpotel.AttrResourceURI))

			var jerr *jsonrpc.Error
			require.ErrorAs(t, readErr, &jerr)
			code := strconv.FormatInt(jerr.Code, 10)
			assert.Equal(t, "denied", str(denied, mcpotel.AttrDecision))
			assert.Equal(t, code, str(denied, mcpotel.AttrErrorType), "the code the client saw")
			assert.Equal(t, code, str(denied, mcpotel.AttrStatusCode))
			assert.Equal(t, codes.Error, denied.Status().Code)
			assert.Equal(t, "Resource not found", denied.Status().Description)
			assert.Equal(t, "db://users/{id}", str(denied, mcpotel.AttrTemplate))

			// A completion: the Authorizer withholds nothing here (it
			// decides URIs), so all three values.
			_, err = cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "db://users/{id}"},
				Argument: mcp.CompleteParamsArgument{Name: "id", Value: "1"}})
			require.NoError(t, err)
			completes := tel.ended("completion/complete")
			require.Len(t, completes, 1)
			assert.EqualValues(t, 3, num(completes[0], mcpotel.AttrEntries))
			assert.Equal(t, "db://users/{id}", str(completes[0], mcpotel.AttrTemplate))

			// A subscription, and a change that reaches it: once the
			// server has acknowledged the subscription, go-sdk holds it.
			cs.subscribe(t, "db://users/42")
			n, _, _ := r.SubscriptionStats()
			require.Equal(t, 1, n)
			require.NoError(t, r.Changed("db://users/42"))
			assert.Equal(t, "db://users/42", mcptest.Receive(t, updated, "notifications/resources/updated"))
			subs := tel.ended("resources/subscribe")
			require.Len(t, subs, 1)
			assert.Equal(t, "db://users/{id}", str(subs[0], mcpotel.AttrTemplate))
			assert.Equal(t, "db://users/42", str(subs[0], mcpotel.AttrResourceURI))
			if tc.version >= "2026-07-28" {
				// The listen's span is still open: the subscription is
				// its child.
				assert.Empty(t, tel.ended("subscriptions/listen"))
				var listen sdktrace.ReadOnlySpan
				for _, s := range tel.spans.Started() {
					if s.Name() == "subscriptions/listen" {
						listen = s
					}
				}
				require.NotNil(t, listen)
				assert.Equal(t, listen.SpanContext().SpanID(), subs[0].Parent().SpanID(), "a listen's subscription is its child")
			}

			ms := tel.collect(t)
			hist := ms["mcp.server.operation.duration"].Data.(metricdata.Histogram[float64])
			counts := map[string]uint64{}
			for _, dp := range hist.DataPoints {
				_, hasURI := dp.Attributes.Value(mcpotel.AttrResourceURI)
				assert.False(t, hasURI, "never by URI")
				tenant, _ := dp.Attributes.Value("tenant")
				assert.Equal(t, "acme", tenant.AsString())
				m, _ := dp.Attributes.Value(mcpotel.AttrMethodName)
				tm, _ := dp.Attributes.Value(mcpotel.AttrTemplate)
				d, _ := dp.Attributes.Value(mcpotel.AttrDecision)
				counts[m.AsString()+" "+tm.AsString()+" "+d.AsString()] += dp.Count
			}
			assert.Equal(t, map[string]uint64{
				"resources/list  allowed":                     2,
				"resources/templates/list  allowed":           1,
				"resources/read  allowed":                     1,
				"resources/read db://users/{id} allowed":      1,
				"resources/read db://users/{id} denied":       1,
				"completion/complete db://users/{id} allowed": 1,
				"resources/subscribe db://users/{id} allowed": 1,
			}, counts)
			read := attribute.String("mcp.method.name", "resources/read")
			assert.EqualValues(t, 1, sum(t, ms, "mcpres.resource.denials", read, mcpotel.AttrTemplate.String("db://users/{id}")))
			sizes := ms["mcpres.resource.read.size"].Data.(metricdata.Histogram[int64])
			var reads2 uint64
			var bytes int64
			for _, dp := range sizes.DataPoints {
				reads2 += dp.Count
				bytes += dp.Sum
			}
			assert.EqualValues(t, 2, reads2, "successful reads")
			assert.EqualValues(t, len("text of docs://a")+len(`{"id":"42"}`), bytes)
			// The client may have the notification before the server's
			// send returns and is counted: wait until it is.
			assert.Equal(t, "db://users/42", mcptest.Receive(t, tel.notified, "the Observer's EventNotified"))
			assert.EqualValues(t, 1, sum(t, tel.collect(t), "mcpres.notifications.sent",
				attribute.String("mcp.method.name", "notifications/resources/updated")))
			gauge := ms["mcpres.subscriptions.open"].Data.(metricdata.Gauge[int64])
			require.Len(t, gauge.DataPoints, 1)
			assert.EqualValues(t, 1, gauge.DataPoints[0].Value)
		})
	}
}

// Rate-limit refusals and entries the Authorizer withholds are counted,
// by method, exactly.
func TestRefusalsCounted(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		tel := newTelemetry(t)
		r := newRegistry(t, tel, resource.Options{RateLimits: resource.RateLimits{Read: &resource.RateLimit{Rate: rate.Every(time.Hour), Burst: 2}}})
		server, err := r.NewServer(&mcp.Implementation{Name: "otel"}, nil)
		require.NoError(t, err)
		cs := mcptest.Connect(t, server, "2025-11-25", nil)
		for range 5 {
			cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "docs://a"})
		}
		r2, err := resource.NewRegistry(&resource.Options{Observer: tel.obs, Authorize: func(_ context.Context, a resource.Access) error {
			if a.URI == "docs://secret" {
				return resource.ErrDenied
			}
			return nil
		}})
		require.NoError(t, err)
		defer r2.Close()
		for _, u := range []string{"docs://open", "docs://secret"} {
			require.NoError(t, r2.Add(&mcp.Resource{URI: u, Name: u}, resource.Text(u)))
		}
		res, err := r2.ListResources(t.Context(), &mcp.ListResourcesRequest{Params: &mcp.ListResourcesParams{}})
		require.NoError(t, err)
		require.Len(t, res.Resources, 1)

		ms := tel.collect(t)
		assert.EqualValues(t, 3, sum(t, ms, "mcpres.resource.rate_limited", attribute.String("mcp.method.name", "resources/read")))
		assert.EqualValues(t, 1, sum(t, ms, "mcpres.resource.withheld", attribute.String("mcp.method.name", "resources/list")))
		limited := tel.ended("resources/read")[4]
		assert.Equal(t, "limited", str(limited, mcpotel.AttrDecision))
		assert.Equal(t, strconv.Itoa(resource.CodeRateLimited), str(limited, mcpotel.AttrErrorType))
		list := tel.ended("resources/list")[0]
		assert.Equal(t, "filtered", str(list, mcpotel.AttrDecision))
		assert.EqualValues(t, 1, num(list, mcpotel.AttrWithheld))
		assert.EqualValues(t, 1, num(list, mcpotel.AttrEntries))
	})
}

// Notifications sent and coalesced, and open subscriptions, on the fake
// clock with exact counts: two subscribers of one URI; one lone change is
// sent to both at once; a burst of 10 within the window costs one more
// each, the other 9 coalesced; a session that ends takes its subscription
// with it.
func TestNotificationsCounted(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const window = 100 * time.Millisecond
		tel := newTelemetry(t)
		r := newRegistry(t, tel, resource.Options{Subscriptions: resource.SubscriptionOptions{Window: window}})
		server, err := r.NewServer(&mcp.Implementation{Name: "otel"}, nil)
		require.NoError(t, err)
		a := mcptest.Connect(t, server, "2025-11-25", nil)
		b := mcptest.Connect(t, server, "2025-11-25", nil)
		for _, cs := range []*mcp.ClientSession{a, b} {
			require.NoError(t, cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "docs://a"}))
		}
		gauge := func() int64 {
			return tel.collect(t)["mcpres.subscriptions.open"].Data.(metricdata.Gauge[int64]).DataPoints[0].Value
		}
		assert.EqualValues(t, 2, gauge())
		updated := attribute.String("mcp.method.name", "notifications/resources/updated")

		require.NoError(t, r.Changed("docs://a"))
		synctest.Wait()
		assert.EqualValues(t, 2, sum(t, tel.collect(t), "mcpres.notifications.sent", updated))
		for range 10 {
			require.NoError(t, r.Changed("docs://a"))
		}
		time.Sleep(window)
		synctest.Wait()
		ms := tel.collect(t)
		assert.EqualValues(t, 4, sum(t, ms, "mcpres.notifications.sent", updated))
		assert.EqualValues(t, 9, sum(t, ms, "mcpres.notifications.coalesced"))

		require.NoError(t, b.Close())
		time.Sleep(2 * time.Second) // the registry sweeps ended sessions every second
		synctest.Wait()
		assert.EqualValues(t, 1, gauge(), "a session's end closes its subscriptions")
	})
}

// A change from another replica is counted, with its lag; one whose
// publisher did not say when it sent it is counted without.
func TestBusLag(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		tel := newTelemetry(t)
		var hub subscribe.Hub
		a, err := resource.NewRegistry(&resource.Options{Subscriptions: resource.SubscriptionOptions{Bus: hub.Bus()}})
		require.NoError(t, err)
		defer a.Close()
		b, err := resource.NewRegistry(&resource.Options{Observer: tel.obs, Subscriptions: resource.SubscriptionOptions{Bus: hub.Bus()}})
		require.NoError(t, err)
		defer b.Close()
		require.NoError(t, a.Add(&mcp.Resource{URI: "docs://a", Name: "a"}, resource.Text("a")))
		require.NoError(t, a.Changed("docs://a"))
		a.NotifyListChanged()
		synctest.Wait()
		ms := tel.collect(t)
		assert.EqualValues(t, 2, sum(t, ms, "mcpres.bus.received"))
		lag := ms["mcpres.bus.lag"].Data.(metricdata.Histogram[float64])
		require.Len(t, lag.DataPoints, 1)
		assert.EqualValues(t, 2, lag.DataPoints[0].Count)
		assert.Zero(t, lag.DataPoints[0].Sum, "the fake clock stood still")
	})
}

// A resync, when the bus says this replica may have missed changes, is
// counted with the URIs it notified.
func TestBusResync(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		tel := newTelemetry(t)
		bus := &resyncBus{}
		reg, err := resource.NewRegistry(&resource.Options{Observer: tel.obs, Logger: slog.New(slog.DiscardHandler),
			Subscriptions: resource.SubscriptionOptions{Bus: bus}})
		require.NoError(t, err)
		defer reg.Close()
		bus.deliver(subscribe.Change{Kind: subscribe.Resync, Value: "test"})
		bus.deliver(subscribe.Change{Kind: subscribe.Resync, Value: "test"})
		time.Sleep(time.Second) // the second is made when the second after the first ends
		synctest.Wait()
		ms := tel.collect(t)
		assert.EqualValues(t, 2, sum(t, ms, "mcpres.bus.resyncs"))
		assert.EqualValues(t, 0, sum(t, ms, "mcpres.bus.resync.uris"), "no one watches anything")
		assert.Zero(t, sum(t, ms, "mcpres.bus.received"), "a resync is no change received")
	})
}

// A resyncBus is a Bus whose test delivers to its listener itself.
type resyncBus struct{ deliver func(subscribe.Change) }

func (b *resyncBus) Publish(subscribe.Change) {}

func (b *resyncBus) Listen(deliver func(subscribe.Change)) (func(), error) {
	b.deliver = deliver
	return func() {}, nil
}

// A direct call with a span in its context and trace context in its
// _meta: the span continues the _meta's trace and links to the ambient
// span.
func TestTraceContextLinksAmbientSpan(t *testing.T) {
	t.Parallel()
	tel := newTelemetry(t)
	r := newRegistry(t, tel, resource.Options{})
	ctx, ambient := tel.tp.Tracer("http").Start(context.Background(), "POST /mcp")
	_, err := r.ReadResource(ctx, &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: "docs://b",
		Meta: mcp.Meta{"traceparent": clientTraceMeta, "tracestate": "rojo=00f067aa0ba902b7"}}})
	require.NoError(t, err)
	ambient.End()
	read := tel.ended("resources/read")[0]
	assert.Equal(t, clientTrace, read.SpanContext().TraceID().String())
	assert.Equal(t, "rojo=00f067aa0ba902b7", read.SpanContext().TraceState().String())
	require.Len(t, read.Links(), 1)
	assert.Equal(t, ambient.SpanContext().SpanID(), read.Links()[0].SpanContext.SpanID())

	// Without _meta, the ambient span is the parent; a malformed
	// traceparent is ignored.
	for _, meta := range []mcp.Meta{nil, {"traceparent": "00-zz-yy-01"}, {"traceparent": 7}} {
		_, err = r.ReadResource(ctx, &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: "docs://b", Meta: meta}})
		require.NoError(t, err)
		reads := tel.ended("resources/read")
		last := reads[len(reads)-1]
		assert.Equal(t, ambient.SpanContext().SpanID(), last.Parent().SpanID(), "%v", meta)
	}

	// A request without params, or none at all, is observed too.
	_, err = r.ReadResource(ctx, &mcp.ReadResourceRequest{})
	require.Error(t, err)
	_, err = r.ListResources(ctx, &mcp.ListResourcesRequest{})
	require.NoError(t, err)
	_, err = r.ListResources(ctx, nil)
	require.NoError(t, err)
	reads := tel.ended("resources/read")
	assert.Equal(t, "invalid", str(reads[len(reads)-1], mcpotel.AttrDecision))
	assert.Len(t, tel.ended("resources/list"), 2)
}

// What a client sends cannot grow the metrics' series, nor a span past a
// bound: a thousand reads of distinct URIs naming distinct protocol
// versions are one series, "unknown" version, and a 100 kB URI is cut.
func TestClientInputIsBounded(t *testing.T) {
	t.Parallel()
	tel := newTelemetry(t)
	r := newRegistry(t, tel, resource.Options{})
	ctx := context.Background()
	for i := range 1000 {
		r.ReadResource(ctx, &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{
			URI:  "db://users/u" + strconv.Itoa(i),
			Meta: mcp.Meta{mcp.MetaKeyProtocolVersion: "1999-01-" + strconv.Itoa(i)},
		}})
	}
	hist := tel.collect(t)["mcp.server.operation.duration"].Data.(metricdata.Histogram[float64])
	require.Len(t, hist.DataPoints, 1)
	v, _ := hist.DataPoints[0].Attributes.Value(mcpotel.AttrProtocolVersion)
	assert.Equal(t, "unknown", v.AsString())
	assert.EqualValues(t, 1000, hist.DataPoints[0].Count)
	assert.Equal(t, "unknown", str(tel.ended("resources/read")[0], mcpotel.AttrProtocolVersion))

	long := "db://users/" + strings.Repeat("é", 50_000)
	r.ReadResource(ctx, &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: long}})
	reads := tel.ended("resources/read")
	got := str(reads[len(reads)-1], mcpotel.AttrResourceURI)
	assert.LessOrEqual(t, len(got), resource.DefaultMaxURILength+len("…"))
	assert.True(t, utf8.ValidString(got))
	assert.True(t, strings.HasPrefix(long, strings.TrimSuffix(got, "…")))
}
