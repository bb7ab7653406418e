package resource_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpres/mcpres/cursor"
	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
)

// This file provokes every refusal the registry can give, over the real
// protocol in each protocol version, and checks its code against what
// that version allows (errors.go quotes the specification).

// specCodes are the codes each protocol version defines besides
// JSON-RPC's own, and those it forbids.
var specCodes = map[string]struct{ defined, forbidden []int64 }{
	// 2026-07-28 (basic, "Error Codes") files -32002 under "2025-11-25
	// and earlier".
	"2025-06-18": {defined: []int64{-32002}},
	// server/resources, "Error Handling": "Resource not found: -32002";
	// the schema's URL_ELICITATION_REQUIRED.
	"2025-11-25": {defined: []int64{-32002, -32042}},
	// basic, "Error Codes": HeaderMismatch, MissingRequiredClientCapability
	// and UnsupportedProtocolVersion; "Implementations of this protocol
	// version MUST NOT emit these codes: -32002 […] -32042".
	"2026-07-28": {defined: []int64{-32020, -32021, -32022}, forbidden: []int64{-32002, -32042}},
}

// allowed reports whether a server may answer a client on version with
// code: one of JSON-RPC's own, one version defines, or one outside
// JSON-RPC's reserved -32768…-32000. That holds every version to
// 2026-07-28's rule: the older ones leave -32000…-32099 to
// implementations, but what a code there means may change with the next.
func allowed(version string, code int64) bool {
	spec := specCodes[version]
	switch {
	case code == jsonrpc.CodeParseError || code >= jsonrpc.CodeInternalError && code <= jsonrpc.CodeInvalidRequest:
		return true
	case slices.Contains(spec.forbidden, code):
		return false
	case slices.Contains(spec.defined, code):
		return true
	}
	return code < -32768 || code > -32000
}

// notFound is the code of an unknown resource by default: -32002 before
// 2026-07-28, -32602 from it.
func notFound(version string) int64 {
	if version >= "2026-07-28" {
		return jsonrpc.CodeInvalidParams
	}
	return resource.CodeLegacyResourceNotFound
}

// A codesFixture is a registry that can refuse in every way, served by a
// server made with NewServer, and a client connected to it.
type codesFixture struct {
	reg     *resource.Registry
	server  *mcp.Server
	session *mcp.ClientSession
	version string
	// listens receives what the server answers each 2026-07-28
	// subscriptions/listen with: its error, or nil once acknowledged.
	listens chan error
}

