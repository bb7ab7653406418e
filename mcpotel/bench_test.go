package mcpotel_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/mcpres/mcpres/mcpotel"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
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

const benchPageSize = 100

// benchRegistry is a registry of 10,000 static resources and one
// template, observed as mode says.
func benchRegistry(b *testing.B, mode string) *resource.Registry {
	b.Helper()
	opts := &resource.Options{Logger: slog.New(slog.DiscardHandler), PageSize: benchPageSize}
	if mode != "off" {
		sampler := sdktrace.AlwaysSample()
		if mode == "unsampled" {
			sampler = sdktrace.NeverSample()
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler), sdktrace.WithBatcher(tracetest.NewNoopExporter()))
		b.Cleanup(func() { tp.Shutdown(context.Background()) })
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
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
