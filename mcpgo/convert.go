package mcpgo

import (
	"encoding/base64"

	"github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"
)

// The registry speaks go-sdk's types; the functions below turn what it
// answers into mcp-go's, field by field, so that the JSON a client gets is
// the JSON go-sdk would send.

// resources converts a list page's resources.
func resources(in []*sdk.Resource) []mcp.Resource {
	out := make([]mcp.Resource, len(in))
	for i, r := range in {
		out[i] = mcp.Resource{
			Annotated:   mcp.Annotated{Annotations: annotations(r.Annotations)},
			Meta:        meta(r.Meta),
			URI:         r.URI,
			Name:        r.Name,
			Title:       r.Title,
			Description: r.Description,
			MIMEType:    r.MIMEType,
			Icons:       icons(r.Icons),
		}
		if r.Size != 0 {
			size := r.Size
			out[i].Size = &size
		}
	}
	return out
}

// resourceTemplates converts a list page's templates, each once: mcp-go
// holds a template parsed, and the registry lists the same
// *sdk.ResourceTemplate for a template every time. A template
// yosida95/uritemplate cannot parse, which the registry would have
// refused, is left out.
func (a *adapter) resourceTemplates(in []*sdk.ResourceTemplate) []mcp.ResourceTemplate {
	out := make([]mcp.ResourceTemplate, 0, len(in))
	for _, t := range in {
		if v, ok := a.templates.Load(t); ok {
			out = append(out, *v.(*mcp.ResourceTemplate))
			continue
		}
		parsed, err := uritemplate.New(t.URITemplate)
		if err != nil {
			continue
		}
		c := &mcp.ResourceTemplate{
			Annotated:   mcp.Annotated{Annotations: annotations(t.Annotations)},
			Meta:        meta(t.Meta),
			URITemplate: &mcp.URITemplate{Template: parsed},
			Name:        t.Name,
			Title:       t.Title,
			Description: t.Description,
			MIMEType:    t.MIMEType,
			Icons:       icons(t.Icons),
		}
		a.templates.Store(t, c)
		out = append(out, *c)
	}
	return out
}

// contents converts a read's contents: a blob when it has one, else text.
func contents(in []*sdk.ResourceContents) []mcp.ResourceContents {
	out := make([]mcp.ResourceContents, len(in))
	for i, c := range in {
		if c.Blob != nil {
			out[i] = mcp.BlobResourceContents{Meta: c.Meta, URI: c.URI, MIMEType: c.MIMEType, Blob: base64.StdEncoding.EncodeToString(c.Blob)}
		} else {
			out[i] = mcp.TextResourceContents{Meta: c.Meta, URI: c.URI, MIMEType: c.MIMEType, Text: c.Text}
		}
	}
	return out
}

func annotations(a *sdk.Annotations) *mcp.Annotations {
	if a == nil {
		return nil
	}
	out := &mcp.Annotations{LastModified: a.LastModified}
	for _, r := range a.Audience {
		out.Audience = append(out.Audience, mcp.Role(r))
	}
	if a.Priority != 0 { // go-sdk omits a zero priority
		p := a.Priority
		out.Priority = &p
	}
	return out
}

func icons(in []sdk.Icon) []mcp.Icon {
	if in == nil {
		return nil
	}
	out := make([]mcp.Icon, len(in))
	for i, ic := range in {
		out[i] = mcp.Icon{Src: ic.Source, MIMEType: ic.MIMEType, Sizes: ic.Sizes, Theme: mcp.IconTheme(ic.Theme)}
	}
	return out
}

// meta converts a result's or an entry's _meta; nil for none.
func meta(m sdk.Meta) *mcp.Meta {
	if len(m) == 0 {
		return nil
	}
	return &mcp.Meta{AdditionalFields: m}
}

// sdkMeta converts a request's _meta.
func sdkMeta(m *mcp.Meta) sdk.Meta {
	if m == nil || m.ProgressToken == nil && len(m.AdditionalFields) == 0 {
		return nil
	}
	out := make(sdk.Meta, len(m.AdditionalFields)+1)
	for k, v := range m.AdditionalFields {
		out[k] = v
	}
	if m.ProgressToken != nil {
		out["progressToken"] = m.ProgressToken
	}
	return out
}

// cache sets dst's caching hints to src's, for a 2026-07-28 client.
func cache(dst *mcp.CacheableResult, src sdk.Cacheable) {
	dst.SetCacheHints(int64(src.TTLMs), mcp.CacheScope(src.CacheScope))
}
