package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/mcpres/mcpres/mcpotel"
	"github.com/mcpres/mcpres/resource"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdkresource "go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
)

// serviceName names the server in the telemetry it exports.
const serviceName = "mcpres-records"

// telemetry returns the Observer that exports the registry's spans and
// metrics as mode says, and a function that flushes and stops the
// exporters; a nil Observer for mode "". Mode "stdout" writes them to out
// as JSON lines (spans in batches, within seconds of ending; metrics every
// metricsEvery; both again when the exporters are stopped);
// "otlp" sends them over OTLP/HTTP to the collector the standard
// OTEL_EXPORTER_OTLP_* variables name (http://localhost:4318 by default).
func telemetry(ctx context.Context, mode string, out io.Writer, metricsEvery time.Duration, logger *slog.Logger) (resource.Observer, func(context.Context) error, error) {
	var (
		spans   sdktrace.SpanExporter
		metrics sdkmetric.Exporter
		err     error
	)
	switch mode {
	case "":
		return nil, func(context.Context) error { return nil }, nil
	case "stdout":
		spans, err = stdouttrace.New(stdouttrace.WithWriter(out))
		if err == nil {
			metrics, err = stdoutmetric.New(stdoutmetric.WithWriter(out))
		}
	case "otlp":
		spans, err = otlptracehttp.New(ctx)
		if err == nil {
			metrics, err = otlpmetrichttp.New(ctx)
		}
	default:
		return nil, nil, fmt.Errorf("-otel %q: want stdout or otlp", mode)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("-otel %s: %w", mode, err)
	}
	res := sdkresource.NewSchemaless(semconv.ServiceName(serviceName))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(spans), sdktrace.WithResource(res))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithResource(res),
		sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metrics, sdkmetric.WithInterval(metricsEvery))))
	obs, err := mcpotel.New(&mcpotel.Options{TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		return nil, nil, err
	}
	logger.Info("exporting traces and metrics", "to", mode, "metrics_every", metricsEvery)
	shutdown := func(ctx context.Context) error {
		return errors.Join(tp.Shutdown(ctx), mp.Shutdown(ctx))
	}
	return obs, shutdown, nil
}
