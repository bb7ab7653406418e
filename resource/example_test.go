package resource_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"time"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A registry with a static resource and a template, served by a go-sdk
// server made in one call, read by a go-sdk client.
func ExampleRegistry_NewServer() {
	users := map[string]string{"ada l": `{"name":"Ada Lovelace"}`} // your database

	reg, err := resource.NewRegistry(nil) // options that make no sense are an error, not a guess
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close() // stops its timers and background delivery
	err = reg.Add(&mcp.Resource{URI: "docs://readme", Name: "readme", MIMEType: "text/markdown"},
		resource.Text("# Hello"))
	if err != nil {
		log.Fatal(err)
	}
	err = reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "db://users/{id}", Name: "user", MIMEType: "application/json"},
		func(ctx context.Context, req *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
			row, ok := users[vars.Get("id")] // decoded once: db://users/ada%20l gives "ada l"
			if !ok {
				return nil, resource.ErrNotFound // the client gets the protocol's "not found"
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: row}}}, nil
		},
		resource.WithExists(func(ctx context.Context, vars resource.Vars) (bool, error) {
			_, ok := users[vars.Get("id")] // resources/subscribe refuses users that do not exist
			return ok, nil
		}))
	if err != nil {
		log.Fatal(err)
	}

	// A go-sdk server that serves list, read, templates, subscribe and complete.
	server, err := reg.NewServer(&mcp.Implementation{Name: "my-server"}, nil)
	if err != nil {
		log.Fatal(err)
	}

	// A real server runs server.Run(ctx, &mcp.StdioTransport{}), or serves
	// HTTP (see package serve); here a client connects in memory.
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	// (A 2026-07-28 client would subscribe in the background, through
	// subscriptions/listen; this one subscribes in a session.)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client"}, nil).Connect(ctx, ct,
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	for _, uri := range []string{"docs://readme", "db://users/ada%20l"} {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			log.Fatal(err)
		}
		c := res.Contents[0]
		fmt.Println(c.URI, c.MIMEType, c.Text)
	}
	_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "db://users/bob"})
	fmt.Println(err)
	err = cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "db://users/bob"})
	fmt.Println(err)
	// Output:
	// docs://readme text/markdown # Hello
	// db://users/ada%20l application/json {"name":"Ada Lovelace"}
	// calling "resources/read": Resource not found
	// calling "resources/subscribe": cannot subscribe to "db://users/bob": no such resource
}

// Changed and its kin take URIs exactly as clients send them; a string no
// client could subscribe to, or a URI that names nothing, is an error
// rather than a notification that silently reaches no one.
func ExampleRegistry_Changed() {
	reg, err := resource.NewRegistry(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()
	err = reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "notes://{name}", Name: "note"},
		func(ctx context.Context, req *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "note " + vars.Get("name")}}}, nil
		})
	if err != nil {
		log.Fatal(err)
	}

	uri, err := reg.Expand("notes://{name}", "name", "gamma ray") // percent-encoded as clients send it
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(uri, reg.Changed(uri))                 // returns at once; bursts coalesce
	fmt.Println(reg.ChangedPrefix("notes://gamma"))    // every subscribed URI under a prefix
	fmt.Println(reg.ChangedTemplate("notes://{name}")) // every subscribed instance of a template
	fmt.Println(reg.Changed("notes://gamma ray"))      // not a URI: no client could subscribe to it
	fmt.Println(reg.Changed("other://x"))              // names nothing the registry serves
	// Output:
	// notes://gamma%20ray <nil>
	// <nil>
	// <nil>
	// resource: Changed("notes://gamma ray"): no client could subscribe to it: invalid resource URI: URI contains a character RFC 3986 does not allow: ' ' at byte 13 (percent-encode it) (a client would send "notes://gamma%20ray"; build URIs with Registry.Expand)
	// resource: Changed("other://x"): no static resource or template matches it: resource not found
}

// The handlers are plain functions over go-sdk types: a server that routes
// requests itself calls them directly.
func ExampleRegistry_ReadResource() {
	reg, err := resource.NewRegistry(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()
	reg.Add(&mcp.Resource{URI: "config://app", Name: "app config", MIMEType: "application/json"},
		resource.Text(`{"debug":false}`))

	res, err := reg.ReadResource(context.Background(), &mcp.ReadResourceRequest{
		Params: &mcp.ReadResourceParams{URI: "config://app"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Contents[0].MIMEType, res.Contents[0].Text)

	_, err = reg.ReadResource(context.Background(), &mcp.ReadResourceRequest{
		Params: &mcp.ReadResourceParams{URI: "postgres://admin:secret@db/app"},
	})
	fmt.Println(err)
	// Output:
	// application/json {"debug":false}
	// invalid resource URI: URI carries userinfo (credentials) in its authority
}

// A template read function returns resource.ErrNotFound for values that
// name nothing; the client gets the same answer as for an unknown URI.
func ExampleErrNotFound() {
	rows := map[string]string{"1": `{"name":"Ada"}`}
	reg, err := resource.NewRegistry(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()
	reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "db://users/{id}", Name: "user", MIMEType: "application/json"},
		func(ctx context.Context, req *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
			row, ok := rows[vars.Get("id")]
			if !ok {
				return nil, fmt.Errorf("user %s: %w", vars.Get("id"), resource.ErrNotFound)
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: row}}}, nil
		})

	for _, uri := range []string{"db://users/1", "db://users/2"} {
		res, err := reg.ReadResource(context.Background(), &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: uri}})
		if err != nil {
			fmt.Println(uri, "->", err)
			continue
		}
		fmt.Println(uri, "->", res.Contents[0].Text)
	}
	// Output:
	// db://users/1 -> {"name":"Ada"}
	// db://users/2 -> Resource not found
}

