package main

// This file holds the knowledge base's access control over HTTP: the tokens
// file, the bearer-token verifier go-sdk's auth middleware calls, and the
// registry's Authorizer.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// allCollections, in a token's collections, grants every collection.
const allCollections = "*"

// scopePrefix starts the scope that grants a collection:
// "collection:engineering", or "collection:*" for every one.
const scopePrefix = "collection:"

// A TokensFile is the JSON file the -tokens flag names:
//
//	{"tokens": [
//		{"token": "alice-secret", "user": "alice", "collections": ["engineering", "support"]},
//		{"token": "bob-secret", "user": "bob", "collections": ["product"]}
//	]}
type TokensFile struct {
	Tokens []TokenEntry `json:"tokens"`
}

// A TokenEntry is one bearer token: who presents it, and the collections
// it grants ("*" for every collection, including those created later).
type TokenEntry struct {
	Token       string   `json:"token"`
	User        string   `json:"user"`
	Collections []string `json:"collections"`
}

// A tokenSet holds the tokens of a tokens file, ready to verify.
type tokenSet struct {
	// byHash maps the SHA-256 of each token to what it grants. Looking
	// tokens up by hash rather than by value keeps the lookup's timing from
	// telling an attacker how much of a guess matches a real token.
	byHash map[[sha256.Size]byte]*auth.TokenInfo
}

// loadTokens reads and checks the tokens file at path.
func loadTokens(path string) (*tokenSet, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	ts, err := parseTokens(data)
	if err != nil {
		return nil, fmt.Errorf("tokens file %s: %w", path, err)
	}
	return ts, nil
}

// parseTokens parses and checks a tokens file: at least one token; each
// token non-empty, without spaces and unique; each user non-empty; each
// collection a valid collection name (CheckName) or "*". Unknown fields
// are errors, so that a misspelt "collections" is not silently no access.
func parseTokens(data []byte) (*tokenSet, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f TokensFile
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("data after the JSON object")
	}
	if len(f.Tokens) == 0 {
		return nil, errors.New(`no tokens: want {"tokens": [{"token": …, "user": …, "collections": […]}, …]}`)
	}
	ts := &tokenSet{byHash: make(map[[sha256.Size]byte]*auth.TokenInfo, len(f.Tokens))}
	for i, e := range f.Tokens {
		info, err := e.check()
		if err != nil {
			return nil, fmt.Errorf("token %d: %w", i+1, err)
		}
		h := sha256.Sum256([]byte(e.Token))
		if _, dup := ts.byHash[h]; dup {
			return nil, fmt.Errorf("token %d (user %q): the same token is listed twice", i+1, e.User)
		}
		ts.byHash[h] = info
	}
	return ts, nil
}

// check checks e and returns the token information it grants.
func (e TokenEntry) check() (*auth.TokenInfo, error) {
	switch {
	case e.Token == "":
		return nil, errors.New("empty token")
	case strings.ContainsFunc(e.Token, isSpace):
		return nil, fmt.Errorf("user %q: a token cannot hold spaces", e.User)
	case strings.TrimSpace(e.User) == "":
		return nil, errors.New("empty user")
	}
	info := &auth.TokenInfo{UserID: e.User}
	for _, c := range e.Collections {
		if c != allCollections {
			if err := CheckName("collection", c); err != nil {
				return nil, fmt.Errorf("user %q: %w (or %q for every collection)", e.User, err, allCollections)
			}
		}
		if s := scopePrefix + c; !slices.Contains(info.Scopes, s) {
			info.Scopes = append(info.Scopes, s)
		}
	}
	return info, nil
}

func isSpace(r rune) bool { return strings.ContainsRune(" \t\r\n", r) }

// verify is the auth.TokenVerifier of the HTTP server: it returns what
// token grants, or an error wrapping auth.ErrInvalidToken (answered with
// HTTP 401) if the token is unknown. Tokens from a file do not expire: the
// middleware is told so (AllowMissingExpiration).
func (ts *tokenSet) verify(ctx context.Context, token string, req *http.Request) (*auth.TokenInfo, error) {
	info, ok := ts.byHash[sha256.Sum256([]byte(token))]
	if !ok {
		return nil, fmt.Errorf("%w: unknown token", auth.ErrInvalidToken)
	}
	copied := *info // the middleware and handlers get their own
	copied.Scopes = slices.Clone(info.Scopes)
	return &copied, nil
}

// requireToken wraps h in go-sdk's bearer-token middleware, verifying
// tokens against ts.
func (ts *tokenSet) requireToken(h http.Handler) http.Handler {
	return auth.RequireBearerToken(ts.verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h)
}

// grants reports whether the token ti grants the collection c. No token
// grants nothing.
func grants(ti *auth.TokenInfo, c string) bool {
	return ti != nil && (slices.Contains(ti.Scopes, scopePrefix+c) || slices.Contains(ti.Scopes, scopePrefix+allCollections))
}

// tokenInfo returns the verified token of req, nil if it has none.
func tokenInfo(req mcp.Request) *auth.TokenInfo {
	if req == nil {
		return nil
	}
	if extra := req.GetExtra(); extra != nil {
		return extra.TokenInfo
	}
	return nil
}

// mayUse reports whether the caller of req may see and edit collection c:
// always without tokens, else if the caller's token grants c.
func (k *knowledge) mayUse(req mcp.Request, c string) bool {
	return !k.restricted || grants(tokenInfo(req), c)
}

// authorize is the registry's Authorizer when tokens are on. The static
// resources and the templates themselves are everyone's; anything with a
// collection (a documents list, a collection's statistics, a document, a
// completion with the collection chosen or proposed) is the business of
// those whose token grants that collection.
//
// Completing {doc} with no collection chosen proposes documents of every
// collection: a proposed name is allowed only if one of the caller's
// collections holds a document of that name, so that completion tells
// nobody what the others' collections hold.
func (k *knowledge) authorize(ctx context.Context, a resource.Access) error {
	ti := a.TokenInfo()
	if c := a.Var("collection"); c != "" {
		if !grants(ti, c) {
			return fmt.Errorf("%w: collection %q is not granted to %q", resource.ErrDenied, c, a.Identity)
		}
		return nil
	}
	if doc := a.Var("doc"); a.Proposed && a.Argument == "doc" {
		held, err := k.holdsDoc(ctx, ti, doc)
		if err != nil {
			return err
		}
		if !held {
			return fmt.Errorf("%w: no collection granted to %q holds a document %q", resource.ErrDenied, a.Identity, doc)
		}
	}
	return nil
}

// holdsDoc reports whether one of the collections ti grants holds a
// document named doc.
func (k *knowledge) holdsDoc(ctx context.Context, ti *auth.TokenInfo, doc string) (bool, error) {
	holding, err := k.store.Holding(ctx, doc)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(holding, func(c string) bool { return grants(ti, c) }), nil
}