func newCodesFixture(t *testing.T, version string, opts *resource.Options) *codesFixture {
	t.Helper()
	opts.Logger = quietLogger()
	if opts.PageSize == 0 {
		opts.PageSize = 1
	}
	opts.Authorize = func(_ context.Context, a resource.Access) error {
		switch {
		case a.URI == "test://denied" || a.Template == "test://private/{id}":
			return resource.ErrDenied
		case a.URI == "test://authfail":
			return errors.New("the policy store is down")
		}
		return nil
	}
	reg := newRegistry(t, opts)
	text := func(s string) resource.ReadFunc { return resource.Text(s) }
	returns := func(err error) resource.ReadFunc {
		return func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) { return nil, err }
	}
	for _, e := range []struct {
		uri, mime string
		read      resource.ReadFunc
		opts      []resource.ResourceOption
	}{
		{uri: "test://a", read: text("a")},
		{uri: "test://denied", read: text("secret")},
		{uri: "test://authfail", read: text("secret")},
		{uri: "test://fail", read: returns(errors.New("boom"))},
		{uri: "test://panic", read: func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			panic("boom")
		}},
		{uri: "test://empty", read: func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{}, nil
		}},
		{uri: "test://big", read: text("more than a byte"), opts: []resource.ResourceOption{resource.WithMaxReadBytes(1)}},
		{uri: "test://json", mime: "application/json", read: text("{not json")},
		{uri: "test://other", read: func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://denied", Text: "secret"}}}, nil
		}},
		{uri: "test://gone", read: returns(resource.ErrNotFound)},
		{uri: "test://sdk-gone", read: returns(mcp.ResourceNotFoundError("test://sdk-gone"))},
		{uri: "test://legacy-gone", read: returns(&jsonrpc.Error{Code: resource.CodeLegacyResourceNotFound, Message: "Resource not found"})},
	} {
		require.NoError(t, reg.Add(&mcp.Resource{URI: e.uri, Name: e.uri, MIMEType: e.mime}, e.read, e.opts...))
	}
	item := func(_ context.Context, _ *mcp.ReadResourceRequest, v resource.Vars) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: v.Get("id")}}}, nil
	}
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "test://items/{id}", Name: "item"}, item,
		resource.WithExists(func(_ context.Context, v resource.Vars) (bool, error) {
			switch v.Get("id") {
			case "missing":
				return false, nil
			case "broken":
				return false, errors.New("the database is down")
			}
			return true, nil
		}),
		resource.WithCompleter("id", func(_ context.Context, partial string, _ map[string]string) ([]string, error) {
			switch partial {
			case "fail":
				return nil, errors.New("the index is down")
			case "panic":
				panic("boom")
			}
			return []string{"a"}, nil
		})))
	require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "test://private/{id}", Name: "private"}, item))

	server, err := reg.NewServer(&mcp.Implementation{Name: "codes", Version: "v0"}, &mcp.ServerOptions{Logger: quietLogger()})
	require.NoError(t, err)
	f := &codesFixture{reg: reg, server: server, version: version, listens: make(chan error, 10)}
	reportListenErrors(server, f.listens)
	server.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == "notifications/subscriptions/acknowledged" {
				f.listens <- err
			}
			return res, err
		}
	})
	f.session = mcptest.Connect(t, server, version, nil)
	return f
}

func (f *codesFixture) read(t *testing.T, uri string) error {
	_, err := f.session.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
	return err
}

// subscribe subscribes f's client to uri: resources/subscribe, or a
// 2026-07-28 subscriptions/listen. It returns the server's answer.
func (f *codesFixture) subscribe(t *testing.T, uri string) error {
	err := f.session.Subscribe(t.Context(), &mcp.SubscribeParams{URI: uri})
	if f.version < "2026-07-28" || err != nil {
		return err
	}
	// go-sdk's client opens a 2026-07-28 listen in the background and
	// drops its answer: take it from the server.
	return mcptest.Receive(t, f.listens, "answer to the listen for "+uri)
}

func (f *codesFixture) complete(t *testing.T, template, variable, partial string) error {
	_, err := f.session.Complete(t.Context(), &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: template},
		Argument: mcp.CompleteParamsArgument{Name: variable, Value: partial},
	})
	return err
}

// close closes f's registry, after which it refuses everything.
func (f *codesFixture) close(t *testing.T) { require.NoError(t, f.reg.Close()) }

