// Package mcpotel gives a resource.Registry OpenTelemetry traces and
// metrics: a span for every resources/list, resources/templates/list,
// resources/read, resources/subscribe, subscriptions/listen and
// completion/complete the registry answers, and metrics of their
// durations, denials, rate-limit refusals, read sizes, open
// subscriptions, notifications and the bus's lag.
//
// It plugs into the registry's one hook, resource.Options.Observer:
//
//	obs, err := mcpotel.New(nil) // the global providers
//	...
//	reg, err := resource.NewRegistry(&resource.Options{Observer: obs})
//
// # Spans
//
// Spans follow OpenTelemetry's semantic conventions for MCP servers: kind
// server, named by the method (never by the URI, whose cardinality is
// unbounded), with mcp.method.name, mcp.protocol.version, mcp.session.id
// (when the session has an ID), mcp.resource.uri (for a read or a
// subscription), and network.protocol.name "http" and network.transport
// "tcp" for a request that came over HTTP. (jsonrpc.request.id is left
// out: go-sdk does not tell a handler the request's ID.) A call that fails sets error.type and
// rpc.response.status_code to the JSON-RPC code, and the span's status
// to Error with the error's message. mcpres adds:
//
//   - mcpres.resource.template: the URI template a read's or
//     subscription's URI matched, or the one completed;
//   - mcpres.decision: what came of the call, as the access record says
//     it: a resource.Decision ("allowed", "denied", "filtered",
//     "not_found", "invalid", "limited", "failed", "too_large", "closed");
//   - mcpres.entries: the entries of a list page (the page size), the
//     values of a completion, the contents of a read;
//   - mcpres.withheld: entries the Authorizer left out;
//   - mcpres.read.bytes and mcpres.mime.check ("match", "mismatch",
//     "off") for a read;
//   - user.id: the caller's identity (resource.Options.Identity), only
//     with Options.RecordIdentity.
//
// A request whose params._meta carries W3C trace context (traceparent,
// tracestate and baggage, as SEP-414 has clients send them) continues
// the client's trace: its span is a child of the client's, and links to
// the span the context held before (an HTTP server span, say). The
// subscriptions of a 2026-07-28 subscriptions/listen are children of the
// listen's span, which lasts as long as the listen's stream.
//
// Trace context from a client is the client's word. A parent-based
// sampler (the SDK's default) samples every request whose traceparent
// says "sampled", so a client can have all its requests traced; to keep
// the share of traced requests yours, sample remote parents by trace ID
// too:
//
//	ratio := sdktrace.TraceIDRatioBased(0.01)
//	sampler := sdktrace.ParentBased(ratio, sdktrace.WithRemoteParentSampled(ratio))
//
// Baggage a client sends reaches the read functions' context as it came.
//
// # Metrics
//
// Every metric carries Options.Attributes. None carries a resource URI:
// a template is the finest grain.
//
//   - mcp.server.operation.duration (histogram, s): each call, by
//     mcp.method.name, mcp.protocol.version, mcpres.resource.template,
//     mcpres.decision and error.type;
//   - mcpres.resource.denials (counter): calls the Authorizer denied, by
//     method and template;
//   - mcpres.resource.withheld (counter): entries the Authorizer left
//     out of list pages and completions, by method;
//   - mcpres.resource.rate_limited (counter): calls refused by
//     resource.Options.RateLimits, by method;
//   - mcpres.resource.read.size (histogram, By): the bytes each
//     successful read returned, by template;
//   - mcpres.subscriptions.open (gauge): the registry's open
//     subscriptions;
//   - mcpres.notifications.sent (counter): notifications sent to
//     sessions, by mcp.method.name;
//   - mcpres.notifications.coalesced (counter): changes that cost no
//     notification of their own (see resource.EventCoalesced);
//   - mcpres.bus.received (counter): changes received from other
//     replicas;
//   - mcpres.bus.lag (histogram, s): for those whose publisher said when
//     it sent them, how long they took to arrive, by the two replicas'
//     clocks;
//   - mcpres.bus.resyncs (counter): times the bus said this replica may
//     have missed changes, and every session was told to read again
//     what it watches (see resource.EventResync);
//   - mcpres.bus.resync.uris (counter): the watched URIs notified for
//     them.
//
// An Observer serves one registry: the subscription gauge is the
// registry's count. For several registries in one process, make one
// Observer each, with Attributes that tell them apart.
package mcpotel

