package resource

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/mcpres/mcpres/internal/uri"
	"github.com/mcpres/mcpres/mimetype"
	"github.com/mcpres/mcpres/uritemplate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// entrySettings are what the options of Add and AddTemplate alike set.
type entrySettings struct {
	cache   *Cache // nil: Options.Cache
	maxRead int64  // 0: Options.MaxReadBytes
}

// A staticEntry is a static resource: the registry's copy of it, held in
// the entry itself (one allocation), and its read function.
type staticEntry struct {
	res      mcp.Resource
	read     ReadFunc
	settings *entrySettings // nil: every default
}

// noSettings are the settings of an entry added without options.
var noSettings entrySettings

type templateEntry struct {
	tmpl     *mcp.ResourceTemplate
	compiled *uritemplate.Template
	read     TemplateReadFunc
	entrySettings
	completers map[string]CompleteFunc
	safePaths  bool
	exists     ExistsFunc // nil: every match exists, as far as subscribe knows
	// listsInstances is set when the template's instances are a source of
	// resources/list, named by its URI template.
	listsInstances bool
}

// A ResourceOption configures a static resource as Add adds it:
// WithCache, WithMaxReadBytes.
type ResourceOption interface {
	applyToResource(*entryConfig) error
}

// A TemplateOption configures a resource template as AddTemplate adds it:
// WithCache, WithMaxReadBytes, WithSafePaths, WithCompleter,
// WithInstances, WithExists.
type TemplateOption interface {
	applyToTemplate(*entryConfig) error
}

// An EntryOption configures a static resource or a template alike.
type EntryOption interface {
	ResourceOption
	TemplateOption
}

type entryConfig struct {
	entrySettings
	completers map[string]CompleteFunc
	safePaths  bool
	exists     ExistsFunc
	instances  ListFunc
}

// templateOption is an option only templates take.
type templateOption func(*entryConfig) error

func (o templateOption) applyToTemplate(e *entryConfig) error { return o(e) }

// cacheOption is WithCache's.
type cacheOption Cache

func (o cacheOption) applyToResource(e *entryConfig) error { return o.applyToTemplate(e) }
func (o cacheOption) applyToTemplate(e *entryConfig) error {
	c := Cache(o)
	if err := c.validate(); err != nil {
		return err
	}
	e.cache = &c
	return nil
}

// WithCache sets the caching hint of one resource's or template's results,
// overriding [Options.Cache]. A read function that sets ttlMs or cacheScope
// on its result overrides both. Add and AddTemplate refuse a negative TTL
// or an unknown scope.
func WithCache(c Cache) EntryOption { return cacheOption(c) }

// maxReadOption is WithMaxReadBytes'.
type maxReadOption int64

func (o maxReadOption) applyToResource(e *entryConfig) error { return o.applyToTemplate(e) }
func (o maxReadOption) applyToTemplate(e *entryConfig) error {
	if o <= 0 {
		return fmt.Errorf("read cap %d is not positive", int64(o))
	}
	e.maxRead = int64(o)
	return nil
}

// WithMaxReadBytes caps the content one read of the resource, or of the
// template's matches, returns at n bytes, instead of
// Options.MaxReadBytes. Add and AddTemplate refuse an n that is not
// positive.
func WithMaxReadBytes(n int64) EntryOption { return maxReadOption(n) }

// WithSafePaths makes a template refuse, as not found and before its read
// function runs, any URI that binds a variable to an unsafe path: one with
// a ".." segment, a NUL byte, a backslash, or a leading '/' (see
// uritemplate.CheckPath). Use it for templates whose variables become file
// paths, such as file:///{+path}.
func WithSafePaths() TemplateOption {
	return templateOption(func(e *entryConfig) error {
		e.safePaths = true
		return nil
	})
}

// applyOptions applies opts, skipping nil ones, with apply.
func applyOptions[O any](opts []O, apply func(O, *entryConfig) error) (entryConfig, error) {
	var cfg entryConfig
	for _, o := range opts {
		if any(o) == nil {
			continue
		}
		if err := apply(o, &cfg); err != nil {
			return entryConfig{}, err
		}
	}
	return cfg, nil
}

// Add registers a static resource read by read, replacing any resource with
// the same URI. The registry keeps a copy of *res, so later changes to res
// have no effect; Add it again to change its metadata. A resource without
// a MIME type gets the one its URI's extension names, if any
// (mimetype.ByExtension).
//
// Add returns an error, and changes nothing, if res or read is nil, if
// res.URI is not an absolute RFC 3986 URI (see Options.MaxURILength), if
// res.Name is empty, if an option is invalid, or if the registry is
// closed (ErrClosed).
func (r *Registry) Add(res *mcp.Resource, read ReadFunc, opts ...ResourceOption) error {
	if res == nil || read == nil {
		return errors.New("resource: Add needs a resource and a read function")
	}
	if err := uri.Check(res.URI, r.opts.MaxURILength); err != nil {
		return fmt.Errorf("resource: Add %q: %w", res.URI, err)
	}
	if res.Name == "" {
		return fmt.Errorf("resource: Add %q: the resource has no name", res.URI)
	}
	cfg, err := applyOptions(opts, ResourceOption.applyToResource)
	if err != nil {
		return fmt.Errorf("resource: Add %q: %w", res.URI, err)
	}
	if r.closed.Load() {
		return fmt.Errorf("resource: Add %q: %w", res.URI, ErrClosed)
	}
	e := &staticEntry{res: *res, read: read}
	if e.res.MIMEType == "" {
		e.res.MIMEType = mimetype.ByExtension(e.res.URI)
	}
	if cfg.entrySettings != noSettings {
		settings := cfg.entrySettings
		e.settings = &settings
	}

	r.static.Set(res.URI, e)
	r.delivery.ListChanged()
	return nil
}