// Completion for a template variable: the completer returns every
// candidate, the registry sends at most 100 with an honest total.
func ExampleWithCompleter() {
	reg, err := resource.NewRegistry(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()
	services := []string{"api", "auth", "billing"}
	reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "log://{service}/today", Name: "today's log"},
		func(ctx context.Context, req *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
			return nil, resource.ErrNotFound
		},
		resource.WithCompleter("service", func(ctx context.Context, partial string, bound map[string]string) ([]string, error) {
			var out []string
			for _, s := range services {
				if strings.HasPrefix(s, partial) {
					out = append(out, s)
				}
			}
			return out, nil
		}))

	res, err := reg.Complete(context.Background(), &mcp.CompleteRequest{Params: &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: "log://{service}/today"},
		Argument: mcp.CompleteParamsArgument{Name: "service", Value: "a"},
	}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Completion.Values, res.Completion.Total, res.Completion.HasMore)
	// Output:
	// [api auth] 2 false
}

// A provider lists rows of a table as resources without registering each:
// it is asked for the rows after a key, a page at a time, exactly like
// SELECT … WHERE id > ? ORDER BY id LIMIT ?. A template reads them.
func ExampleRegistry_AddProvider() {
	users := map[string]string{"001": "Ada", "002": "Grace", "003": "Ken"}
	ids := []string{"001", "002", "003"} // the table's index: sorted keys

	reg, err := resource.NewRegistry(&resource.Options{PageSize: 2})
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()
	reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "db://users/{id}", Name: "user", MIMEType: "application/json"},
		func(ctx context.Context, req *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
			name, ok := users[vars.Get("id")]
			if !ok {
				return nil, resource.ErrNotFound
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: fmt.Sprintf(`{"name":%q}`, name)}}}, nil
		})
	reg.AddProvider("users", func(ctx context.Context, after string, limit int) ([]cursor.Item[*mcp.Resource], error) {
		var out []cursor.Item[*mcp.Resource]
		for _, id := range ids {
			if id > after && len(out) < limit {
				out = append(out, cursor.Item[*mcp.Resource]{Key: id, Value: &mcp.Resource{
					URI: "db://users/" + id, Name: users[id], MIMEType: "application/json",
				}})
			}
		}
		return out, nil
	})

	ctx := context.Background()
	next := ""
	for page := 1; ; page++ {
		res, err := reg.ListResources(ctx, &mcp.ListResourcesRequest{Params: &mcp.ListResourcesParams{Cursor: next}})
		if err != nil {
			log.Fatal(err)
		}
		for _, r := range res.Resources {
			fmt.Println(page, r.URI, r.Name)
		}
		if next = res.NextCursor; next == "" {
			break
		}
	}
	// Output:
	// 1 db://users/001 Ada
	// 1 db://users/002 Grace
	// 2 db://users/003 Ken
}

// An Authorizer that lets each caller at the teams its bearer token
// grants. Served over streamable HTTP behind go-sdk's bearer-token
// middleware (see the http example),
//
//	serve.ListenAndServe(ctx, addr, server, &serve.Options{Wrap: auth.RequireBearerToken(verify, nil)})
//
// every request carries the verified token, as the requests built by hand
// below do.
func ExampleAuthorizer() {
	reg, err := resource.NewRegistry(&resource.Options{
		Authorize: func(ctx context.Context, a resource.Access) error {
			team := a.Var("team")
			if team == "" { // the template itself, and resources of no team
				return nil
			}
			if ti := a.TokenInfo(); ti != nil && slices.Contains(ti.Scopes, "team:"+team) {
				return nil
			}
			return fmt.Errorf("%w: %q may not see team %q", resource.ErrDenied, a.Identity, team)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()
	err = reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "notes://{team}/{id}", Name: "note", MIMEType: "text/plain"},
		func(ctx context.Context, req *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "note " + vars.Get("id")}}}, nil
		},
		resource.WithInstances(func(ctx context.Context, after string, limit int) ([]cursor.Item[*mcp.Resource], error) {
			var out []cursor.Item[*mcp.Resource]
			for _, key := range []string{"a/1", "a/2", "b/1"} {
				if key > after && len(out) < limit {
					out = append(out, cursor.Item[*mcp.Resource]{Key: key, Value: &mcp.Resource{URI: "notes://" + key, Name: key}})
				}
			}
			return out, nil
		}))
	if err != nil {
		log.Fatal(err)
	}

	bob := &mcp.RequestExtra{TokenInfo: &auth.TokenInfo{UserID: "bob", Scopes: []string{"team:b"}}}
	ctx := context.Background()
	list, err := reg.ListResources(ctx, &mcp.ListResourcesRequest{Params: &mcp.ListResourcesParams{}, Extra: bob})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range list.Resources {
		fmt.Println("listed:", r.URI, list.CacheScope)
	}
	res, err := reg.ReadResource(ctx, &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: "notes://b/1"}, Extra: bob})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("read:", res.Contents[0].Text)
	_, err = reg.ReadResource(ctx, &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: "notes://a/1"}, Extra: bob})
	fmt.Println("read notes://a/1:", err)
	// Output:
	// listed: notes://b/1 private
	// read: note 1
	// read notes://a/1: Resource not found
}