// TestRefusalCodes provokes each refusal in each protocol version and
// checks that its code is the one the registry documents, that the
// version allows it, and that a 2026-07-28 client never gets -32002.
func TestRefusalCodes(t *testing.T) {
	t.Parallel()
	invalidParams := func(string) int64 { return jsonrpc.CodeInvalidParams }
	internal := func(string) int64 { return jsonrpc.CodeInternalError }
	rateLimited := func(string) int64 { return resource.CodeRateLimited }
	refusals := []struct {
		name   string
		opts   resource.Options // the fixture's options, besides its own
		before string           // if set, the refusal exists only before this version
		do     func(t *testing.T, f *codesFixture) error
		want   func(version string) int64
	}{
		// resources/read
		{name: "read an unknown URI", want: notFound,
			do: func(t *testing.T, f *codesFixture) error { return f.read(t, "test://missing") }},
		{name: "read an unknown URI under NotFoundInvalidParams", want: invalidParams,
			opts: resource.Options{NotFound: resource.NotFoundInvalidParams},
			do:   func(t *testing.T, f *codesFixture) error { return f.read(t, "test://missing") }},
		{name: "read a malformed URI", want: invalidParams,
			do: func(t *testing.T, f *codesFixture) error { return f.read(t, "not a uri") }},
		{name: "read a URI with userinfo", want: invalidParams,
			do: func(t *testing.T, f *codesFixture) error { return f.read(t, "test://user:pw@host/x") }},
		{name: "read a URI over MaxURILength", want: invalidParams,
			do: func(t *testing.T, f *codesFixture) error {
				return f.read(t, "test://a/"+strings.Repeat("x", resource.DefaultMaxURILength))
			}},
		{name: "read a denied URI", want: notFound,
			do: func(t *testing.T, f *codesFixture) error { return f.read(t, "test://denied") }},
		{name: "read when the Authorizer fails", want: notFound,
			do: func(t *testing.T, f *codesFixture) error { return f.read(t, "test://authfail") }},
		{name: "read function returns ErrNotFound", want: notFound,
			do: func(t *testing.T, f *codesFixture) error { return f.read(t, "test://gone") }},
		{name: "read function returns go-sdk's ResourceNotFoundError", want: notFound,
			do: func(t *testing.T, f *codesFixture) error { return f.read(t, "test://sdk-gone") }},
		{name: "read function returns -32002", want: notFound,
			do: func(t *testing.T, f *codesFixture) error { return f.read(t, "test://legacy-gone") }},
		{name: "read function fails", want: internal,
			do: func(t *testing.T, f *codesFixture) error { return f.read(t, "test://fail") }},
		{name: "read function panics", want: internal,
			do: func(t *testing.T, f *codesFixture) error { return f.read(t, "test://panic") }},
		{name: "read function returns no contents", want: internal,
			do: func(t *testing.T, f *codesFixture) error { return f.read(t, "test://empty") }},
		{name: "read over the read cap", want: internal,
			do: func(t *testing.T, f *codesFixture) error { return f.read(t, "test://big") }},
		{name: "read content not of its MIME type", want: internal,
			do: func(t *testing.T, f *codesFixture) error { return f.read(t, "test://json") }},
		{name: "read content of a URI the caller may not read", want: internal,
			do: func(t *testing.T, f *codesFixture) error { return f.read(t, "test://other") }},
		{name: "read over the rate limit", want: rateLimited,
			opts: resource.Options{RateLimits: resource.RateLimits{Read: &resource.RateLimit{Rate: rate.Every(time.Hour), Burst: 1}}},
			do: func(t *testing.T, f *codesFixture) error {
				require.NoError(t, f.read(t, "test://a"))
				return f.read(t, "test://a")
			}},
		{name: "read from a closed registry", want: internal,
			do: func(t *testing.T, f *codesFixture) error { f.close(t); return f.read(t, "test://a") }},

		// resources/list, resources/templates/list
		{name: "list with a forged cursor", want: invalidParams,
			do: func(t *testing.T, f *codesFixture) error {
				_, err := f.session.ListResources(t.Context(), &mcp.ListResourcesParams{Cursor: "forged"})
				return err
			}},
		{name: "list templates with a forged cursor", want: invalidParams,
			do: func(t *testing.T, f *codesFixture) error {
				_, err := f.session.ListResourceTemplates(t.Context(), &mcp.ListResourceTemplatesParams{Cursor: "forged"})
				return err
			}},
		{name: "list templates with resources/list's cursor", want: invalidParams,
			do: func(t *testing.T, f *codesFixture) error {
				page, err := f.session.ListResources(t.Context(), nil)
				require.NoError(t, err)
				require.NotEmpty(t, page.NextCursor)
				_, err = f.session.ListResourceTemplates(t.Context(), &mcp.ListResourceTemplatesParams{Cursor: page.NextCursor})
				return err
			}},
		{name: "list when a provider fails", want: internal,
			opts: resource.Options{PageSize: resource.MaxPageSize}, // a page that reaches the provider
			do: func(t *testing.T, f *codesFixture) error {
				require.NoError(t, f.reg.AddProvider("broken", func(context.Context, string, int) ([]cursor.Item[*mcp.Resource], error) {
					return nil, errors.New("the catalogue is down")
				}))
				_, err := f.session.ListResources(t.Context(), nil)
				return err
			}},
		{name: "list from a closed registry", want: internal,
			do: func(t *testing.T, f *codesFixture) error {
				f.close(t)
				_, err := f.session.ListResources(t.Context(), nil)
				return err
			}},

		// resources/subscribe, and the subscriptions of a 2026-07-28 listen
		{name: "subscribe to an unknown URI", want: invalidParams,
			do: func(t *testing.T, f *codesFixture) error { return f.subscribe(t, "test://missing") }},
		{name: "subscribe to a malformed URI", want: invalidParams,
			do: func(t *testing.T, f *codesFixture) error { return f.subscribe(t, "not a uri") }},
		{name: "subscribe to a denied URI", want: invalidParams,
			do: func(t *testing.T, f *codesFixture) error { return f.subscribe(t, "test://denied") }},
		{name: "subscribe to an instance that does not exist", want: invalidParams,
			do: func(t *testing.T, f *codesFixture) error { return f.subscribe(t, "test://items/missing") }},
		{name: "subscribe when the exists check fails", want: internal,
			do: func(t *testing.T, f *codesFixture) error { return f.subscribe(t, "test://items/broken") }},
		{name: "subscribe to another spelling of an instance", want: invalidParams,
			do: func(t *testing.T, f *codesFixture) error { return f.subscribe(t, "test://items/%61") }},
		{name: "subscribe over the rate limit", want: rateLimited,
			opts: resource.Options{RateLimits: resource.RateLimits{Subscribe: &resource.RateLimit{Rate: rate.Every(time.Hour), Burst: 1}}},
			do: func(t *testing.T, f *codesFixture) error {
				require.NoError(t, f.subscribe(t, "test://a"))
				return f.subscribe(t, "test://items/a")
			}},
		// At 2026-07-28 the cap is a listen stream's, and go-sdk's client
		// opens one stream for each URI: TestSubscriptionsPerListenStream
		// (caps_test.go) sends one listen of many.
		{name: "subscribe over MaxPerSession", want: invalidParams, before: "2026-07-28",
			opts: resource.Options{Subscriptions: resource.SubscriptionOptions{MaxPerSession: 1}},
			do: func(t *testing.T, f *codesFixture) error {
				require.NoError(t, f.subscribe(t, "test://a"))
				return f.subscribe(t, "test://items/a")
			}},
		{name: "subscribe over MaxPerCaller", want: invalidParams,
			opts: resource.Options{
				Subscriptions: resource.SubscriptionOptions{MaxPerCaller: 1},
				RateKey:       func(context.Context, mcp.Request, string) string { return "one caller" },
			},
			do: func(t *testing.T, f *codesFixture) error {
				require.NoError(t, f.subscribe(t, "test://a"))
				return f.subscribe(t, "test://items/a")
			}},
		{name: "subscribe over Max", want: invalidParams,
			opts: resource.Options{Subscriptions: resource.SubscriptionOptions{Max: 1}},
			do: func(t *testing.T, f *codesFixture) error {
				require.NoError(t, f.subscribe(t, "test://a"))
				return f.subscribe(t, "test://items/a")
			}},
		{name: "subscribe over MaxBytesPerCaller", want: invalidParams,
			opts: resource.Options{
				Subscriptions: resource.SubscriptionOptions{MaxBytesPerCaller: len("test://a")},
				RateKey:       func(context.Context, mcp.Request, string) string { return "one caller" },
			},
			do: func(t *testing.T, f *codesFixture) error {
				require.NoError(t, f.subscribe(t, "test://a"))
				return f.subscribe(t, "test://items/a")
			}},
		{name: "subscribe over MaxBytes", want: invalidParams,
			opts: resource.Options{Subscriptions: resource.SubscriptionOptions{MaxBytes: len("test://a")}},
			do: func(t *testing.T, f *codesFixture) error {
				require.NoError(t, f.subscribe(t, "test://a"))
				return f.subscribe(t, "test://items/a")
			}},
		{name: "subscribe without a way to be notified", want: invalidParams, before: "2026-07-28",
			do: func(t *testing.T, f *codesFixture) error {
				// A session of go-sdk's stateless HTTP handler is sent
				// nothing after its responses; a 2026-07-28 client is
				// notified on its listen stream, so only older ones are
				// refused.
				hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return f.server },
					&mcp.StreamableHTTPOptions{Stateless: true}))
				t.Cleanup(hs.Close)
				cs := mcptest.ConnectHTTP(t, hs.URL, "", f.version, nil)
				return cs.Subscribe(t.Context(), &mcp.SubscribeParams{URI: "test://a"})
			}},
		{name: "subscribe on a closed registry", want: internal,
			do: func(t *testing.T, f *codesFixture) error { f.close(t); return f.subscribe(t, "test://a") }},

		// completion/complete
		{name: "complete an unknown template", want: invalidParams,
			do: func(t *testing.T, f *codesFixture) error { return f.complete(t, "test://nothing/{id}", "id", "") }},
		{name: "complete an unknown variable", want: invalidParams,
			do: func(t *testing.T, f *codesFixture) error { return f.complete(t, "test://items/{id}", "other", "") }},
		{name: "complete without an argument name", want: invalidParams,
			do: func(t *testing.T, f *codesFixture) error { return f.complete(t, "test://items/{id}", "", "") }},
		{name: "complete a denied template", want: invalidParams,
			do: func(t *testing.T, f *codesFixture) error { return f.complete(t, "test://private/{id}", "id", "") }},
		{name: "completer fails", want: internal,
			do: func(t *testing.T, f *codesFixture) error { return f.complete(t, "test://items/{id}", "id", "fail") }},
		{name: "completer panics", want: internal,
			do: func(t *testing.T, f *codesFixture) error { return f.complete(t, "test://items/{id}", "id", "panic") }},
		{name: "complete on a closed registry", want: internal,
			do: func(t *testing.T, f *codesFixture) error {
				f.close(t)
				return f.complete(t, "test://items/{id}", "id", "")
			}},
	}
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			for _, r := range refusals {
				if r.before != "" && version >= r.before {
					continue
				}
				t.Run(r.name, func(t *testing.T) {
					opts := r.opts
					jerr := rpcError(t, r.do(t, newCodesFixture(t, version, &opts)))
					assert.Equal(t, r.want(version), jerr.Code, "%s at %s: %s", r.name, version, jerr.Message)
					assert.True(t, allowed(version, jerr.Code), "%s at %s: code %d is not one protocol %s allows", r.name, version, jerr.Code, version)
				})
			}
		})
	}
}

// The rules of allowed, on the codes that matter.
func TestAllowedCodes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		version string
		code    int64
		want    bool
	}{
		{"2025-06-18", jsonrpc.CodeInvalidParams, true},
		{"2025-06-18", -32002, true},
		{"2025-11-25", -32002, true},
		{"2026-07-28", -32002, false},
		{"2026-07-28", -32042, false},
		{"2025-11-25", -32042, true},
		{"2026-07-28", -32022, true},
		{"2026-07-28", -32029, false},
		{"2025-11-25", -32029, false},
		{"2026-07-28", -32768, false},
		{"2026-07-28", -32000, false},
		{"2026-07-28", -32769, true},
		{"2026-07-28", -31999, true},
		{"2026-07-28", resource.CodeRateLimited, true},
	} {
		assert.Equal(t, tc.want, allowed(tc.version, tc.code), "code %d at %s", tc.code, tc.version)
	}
}