import (
	"cmp"
	"context"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the spans and metrics.
const ScopeName = "github.com/mcpres/mcpres/mcpotel"

// The attributes of the semantic conventions for MCP (development
// status), and those mcpres adds.
const (
	AttrMethodName      = attribute.Key("mcp.method.name")
	AttrProtocolVersion = attribute.Key("mcp.protocol.version")
	AttrSessionID       = attribute.Key("mcp.session.id")
	AttrResourceURI     = attribute.Key("mcp.resource.uri")
	AttrErrorType       = attribute.Key("error.type")
	AttrStatusCode      = attribute.Key("rpc.response.status_code")
	AttrUserID          = attribute.Key("user.id")
	AttrNetworkProtocol = attribute.Key("network.protocol.name")
	AttrTransport       = attribute.Key("network.transport")

	AttrTemplate  = attribute.Key("mcpres.resource.template")
	AttrDecision  = attribute.Key("mcpres.decision")
	AttrEntries   = attribute.Key("mcpres.entries")
	AttrWithheld  = attribute.Key("mcpres.withheld")
	AttrReadBytes = attribute.Key("mcpres.read.bytes")
	AttrMIMECheck = attribute.Key("mcpres.mime.check")
)

// Options configures New. The zero value, or a nil *Options, uses the
// global tracer and meter providers, and W3C trace context and baggage.
type Options struct {
	// TracerProvider makes the spans; nil means otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// MeterProvider makes the metrics; nil means otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
	// Propagator reads trace context from a request's params._meta; nil
	// means W3C trace context and baggage, as SEP-414 has clients write
	// them (whatever the global propagator is).
	Propagator propagation.TextMapPropagator
	// Attributes are added to every metric, to tell apart registries
	// (tenants, say) that share a MeterProvider.
	Attributes []attribute.KeyValue
	// RecordIdentity puts the caller's identity on spans as user.id.
	// False leaves it out: an identity may be personal data.
	RecordIdentity bool
}

// An Observer is a resource.Observer that records OpenTelemetry spans and
// metrics. Make one with New; it is safe for concurrent use.
type Observer struct {
	tracer   trace.Tracer
	prop     propagation.TextMapPropagator
	common   []attribute.KeyValue
	identity bool

	// The attribute sets of the metrics, made once: building a set sorts
	// and hashes it, which costs more than recording.
	commonAdd []metric.AddOption // the common attributes
	commonRec []metric.RecordOption
	setsMu    sync.RWMutex
	sets      map[setKey]*callSets // at most maxSets

	duration    metric.Float64Histogram
	denials     metric.Int64Counter
	withheld    metric.Int64Counter
	rateLimited metric.Int64Counter
	readSize    metric.Int64Histogram
	open        metric.Int64Gauge
	sent        metric.Int64Counter
	coalesced   metric.Int64Counter
	received    metric.Int64Counter
	lag         metric.Float64Histogram
	resyncs     metric.Int64Counter
	resyncURIs  metric.Int64Counter
}

var _ resource.Observer = (*Observer)(nil)

// durationBounds are the duration histograms' buckets, in seconds: those
// the MCP conventions advise, below which finer ones for reads served
// from memory.
var durationBounds = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// New returns an Observer that records with opts's providers. It returns
// an error if the meter refuses an instrument.
func New(opts *Options) (*Observer, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	tp, mp := o.TracerProvider, o.MeterProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	prop := o.Propagator
	if prop == nil {
		prop = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}
	ob := &Observer{
		tracer:   tp.Tracer(ScopeName),
		prop:     prop,
		common:   append([]attribute.KeyValue(nil), o.Attributes...),
		identity: o.RecordIdentity,
	}
	common := metric.WithAttributeSet(attribute.NewSet(ob.common...))
	ob.commonAdd, ob.commonRec = []metric.AddOption{common}, []metric.RecordOption{common}
	in := instruments{m: mp.Meter(ScopeName)}
	ob.duration = in.histogram("mcp.server.operation.duration", "s",
		"MCP request duration as observed on the receiver from the time it was received until the result or error is sent.", durationBounds...)
	ob.denials = in.counter("mcpres.resource.denials", "{call}", "Calls the Authorizer denied, answered as not found.")
	ob.withheld = in.counter("mcpres.resource.withheld", "{entry}", "Entries the Authorizer left out of list pages and completions.")
	ob.rateLimited = in.counter("mcpres.resource.rate_limited", "{call}", "Calls refused for being over the caller's rate budget.")
	var err error
	ob.readSize, err = in.m.Int64Histogram("mcpres.resource.read.size", metric.WithUnit("By"),
		metric.WithDescription("Bytes of content each successful read returned (blobs before base64)."),
		metric.WithExplicitBucketBoundaries(0, 256, 1<<10, 4<<10, 16<<10, 64<<10, 256<<10, 1<<20, 4<<20, 16<<20))
	in.err = cmp.Or(in.err, err)
	ob.open, err = in.m.Int64Gauge("mcpres.subscriptions.open", metric.WithUnit("{subscription}"),
		metric.WithDescription("Open resource subscriptions."))
	in.err = cmp.Or(in.err, err)
	ob.sent = in.counter("mcpres.notifications.sent", "{notification}", "Notifications sent to sessions.")
	ob.coalesced = in.counter("mcpres.notifications.coalesced", "{change}", "Changes folded into a notification already due.")
	ob.received = in.counter("mcpres.bus.received", "{change}", "Changes received from other replicas.")
	ob.lag = in.histogram("mcpres.bus.lag", "s", "Time from a replica sending a change to this one receiving it.", durationBounds...)
	ob.resyncs = in.counter("mcpres.bus.resyncs", "{resync}", "Times this replica may have missed changes and told every session to read again.")
	ob.resyncURIs = in.counter("mcpres.bus.resync.uris", "{uri}", "Watched URIs notified because this replica may have missed changes.")
	if in.err != nil {
		return nil, in.err
	}
	return ob, nil
}

// instruments makes a meter's instruments, keeping the first error.
type instruments struct {
	m   metric.Meter
	err error
}

func (in *instruments) counter(name, unit, desc string) metric.Int64Counter {
	c, err := in.m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	in.err = cmp.Or(in.err, err)
	return c
}

func (in *instruments) histogram(name, unit, desc string, bounds ...float64) metric.Float64Histogram {
	h, err := in.m.Float64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc), metric.WithExplicitBucketBoundaries(bounds...))
	in.err = cmp.Or(in.err, err)
	return h
}