// A server made elsewhere serves a registry once it is mounted; it serves
// resources/subscribe only if it was made with the registry's handlers.
func ExampleMount() {
	reg, err := resource.NewRegistry(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()
	reg.Add(&mcp.Resource{URI: "docs://readme", Name: "readme", MIMEType: "text/markdown"}, resource.Text("# Hello"))

	server := mcp.NewServer(&mcp.Implementation{Name: "example"}, &mcp.ServerOptions{
		SubscribeHandler:   reg.Subscribe,
		UnsubscribeHandler: reg.Unsubscribe,
	})
	resource.Mount(server, reg)

	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	caps := cs.InitializeResult().Capabilities.Resources
	fmt.Println("subscribe:", caps.Subscribe, "listChanged:", caps.ListChanged)
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://readme"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Contents[0].MIMEType, res.Contents[0].Text)
	// Output:
	// subscribe: true listChanged: true
	// text/markdown # Hello
}

// NewRegistry refuses configuration that makes no sense rather than guess
// what was meant, naming each field that is wrong.
func ExampleNewRegistry() {
	_, err := resource.NewRegistry(&resource.Options{
		PageSize:   -1,
		Cache:      resource.Cache{Scope: "everyone"},
		RateLimits: resource.RateLimits{Read: &resource.RateLimit{Rate: 10}},
	})
	fmt.Println(err)
	// Output:
	// resource: NewRegistry: Options.PageSize: -1 is outside 1 to 10000 (0 means 100)
	// Options.Cache: unknown cache scope "everyone"
	// Options.RateLimits.Read: Burst 0 allows nothing; it must be at least 1
}

// An Authorizer behind go-sdk's bearer-token middleware on streamable HTTP,
// which serve's edge wraps around the endpoint: every request carries the
// verified token, and each caller sees only its teams' notes.
func ExampleAuthorizer_http() {
	verifyToken := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if token != "alice-token" { // look the token up, or check its signature
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: "alice", Scopes: []string{"team:red"}, Expiration: time.Now().Add(time.Hour)}, nil
	}

	reg, err := resource.NewRegistry(&resource.Options{
		Authorize: func(ctx context.Context, a resource.Access) error {
			team := a.Var("team") // as matched in the URI, or chosen in a completion
			if ti := a.TokenInfo(); team == "" || ti != nil && slices.Contains(ti.Scopes, "team:"+team) {
				return nil
			}
			return resource.ErrDenied // logged with the reason; the client sees "not found"
		},
		RateLimits: resource.RateLimits{Read: &resource.RateLimit{Rate: 20, Burst: 40}},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()
	err = reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "notes://{team}/{id}", Name: "note", MIMEType: "text/plain"},
		func(ctx context.Context, req *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: vars.Get("team") + " note " + vars.Get("id")}}}, nil
		})
	if err != nil {
		log.Fatal(err)
	}
	server, err := reg.NewServer(&mcp.Implementation{Name: "notes"}, nil)
	if err != nil {
		log.Fatal(err)
	}

	// The edge records each client's address: anonymous callers' rate
	// budgets go by it, a verified caller's by identity.
	h, err := serve.Handler(server, &serve.Options{Wrap: auth.RequireBearerToken(verifyToken, nil)})
	if err != nil {
		log.Fatal(err)
	}
	// A real server: serve.ListenAndServe(ctx, addr, server, opts)
	hs := httptest.NewServer(h)
	defer hs.Close()

	ctx := context.Background()
	transport := &mcp.StreamableClientTransport{Endpoint: hs.URL + serve.DefaultPath,
		HTTPClient: &http.Client{Transport: bearer{token: "alice-token"}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client"}, nil).Connect(ctx, transport, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	for _, uri := range []string{"notes://red/1", "notes://blue/1"} {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		var jerr *jsonrpc.Error
		if errors.As(err, &jerr) {
			fmt.Println(uri, "->", jerr.Code, jerr.Message)
			continue
		} else if err != nil {
			log.Fatal(err)
		}
		fmt.Println(uri, "->", res.Contents[0].Text, res.CacheScope)
	}
	// Output:
	// notes://red/1 -> red note 1 private
	// notes://blue/1 -> -32602 Resource not found
}

// bearer is an http.RoundTripper that presents a bearer token, as an MCP
// host configured with one does.
type bearer struct{ token string }

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(req)
}
