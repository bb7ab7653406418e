package resource

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"strings"

	"github.com/mcpres/mcpres/internal/protocol"
	"github.com/mcpres/mcpres/internal/uri"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ReadResource answers resources/read. It spends one of the caller's
// read tokens, if Options.RateLimits limits reads (CodeRateLimited if
// there is none left); checks the URI (-32602 saying why if it is not an
// absolute RFC 3986 URI, is longer than Options.MaxURILength, or carries
// userinfo); resolves it (a static resource, else the most specific
// matching template); asks Options.Authorize, if set; calls the read
// function; refuses a result over the read cap (Options.MaxReadBytes, or
// the entry's WithMaxReadBytes) with -32603 naming the cap, and a content
// labelled with another URI than the one read (a fragment aside) unless
// the caller could read that URI itself, with -32603 "Internal error",
// logged; fills in each content's URI and MIME type where the read
// function left them empty (the declared type, else mimetype.Detect);
// checks each content against its MIME type under Options.MIME (see
// MIMEPolicy); and sets the caching hint. Each read is written to the
// access log (see AccessLogOptions).
//
// An unknown URI, one the Authorizer denies, or a read function that
// reports ErrNotFound, is answered as described at NotFoundCode, all
// alike. A read function that fails, panics, or returns no contents is
// answered with -32603 "Internal error"; the detail is logged with the
// session ID and URI. A nil request or params is answered with -32602.
func (r *Registry) ReadResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	if req == nil || req.Params == nil {
		c := r.begin(ctx, OpRead, protocol.MethodRead, "", nil, nil)
		return nil, r.end(&c, invalid(protocol.MethodRead+" needs params with a uri"))
	}
	c := r.begin(ctx, OpRead, protocol.MethodRead, req.Params.URI, req, req.Session)
	res, err := r.read(&c, req)
	return res, r.end(&c, err)
}

// read runs the steps of resources/read.
func (r *Registry) read(c *call, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	if err := r.open(); err != nil {
		return nil, err
	}
	if err := r.spend(c, r.reads); err != nil {
		return nil, err
	}
	t, err := r.resolveChecked(c.target)
	if err != nil {
		return nil, err
	}
	c.matched(t)
	if err := r.authorize(c, t.access(c, OpRead, c.target)); err != nil {
		return nil, err
	}
	got, err := r.callRead(c, req, t)
	if err != nil {
		return nil, err
	}
	return r.finishRead(c, got, t)
}

// callRead calls the target's read function and vets what it returns.
func (r *Registry) callRead(c *call, req *mcp.ReadResourceRequest, t target) (*mcp.ReadResourceResult, error) {
	got, err := callUser("read function", func() (*mcp.ReadResourceResult, error) {
		if t.static != nil {
			return t.static.read(c.ctx, req)
		}
		return t.tmpl.read(c.ctx, req, t.vars)
	})
	switch {
	case err != nil:
		return nil, userError("resource read failed", err)
	case got == nil || len(got.Contents) == 0:
		return nil, failed("resource read returned no contents; return resource.ErrNotFound for a missing resource", nil)
	}
	return got, nil
}

// finishRead returns a copy of res with each content's URI and MIME type
// filled in, checked against its MIME type under Options.MIME, and the
// caching hint set, once the result is known to be within the read cap
// and to hold only contents the caller may read. The read function's
// result is not modified: it may be shared between calls.
func (r *Registry) finishRead(c *call, res *mcp.ReadResourceResult, t target) (*mcp.ReadResourceResult, error) {
	if err := r.checkSize(c, res, t); err != nil {
		return nil, err
	}
	out := *res
	declared := t.mimeType()
	for i, content := range res.Contents {
		if content == nil {
			return nil, failed("resource read returned a nil content entry", nil)
		}
		if content.URI != "" && content.URI != c.target && !sameResource(content.URI, c.target) {
			if err := r.checkOtherURI(c, content.URI); err != nil {
				return nil, err
			}
		}
		filled := fillContent(content, c.target, declared)
		if err := r.checkContent(c, filled); err != nil {
			return nil, err
		}
		if filled != content {
			// Copy the slice before the first change: the read
			// function's own is left alone.
			if &out.Contents[0] == &res.Contents[0] {
				out.Contents = slices.Clone(res.Contents)
			}
			out.Contents[i] = filled
		}
	}
	if out.TTLMs == 0 && out.CacheScope == "" {
		cache := r.opts.Cache
		if ec := t.settings().cache; ec != nil {
			cache = *ec
		}
		cache.apply(&out.Cacheable)
	} else if out.CacheScope == "" {
		out.CacheScope = string(Public)
	}
	r.privateIfAuthorized(&out.Cacheable)
	if c.obs != nil {
		c.obs.Entries = len(out.Contents)
	}
	return &out, nil
}

// checkSize refuses a result larger than t's read cap, and tells the
// Observer its size.
func (r *Registry) checkSize(c *call, res *mcp.ReadResourceResult, t target) error {
	limit := cmp.Or(t.settings().maxRead, r.opts.MaxReadBytes)
	var size int64
	for _, content := range res.Contents {
		if content != nil {
			size += int64(len(content.Text)) + int64(len(content.Blob))
		}
	}
	if c.obs != nil {
		c.obs.Bytes = size
	}
	if size > limit {
		return tooLarge(size, limit)
	}
	return nil
}

// sameResource reports whether URIs a and b name the same resource: they
// are equal but for a fragment, which names a part of it.
func sameResource(a, b string) bool {
	a, _, _ = strings.Cut(a, "#")
	b, _, _ = strings.Cut(b, "#")
	return a == b
}

// checkOtherURI vets a content a read function labelled with u, another
// resource than the one read: u must be a URI the caller could read itself,
// one the registry resolves and the Authorizer, if any, allows for
// reading. A directory's read, say, may return its files this way.
func (r *Registry) checkOtherURI(c *call, u string) error {
	if uri.Check(u, r.opts.MaxURILength) != nil {
		return failed("resource read returned a content with an invalid URI", nil, slog.String("content_uri", u))
	}
	t, err := r.resolve(u)
	if err == nil {
		err = r.authorize(c, t.access(c, OpRead, u))
	}
	if err != nil {
		return failed("resource read returned a content for a URI the caller may not read", err, slog.String("content_uri", u))
	}
	return nil
}

// privateIfAuthorized sets c's scope to private if the registry has an
// Authorizer: a result another caller might not be allowed must not be
// served to them from a shared cache.
func (r *Registry) privateIfAuthorized(c *mcp.Cacheable) {
	if r.opts.Authorize != nil {
		c.CacheScope = string(Private)
	}
}