// serverKind is the option every span starts with.
var serverKind = trace.WithSpanKind(trace.SpanKindServer)

// spanKey marks a context that holds a span of a subscriptions/listen
// this Observer started: the subscriptions go-sdk makes of the listen
// carry the listen's _meta, but are children of its span.
type spanKey struct{}

// StartCall starts c's span, a child of the trace context in the
// request's params._meta if it has one (linked to the span ctx held),
// else of ctx's span.
func (o *Observer) StartCall(ctx context.Context, c *resource.Call) context.Context {
	opts := make([]trace.SpanStartOption, 1, 3)
	opts[0] = serverKind
	parent := ctx
	if ctx.Value(spanKey{}) == nil {
		if meta := requestMeta(c.Request); meta != nil {
			remote := o.prop.Extract(ctx, metaCarrier(meta))
			if sc := trace.SpanContextFromContext(remote); sc.IsValid() {
				if ambient := trace.SpanContextFromContext(ctx); ambient.IsValid() && !ambient.Equal(sc) {
					opts = append(opts, trace.WithLinks(trace.Link{SpanContext: ambient}))
				}
				parent = remote
			}
		}
	}
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, AttrMethodName.String(c.Method))
	if c.ProtocolVersion != "" {
		attrs = append(attrs, AttrProtocolVersion.String(knownVersion(c.ProtocolVersion)))
	}
	if c.SessionID != "" {
		attrs = append(attrs, AttrSessionID.String(c.SessionID))
	}
	if c.URI != "" && (c.Op == resource.OpRead || c.Op == resource.OpSubscribe) {
		attrs = append(attrs, AttrResourceURI.String(clip(c.URI)))
	}
	if o.identity && c.Identity != "" {
		attrs = append(attrs, AttrUserID.String(c.Identity))
	}
	if c.Request != nil {
		if extra := c.Request.GetExtra(); extra != nil && extra.Header != nil {
			attrs = append(attrs, AttrNetworkProtocol.String("http"), AttrTransport.String("tcp"))
		}
	}
	opts = append(opts, trace.WithAttributes(attrs...))
	ctx, _ = o.tracer.Start(parent, c.Method, opts...)
	if c.Method == protocol.MethodListen {
		ctx = context.WithValue(ctx, spanKey{}, true)
	}
	return ctx
}

