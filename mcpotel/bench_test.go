package mcpotel_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/mcpres/mcpres/mcpotel"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// BenchmarkTelemetry compares, side by side, a templated read and a list
// page with telemetry off (no Observer), and with an mcpotel Observer on
// the OpenTelemetry SDK: "on" samples every span, which a batch processor
// hands to an exporter that drops them, and records every metric into a
// reader; "unsampled" records the metrics and no span, as a server
// sampling a small share of its traces spends on most calls. The calls
// go to the registry's handler methods directly, without a transport:
// what telemetry adds is all there is to compare.
//
//	go test -run '^$' -bench 'BenchmarkTelemetry' -benchmem -count 5 ./mcpotel/
func BenchmarkTelemetry(b *testing.B) {
	for _, mode := range []string{"off", "on", "unsampled"} {
		b.Run("read/"+mode, func(b *testing.B) {
			reg := benchRegistry(b, mode)
			req := &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: "bench://users/42"}}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := reg.ReadResource(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, mode := range []string{"off", "on", "unsampled"} {
		b.Run("list/"+mode, func(b *testing.B) {
			reg := benchRegistry(b, mode)
			ctx := context.Background()
			first, err := reg.ListResources(ctx, nil) // a page from the middle of the walk
			if err != nil {
				b.Fatal(err)
			}
			req := &mcp.ListResourcesRequest{Params: &mcp.ListResourcesParams{Cursor: first.NextCursor}}
			b.ReportAllocs()
			for b.Loop() {
				res, err := reg.ListResources(ctx, req)
				if err != nil || len(res.Resources) != benchPageSize {
					b.Fatal(err, len(res.Resources))
				}
			}
		})
	}
}

// BenchmarkSDKFloor is what the OpenTelemetry SDK alone takes for what
// mcpotel records of one read, set up as BenchmarkTelemetry's "on" and
// "unsampled": a server span started with five attributes and given six
// more, and a duration and a size recorded with attribute sets made
// beforehand. BenchmarkTelemetry's cost over "off", less this, is
// mcpotel's own.
//
//	go test -run '^$' -bench 'BenchmarkTelemetry|BenchmarkSDKFloor' -benchmem -count 5 ./mcpotel/
func BenchmarkSDKFloor(b *testing.B) {
	for _, mode := range []string{"on", "unsampled"} {
		b.Run("read/"+mode, func(b *testing.B) {
			tp, mp := benchProviders(b, mode)
			tracer, meter := tp.Tracer("floor"), mp.Meter("floor")
			duration, _ := meter.Float64Histogram("duration")
			size, _ := meter.Int64Histogram("size")
			set := metric.WithAttributeSet(attribute.NewSet(attribute.String("mcp.method.name", "resources/read"),
				attribute.String("mcpres.resource.template", "bench://users/{id}"), attribute.String("mcpres.decision", "allowed")))
			opts := []metric.RecordOption{set}
			kind := trace.WithSpanKind(trace.SpanKindServer)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				_, span := tracer.Start(ctx, "resources/read", kind, trace.WithAttributes(
					attribute.String("mcp.method.name", "resources/read"), attribute.String("mcp.protocol.version", "2026-07-28"),
					attribute.String("mcp.session.id", "191c4850af6c49e08843a3f6c80e5046"), attribute.String("mcp.resource.uri", "bench://users/42"),
					attribute.String("user.id", "alice")))
				if span.IsRecording() {
					span.SetAttributes(attribute.String("mcpres.decision", "allowed"), attribute.String("mcpres.resource.template", "bench://users/{id}"),
						attribute.Int("mcpres.entries", 1), attribute.Int64("mcpres.read.bytes", 12), attribute.String("mcpres.mime.check", "match"))
				}
				span.End()
				duration.Record(ctx, time.Since(start).Seconds(), opts...)
				size.Record(ctx, 12, opts...)
			}
		})
	}
}

const benchPageSize = 100

// benchProviders are the SDK's providers for mode "on" (every span
// sampled, handed to a batch processor whose exporter drops them) or
// "unsampled" (none), recording metrics into a manual reader.
func benchProviders(b *testing.B, mode string) (*sdktrace.TracerProvider, *sdkmetric.MeterProvider) {
	sampler := sdktrace.AlwaysSample()
	if mode == "unsampled" {
		sampler = sdktrace.NeverSample()
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler), sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	b.Cleanup(func() { tp.Shutdown(context.Background()) })
	return tp, sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
}

// benchRegistry is a registry of 10,000 static resources and one
// template, observed as mode says.
func benchRegistry(b *testing.B, mode string) *resource.Registry {
	b.Helper()
	opts := &resource.Options{Logger: slog.New(slog.DiscardHandler), PageSize: benchPageSize}
	if mode != "off" {
		tp, mp := benchProviders(b, mode)
		obs, err := mcpotel.New(&mcpotel.Options{TracerProvider: tp, MeterProvider: mp})
		if err != nil {
			b.Fatal(err)
		}
		opts.Observer = obs
	}
	reg, err := resource.NewRegistry(opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { reg.Close() })
	for i := range 10_000 {
		u := fmt.Sprintf("bench://docs/%05d", i)
		if err := reg.Add(&mcp.Resource{URI: u, Name: u}, resource.Text(u)); err != nil {
			b.Fatal(err)
		}
	}
	err = reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "bench://users/{id}", Name: "user", MIMEType: "text/plain"},
		func(context.Context, *mcp.ReadResourceRequest, resource.Vars) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "hello, world"}}}, nil
		})
	if err != nil {
		b.Fatal(err)
	}
	return reg
}
