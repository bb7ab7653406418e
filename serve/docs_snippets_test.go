package serve_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/serve"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The snippet of docs/security.md: an Authorizer behind go-sdk's
// bearer-token middleware, put in front of the endpoint by Options.Wrap.
// A token's holder reads its team's notes and gets "not found" for
// another team's; a request without a token is refused with 401.
func TestDocsSecurityWrap(t *testing.T) {
	verifyToken := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if token != "alice-token" {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: "alice", Scopes: []string{"team:red"}, Expiration: time.Now().Add(time.Hour)}, nil
	}
	reg, err := resource.NewRegistry(&resource.Options{
		Authorize: func(ctx context.Context, a resource.Access) error {
			team := a.Var("team")
			if ti := a.TokenInfo(); team == "" || ti != nil && slices.Contains(ti.Scopes, "team:"+team) {
				return nil
			}
			return resource.ErrDenied
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	err = reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "notes://{team}/{id}", Name: "note", MIMEType: "text/plain"},
		func(ctx context.Context, req *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: vars.Get("team") + " note " + vars.Get("id")}}}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	server, err := reg.NewServer(&mcp.Implementation{Name: "notes"}, nil)
	if err != nil {
		t.Fatal(err)
	}

	// The edge records each client's address: anonymous callers' rate
	// budgets go by it, a verified caller's by identity.
	opts := &serve.Options{Wrap: auth.RequireBearerToken(verifyToken, nil)}
	// A real server: serve.ListenAndServe(ctx, addr, server, opts)
	h, err := serve.Handler(server, opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	defer hs.Close()
	endpoint := hs.URL + serve.DefaultPath

	resp, err := http.Post(endpoint, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without a token: %s, want 401", resp.Status)
	}

	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		cs := mcptest.ConnectHTTP(t, endpoint, "alice-token", version, nil)
		res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "notes://red/1"})
		if err != nil || res.Contents[0].Text != "red note 1" {
			t.Errorf("%s: notes://red/1: %v, %v", version, res, err)
		}
		_, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "notes://blue/1"})
		if jerr := (*jsonrpc.Error)(nil); !errors.As(err, &jerr) || jerr.Message != "Resource not found" {
			t.Errorf("%s: notes://blue/1: %v, want Resource not found", version, err)
		}
		cs.Close()
	}
}
