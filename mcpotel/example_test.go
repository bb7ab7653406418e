package mcpotel_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mcpres/mcpres/mcpotel"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// A registry observed with OpenTelemetry: each call is a span, and a
// duration by method and template. A program would give New its own
// providers (exporting through OTLP, say), or none to use the global
// ones; here they keep what they record, to print it.
func ExampleNew() {
	spans := tracetest.NewSpanRecorder()
	metrics := sdkmetric.NewManualReader()
	obs, err := mcpotel.New(&mcpotel.Options{
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)),
		MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(metrics)),
	})
	if err != nil {
		log.Fatal(err)
	}
	reg, err := resource.NewRegistry(&resource.Options{Observer: obs})
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()
	reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "db://users/{id}", Name: "user", MIMEType: "application/json"},
		func(_ context.Context, _ *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: `{"id":` + vars.Get("id") + `}`}}}, nil
		})

	ctx := context.Background()
	reg.ReadResource(ctx, &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{
		URI: "db://users/42",
		// A client's trace context, as SEP-414 has it: the read's span
		// continues that trace.
		Meta: mcp.Meta{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
	}})
	reg.ReadResource(ctx, &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: "db://users/7"}})

	for _, s := range spans.Ended() {
		fmt.Println(s.Name(), s.SpanContext().TraceID().String() == "4bf92f3577b34da6a3ce929d0e0e4736")
		for _, kv := range s.Attributes() {
			switch kv.Key {
			case mcpotel.AttrResourceURI, mcpotel.AttrTemplate, mcpotel.AttrDecision, mcpotel.AttrReadBytes, mcpotel.AttrMIMECheck:
				fmt.Printf("  %s=%s\n", kv.Key, kv.Value.Emit())
			}
		}
	}
	var rm metricdata.ResourceMetrics
	metrics.Collect(ctx, &rm)
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if m.Name == "mcp.server.operation.duration" {
			for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
				tmpl, _ := dp.Attributes.Value(attribute.Key("mcpres.resource.template"))
				fmt.Println(m.Name, tmpl.AsString(), dp.Count)
			}
		}
	}
	// Output:
	// resources/read true
	//   mcp.resource.uri=db://users/42
	//   mcpres.decision=allowed
	//   mcpres.resource.template=db://users/{id}
	//   mcpres.read.bytes=9
	//   mcpres.mime.check=match
	// resources/read false
	//   mcp.resource.uri=db://users/7
	//   mcpres.decision=allowed
	//   mcpres.resource.template=db://users/{id}
	//   mcpres.read.bytes=8
	//   mcpres.mime.check=match
	// mcp.server.operation.duration db://users/{id} 2
}

// The usual set-up: a program that sets up OpenTelemetry (with
// otel.SetTracerProvider and otel.SetMeterProvider, and exporters of its
// choice) gives its registry an Observer on those providers.
func Example() {
	obs, err := mcpotel.New(nil) // the global providers
	if err != nil {
		log.Fatal(err)
	}
	reg, err := resource.NewRegistry(&resource.Options{Observer: obs})
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()
	server, err := reg.NewServer(&mcp.Implementation{Name: "observed", Version: "v1"}, nil)
	if err != nil {
		log.Fatal(err)
	}
	_ = server // served over stdio or HTTP as usual
	// Output:
}
