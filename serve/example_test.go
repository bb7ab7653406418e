package serve_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

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
// interrupted, then stops gracefully. Options.Registry, the registry that
// made the server, lets the edge serve 2026-07-28 listens itself.
func ExampleListenAndServe() {
	server, reg := newServer()
	defer reg.Close() // after the server has stopped

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := serve.ListenAndServe(ctx, "127.0.0.1:8080", server, &serve.Options{Registry: reg}); err != nil {
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

// ServeHandler serves any handler of the streamable HTTP transport
// behind the edge, as Serve serves a go-sdk server: here go-sdk's own
// stateless handler, for clients of 2026-07-28 only. (Module mcpgo's
// examples serve mark3labs/mcp-go's handler the same way.)
func ExampleServeHandler() {
	server, reg := newServer()
	defer reg.Close()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: true})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serve.ServeHandler(ctx, ln, h, &serve.Options{Logger: slog.New(slog.DiscardHandler)})
	}()

	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v0"}, nil)
	cs, err := client.Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: "http://" + ln.Addr().String() + serve.DefaultPath},
		&mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
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
	fmt.Println("ServeHandler returned", <-done)
	// Output:
	// # Hello
	// ServeHandler returned <nil>
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

// Options.Wrap puts authentication, or here a header of one's own, in
// front of the endpoint alone: other paths are 404 before it.
func ExampleOptions_wrap() {
	server, reg := newServer()
	defer reg.Close()

	h, err := serve.Handler(server, &serve.Options{
		Wrap: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				w.Header().Set("X-Served-By", "my-server")
				h.ServeHTTP(w, req)
			})
		},
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
	fmt.Println("/other:", resp.Status, resp.Header.Get("X-Served-By"))
	// Output:
	// /other: 404 Not Found
}

// Guard puts the edge in front of go-sdk's handler for every era, in a
// mux of one's own: one URL serves clients of every protocol version,
// each notified of the changes it subscribed to, 2025-06-18 and
// 2025-11-25 clients in stateful sessions, 2026-07-28 clients statelessly
// on their subscriptions/listen streams.
func ExampleGuard() {
	reg, err := resource.NewRegistry(&resource.Options{Subscriptions: resource.SubscriptionOptions{Window: time.Millisecond}})
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()
	if err := reg.Add(&mcp.Resource{URI: "docs://readme", Name: "readme"}, resource.Text("# Hello")); err != nil {
		log.Fatal(err)
	}
	server, err := reg.NewServer(&mcp.Implementation{Name: "my-server"}, nil)
	if err != nil {
		log.Fatal(err)
	}

	h, err := serve.Guard(serve.NewGoSDKHandler(server, &mcp.StreamableHTTPOptions{
		SessionTimeout:               30 * time.Minute, // reclaim the sessions of clients that went away
		PropagateRequestCancellation: true,             // a 2026-07-28 request ends with its HTTP request
	}), &serve.Options{SessionTimeout: 30 * time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	// A real server: serve.NewServer(mux, opts), then its ListenAndServe.
	hs := httptest.NewServer(mux)
	defer hs.Close()

	ctx := context.Background()
	for _, version := range []string{"2025-06-18", "2025-11-25", "2026-07-28"} {
		updated := make(chan string, 1)
		client := mcp.NewClient(&mcp.Implementation{Name: "client"}, &mcp.ClientOptions{
			ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
				updated <- req.Params.URI
			},
		})
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp"},
			&mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			log.Fatal(err)
		}
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "docs://readme"}); err != nil {
			log.Fatal(err)
		}
		// A 2026-07-28 client subscribes in the background: report the
		// change until it arrives.
		for uri := ""; uri == ""; {
			if err := reg.Changed("docs://readme"); err != nil {
				log.Fatal(err)
			}
			select {
			case uri = <-updated:
				fmt.Println(cs.InitializeResult().ProtocolVersion, "notified:", uri)
			case <-time.After(100 * time.Millisecond): // real clock: an Example runs over a real network; this is a poll period, not a bound
			}
		}
		cs.Close()
	}
	// Output:
	// 2025-06-18 notified: docs://readme
	// 2025-11-25 notified: docs://readme
	// 2026-07-28 notified: docs://readme
}

// A web app served from https://app.example.com calls the server from its
// users' browsers, which send the page's origin in the Origin header.
// AllowedOrigins allows that origin; a page of any other origin gets 403.
// Clients that are not browsers send no Origin, and are served.
func ExampleOptions_allowedOrigins() {
	server, reg := newServer()
	defer reg.Close()

	h, err := serve.Handler(server, &serve.Options{
		AllowedOrigins: []string{"https://app.example.com"}, // "scheme://host[:port]"; a malformed one is an error
	})
	if err != nil {
		log.Fatal(err)
	}
	// A real server: serve.ListenAndServe(ctx, addr, server, opts)
	hs := httptest.NewServer(h)
	defer hs.Close()

	// What a browser sends for a page of each origin.
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"app","version":"v1"}}}`
	for _, origin := range []string{"https://app.example.com", "https://attacker.example"} {
		req, err := http.NewRequest(http.MethodPost, hs.URL+serve.DefaultPath, strings.NewReader(initialize))
		if err != nil {
			log.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Origin", origin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(origin, "->", resp.Status)
		if resp.StatusCode == http.StatusForbidden {
			fmt.Println(resp.Header.Get("Content-Type"), string(body))
		}
	}
	// Output:
	// https://app.example.com -> 200 OK
	// https://attacker.example -> 403 Forbidden
	// application/json {"jsonrpc":"2.0","error":{"code":-32600,"message":"Forbidden: the Origin header names an origin this server does not accept"}}
}