// AddTemplate registers a resource template whose matches are read by read,
// replacing any template with the same URI template. A URI that no static
// resource has goes to the most specific template that matches it (see
// uritemplate.Router for the precedence). The registry keeps a copy of *t.
//
// AddTemplate returns an error, and changes nothing, if t or read is nil, if
// t.URITemplate does not parse as an RFC 6570 template starting with a
// literal scheme, if it would match exactly the URIs of another template
// (test://{a} and test://{b}), if t.Name is empty, if an option is invalid
// (a completer for a variable the template does not have, say), or if the
// registry is closed (ErrClosed).
func (r *Registry) AddTemplate(t *mcp.ResourceTemplate, read TemplateReadFunc, opts ...TemplateOption) error {
	if t == nil || read == nil {
		return errors.New("resource: AddTemplate needs a template and a read function")
	}
	compiled, err := uritemplate.Parse(t.URITemplate)
	if err != nil {
		return fmt.Errorf("resource: AddTemplate: %w", err)
	}
	// The literal start must itself begin a URI: a scheme such as "file:",
	// and no credentials.
	if err := uri.Check(compiled.Prefix(), r.opts.MaxURILength); err != nil {
		return fmt.Errorf("resource: AddTemplate %q: the template must start with a literal scheme such as \"file:\": %w", t.URITemplate, err)
	}
	if t.Name == "" {
		return fmt.Errorf("resource: AddTemplate %q: the template has no name", t.URITemplate)
	}
	cfg, err := applyOptions(opts, TemplateOption.applyToTemplate)
	if err != nil {
		return fmt.Errorf("resource: AddTemplate %q: %w", t.URITemplate, err)
	}
	for name := range cfg.completers {
		if !slices.Contains(compiled.Varnames(), name) {
			return fmt.Errorf("resource: AddTemplate %q: completer for unknown variable %q", t.URITemplate, name)
		}
	}
	copied := *t
	if copied.MIMEType == "" {
		copied.MIMEType = mimetype.ByExtension(t.URITemplate) // file:///{name}.md
	}
	e := &templateEntry{tmpl: &copied, compiled: compiled, read: read, entrySettings: cfg.entrySettings,
		completers: cfg.completers, safePaths: cfg.safePaths, exists: cfg.exists, listsInstances: cfg.instances != nil}

	r.mu.Lock()
	if r.closed.Load() {
		r.mu.Unlock()
		return fmt.Errorf("resource: AddTemplate %q: %w", t.URITemplate, ErrClosed)
	}
	old, _ := r.templates.Get(t.URITemplate)
	oldLists := old != nil && old.listsInstances
	if cfg.instances != nil && r.providers[t.URITemplate] != nil && !oldLists {
		r.mu.Unlock()
		return fmt.Errorf("resource: AddTemplate %q: a provider has that name", t.URITemplate)
	}
	if err := r.router.Add(compiled, e); err != nil {
		r.mu.Unlock()
		return fmt.Errorf("resource: AddTemplate: %w", err)
	}
	r.templates.Set(t.URITemplate, e)
	switch {
	case cfg.instances != nil:
		r.setSource(t.URITemplate, cfg.instances)
	case oldLists:
		r.setSource(t.URITemplate, nil)
	}
	r.mu.Unlock()
	r.delivery.ListChanged()
	return nil
}

// Remove removes the static resources with the given URIs and reports how
// many there were. Unknown URIs are ignored.
func (r *Registry) Remove(uris ...string) int {
	n := 0
	for _, u := range uris {
		if r.static.Delete(u) {
			n++
		}
	}
	if n > 0 {
		r.delivery.ListChanged()
	}
	return n
}

// ShadowedTemplates returns, sorted, the URI templates no read can reach:
// every URI one matches, more specific templates match too. AddTemplate
// refuses a template that one other hides; a template that several hide
// together (x://{/a,b} next to x://{/c} and x:///{d}/{e}) is accepted, and
// reported here. Call it in a test or once after registering templates:
// its cost grows with the number of templates that share URIs.
func (r *Registry) ShadowedTemplates() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.router.Shadowed()
}

// RemoveTemplates removes the templates with the given URI templates and
// reports how many there were. Unknown templates are ignored.
func (r *Registry) RemoveTemplates(uriTemplates ...string) int {
	n := 0
	r.mu.Lock()
	for _, t := range uriTemplates {
		e, ok := r.templates.Get(t)
		if !ok {
			continue
		}
		r.templates.Delete(t)
		r.router.Remove(t)
		if e.listsInstances {
			r.setSource(t, nil)
		}
		n++
	}
	r.mu.Unlock()
	if n > 0 {
		r.delivery.ListChanged()
	}
	return n
}

// Text returns a read function that serves the fixed string text, for
// r.Add(&mcp.Resource{…}, resource.Text("…")). The registry fills in the URI
// and the resource's MIME type. An empty text is sent as an empty blob,
// the one empty content go-sdk puts on the wire.
func Text(text string) ReadFunc {
	return func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: text}}}, nil
	}
}

// Bytes returns a read function that serves the fixed bytes data as a blob
// (base64 on the wire). The registry fills in the URI and the resource's
// MIME type. data must not be modified afterwards.
func Bytes(data []byte) ReadFunc {
	return func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Blob: data}}}, nil
	}
}