// EndCall ends c's span and records its metrics.
func (o *Observer) EndCall(ctx context.Context, c *resource.Call) {
	span := trace.SpanFromContext(ctx)
	if span.IsRecording() {
		attrs := make([]attribute.KeyValue, 0, 8)
		attrs = append(attrs, AttrDecision.String(string(c.Decision)))
		if c.Template != "" {
			attrs = append(attrs, AttrTemplate.String(c.Template))
		}
		if c.Op != resource.OpSubscribe {
			attrs = append(attrs, AttrEntries.Int(c.Entries))
		}
		if c.Withheld > 0 {
			attrs = append(attrs, AttrWithheld.Int(c.Withheld))
		}
		if c.Op == resource.OpRead {
			attrs = append(attrs, AttrReadBytes.Int64(c.Bytes))
		}
		if c.MIME != "" {
			attrs = append(attrs, AttrMIMECheck.String(c.MIME))
		}
		if c.Err != nil {
			code := errorType(c)
			attrs = append(attrs, AttrErrorType.String(code), AttrStatusCode.String(code))
			span.SetStatus(codes.Error, errorMessage(c.Err))
		}
		span.SetAttributes(attrs...)
	}
	span.End()
	o.record(ctx, c)
}

// A setKey is what tells apart the attribute sets of one call's metrics.
type setKey struct {
	method, template, decision, version, errorType string
}

// callSets are the attribute sets of the metrics of calls with one
// setKey, as the options of a measurement: made once, so that recording
// allocates nothing.
type callSets struct {
	duration      []metric.RecordOption // method, template, decision, version, error type
	byTemplate    []metric.RecordOption // method and template
	byTemplateAdd []metric.AddOption
	byMethodAdd   []metric.AddOption // method
}

// maxSets bounds the attribute sets kept: the keys are bounded by what the
// server registers (templates, methods, error codes), but a bound keeps
// a mistake from growing memory. Past it, sets are built for each call.
const maxSets = 10_000

// setsFor returns the attribute sets of calls with key k.
func (o *Observer) setsFor(k setKey) *callSets {
	o.setsMu.RLock()
	s, ok := o.sets[k]
	o.setsMu.RUnlock()
	if ok {
		return s
	}
	attrs := make([]attribute.KeyValue, 0, len(o.common)+5)
	attrs = append(append(attrs, o.common...), AttrMethodName.String(k.method))
	s = &callSets{byMethodAdd: []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}}
	if k.template != "" {
		attrs = append(attrs, AttrTemplate.String(k.template))
	}
	byTemplate := metric.WithAttributeSet(attribute.NewSet(attrs...))
	s.byTemplate, s.byTemplateAdd = []metric.RecordOption{byTemplate}, []metric.AddOption{byTemplate}
	attrs = append(attrs, AttrDecision.String(k.decision))
	if k.version != "" {
		attrs = append(attrs, AttrProtocolVersion.String(k.version))
	}
	if k.errorType != "" {
		attrs = append(attrs, AttrErrorType.String(k.errorType))
	}
	s.duration = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}
	o.setsMu.Lock()
	defer o.setsMu.Unlock()
	if kept, ok := o.sets[k]; ok {
		return kept
	}
	if len(o.sets) < maxSets {
		if o.sets == nil {
			o.sets = make(map[setKey]*callSets)
		}
		o.sets[k] = s
	}
	return s
}

