package serve_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// newServer returns a go-sdk server of a registry holding docs://readme,
// and the registry, to close once the server has stopped.
func newServer() (*mcp.Server, *resource.Registry) {
	reg, err := resource.NewRegistry(nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := reg.Add(&mcp.Resource{URI: "docs://readme", Name: "readme", MIMEType: "text/markdown"}, resource.Text("# Hello")); err != nil {
		log.Fatal(err)
	}
	server, err := reg.NewServer(&mcp.Implementation{Name: "my-server", Version: "v1.0.0"}, nil)
	if err != nil {
		log.Fatal(err)
	}
	return server, reg
}

// A server serves streamable HTTP on 127.0.0.1:8080/mcp until it is
// interrupted, then stops gracefully.
func ExampleListenAndServe() {
	server, reg := newServer()
	defer reg.Close() // after the server has stopped

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve.ListenAndServe(ctx, "127.0.0.1:8080", server, nil); err != nil {
		log.Fatal(err)
	}
}

// Serve on a listener that the system gives a free port, for a test. A
// client of protocol 2025-11-25 reads in its session; then the server
// stops.
func ExampleServe() {
	server, reg := newServer()
	defer reg.Close()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + serve.DefaultPath
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serve.Serve(ctx, ln, server, &serve.Options{Logger: slog.New(slog.DiscardHandler)})
	}()

	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		log.Fatal(err)
	}
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "docs://readme"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Contents[0].Text)
	cs.Close()

	stop()
	fmt.Println("Serve returned", <-done)
	// Output:
	// # Hello
	// Serve returned <nil>
}

// The endpoint in a mux of one's own, beside a health check, served by an
// http.Server with the same limits. A client of protocol 2026-07-28 needs
// no session.
func ExampleHandler() {
	server, reg := newServer()
	defer reg.Close()

	opts := &serve.Options{Path: "/api/mcp"}
	h, err := serve.Handler(server, opts)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/api/mcp", h)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	srv, err := serve.NewServer(mux, opts)
	if err != nil {
		log.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(srv.Handler)
	ts.Config = srv // a real server calls srv.ListenAndServeTLS, say
	ts.Start()
	defer ts.Close()

	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/api/mcp"},
		&mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "docs://readme"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Contents[0].Text)

	resp, err := http.Get(ts.URL + "/healthz")
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println("/healthz:", resp.Status)
	// Output:
	// # Hello
	// /healthz: 200 OK
}

// The limits of the zero Options.
func ExampleNewServer() {
	srv, err := serve.NewServer(http.NotFoundHandler(), nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("ReadHeaderTimeout:", srv.ReadHeaderTimeout)
	fmt.Println("ReadTimeout:", srv.ReadTimeout)
	fmt.Println("IdleTimeout:", srv.IdleTimeout)
	fmt.Println("MaxHeaderBytes:", srv.MaxHeaderBytes)
	fmt.Println("WriteTimeout:", srv.WriteTimeout)

	_, err = serve.NewServer(http.NotFoundHandler(), &serve.Options{ReadTimeout: -1})
	fmt.Println(err)
	// Output:
	// ReadHeaderTimeout: 10s
	// ReadTimeout: 30s
	// IdleTimeout: 2m0s
	// MaxHeaderBytes: 65536
	// WriteTimeout: 0s
	// serve: Options.ReadTimeout: negative duration -1ns
}

// Options.Wrap puts authentication, or here the client's address (for
// the registry's rate limits per caller), in front of the endpoint alone:
// other paths are 404 before it.
func ExampleOptions_wrap() {
	server, reg := newServer()
	defer reg.Close()

	h, err := serve.Handler(server, &serve.Options{
		Wrap: func(h http.Handler) http.Handler { return resource.WithClientAddress(h, "") },
	})
	if err != nil {
		log.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()

	resp, err := http.Get(ts.URL + "/other")
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()
	fmt.Println("/other:", resp.Status)
	// Output:
	// /other: 404 Not Found
}