// record records c's metrics.
func (o *Observer) record(ctx context.Context, c *resource.Call) {
	k := setKey{method: c.Method, template: c.Template, decision: string(c.Decision), version: knownVersion(c.ProtocolVersion)}
	if c.Err != nil {
		k.errorType = errorType(c)
	}
	s := o.setsFor(k)
	o.duration.Record(ctx, c.End.Sub(c.Start).Seconds(), s.duration...)
	switch c.Decision {
	case resource.DecisionDenied:
		o.denials.Add(ctx, 1, s.byTemplateAdd...)
	case resource.DecisionLimited:
		o.rateLimited.Add(ctx, 1, s.byMethodAdd...)
	case resource.DecisionAllowed, resource.DecisionFiltered:
		if c.Op == resource.OpRead {
			o.readSize.Record(ctx, c.Bytes, s.byTemplate...)
		}
	}
	if c.Withheld > 0 {
		o.withheld.Add(ctx, int64(c.Withheld), s.byMethodAdd...)
	}
}

// supportedVersions are the protocol versions go-sdk supports.
var supportedVersions = mcp.SupportedProtocolVersions()

// knownVersion is v if it is a protocol version go-sdk supports, else
// "unknown": a 2026-07-28 request names its version itself, and what a
// client sends must not grow the metrics' series.
func knownVersion(v string) string {
	if v == "" || slices.Contains(supportedVersions, v) {
		return v
	}
	return "unknown"
}

// Event records e's metric.
func (o *Observer) Event(e resource.Event) {
	ctx := context.Background()
	switch e.Kind {
	case resource.EventNotified:
		o.sent.Add(ctx, 1, o.setsFor(setKey{method: e.Method}).byMethodAdd...)
	case resource.EventCoalesced:
		o.coalesced.Add(ctx, 1, o.commonAdd...)
	case resource.EventSubscriptions:
		o.open.Record(ctx, int64(e.Count), o.commonRec...)
	case resource.EventBusReceived:
		o.received.Add(ctx, 1, o.commonAdd...)
		if e.Lag >= 0 {
			o.lag.Record(ctx, e.Lag.Seconds(), o.commonRec...)
		}
	case resource.EventResync:
		o.resyncs.Add(ctx, 1, o.commonAdd...)
		o.resyncURIs.Add(ctx, int64(e.Count), o.commonAdd...)
	}
}

// maxURI is the longest URI put on a span: the registry's default cap.
// A call's URI is the client's, not yet checked when the span starts.
const maxURI = resource.DefaultMaxURILength

// clip returns u, cut to maxURI bytes of valid UTF-8.
func clip(u string) string {
	if len(u) <= maxURI {
		return u
	}
	return strings.ToValidUTF8(u[:maxURI], "") + "…"
}

// errorType is the error.type of c, which failed: its JSON-RPC code, or
// "_OTHER" for an error without one.
func errorType(c *resource.Call) string {
	if c.Code != 0 {
		return strconv.FormatInt(c.Code, 10)
	}
	return "_OTHER"
}

// errorMessage is the message of err: a JSON-RPC error's own, without
// its code.
func errorMessage(err error) string {
	var jerr *jsonrpc.Error
	if errors.As(err, &jerr) {
		return jerr.Message
	}
	return err.Error()
}

// requestMeta is the _meta of req's params, nil if it has none.
func requestMeta(req mcp.Request) map[string]any {
	if req == nil {
		return nil
	}
	p := req.GetParams()
	if p == nil {
		return nil
	}
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil // a request without params: GetMeta would panic
	}
	return p.GetMeta()
}

// metaCarrier reads trace context from a request's _meta: the unprefixed
// keys traceparent, tracestate and baggage, string-valued.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

// Set is never called: the Observer only extracts.
func (m metaCarrier) Set(key, value string) { m[key] = value }

func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}
