package resource_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/mcpres/mcpres/resource"
	"github.com/mcpres/mcpres/subscribe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
)

// NewRegistry refuses every value out of range, naming the field, rather
// than guess; zero means the documented default.
func TestNewRegistryValidates(t *testing.T) {
	t.Parallel()
	bad := map[string]resource.Options{
		"Options.PageSize":                   {PageSize: -1},
		"Options.PageSize: 10001":            {PageSize: resource.MaxPageSize + 1},
		"Options.MaxURILength":               {MaxURILength: -1},
		"Options.ListChangedDelay":           {ListChangedDelay: -time.Second},
		"Options.NotFound":                   {NotFound: 7},
		"Options.NotFound: 2":                {NotFound: 2}, // the removed NotFoundLegacy
		"Options.MIME":                       {MIME: -1},
		"Options.Cache: negative":            {Cache: resource.Cache{TTL: -time.Second}},
		"Options.Cache: unknown":             {Cache: resource.Cache{Scope: "world"}},
		"Options.RateLimits.Read":            {RateLimits: resource.RateLimits{Read: &resource.RateLimit{Rate: 0, Burst: 1}}},
		"Options.RateLimits.Read: NaN":       {RateLimits: resource.RateLimits{Read: &resource.RateLimit{Rate: rate.Limit(math.NaN()), Burst: 1}}},
		"Options.RateLimits.Subscribe":       {RateLimits: resource.RateLimits{Subscribe: &resource.RateLimit{Rate: 1, Burst: 0}}},
		"Options.Subscriptions: per session": {Subscriptions: resource.SubscriptionOptions{MaxPerSession: -1}},
		"Options.Subscriptions: window":      {Subscriptions: resource.SubscriptionOptions{Window: -time.Second}},
	}
	for name, opts := range bad {
		reg, err := resource.NewRegistry(&opts)
		assert.Nil(t, reg, name)
		if assert.Error(t, err, name) {
			field, _, _ := cutColon(name)
			assert.Contains(t, err.Error(), field+":", name)
		}
	}
	good := []resource.Options{
		{},
		{PageSize: resource.MaxPageSize, MaxURILength: 10, ListChangedDelay: time.Nanosecond},
		{NotFound: resource.NotFoundInvalidParams, MIME: resource.MIMEOff, Cache: resource.Cache{TTL: time.Second, Scope: resource.Private}},
		{RateLimits: resource.RateLimits{Read: &resource.RateLimit{Rate: rate.Inf}, Subscribe: &resource.RateLimit{Rate: 0.5, Burst: 1}}},
		{Subscriptions: resource.SubscriptionOptions{MaxPerSession: subscribe.NoLimit}},
	}
	for _, opts := range good {
		reg, err := resource.NewRegistry(&opts)
		require.NoError(t, err, "%+v", opts)
		require.NoError(t, reg.Close())
	}
}

func cutColon(s string) (before, after string, found bool) {
	for i := range len(s) {
		if s[i] == ':' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// Options that only templates take are not ResourceOptions, so Add does
// not compile with them; WithCache is both. Bad option values are refused
// by Add and AddTemplate alike, changing nothing.
func TestEntryOptions(t *testing.T) {
	t.Parallel()
	templateOnly := []resource.TemplateOption{
		resource.WithSafePaths(),
		resource.WithCompleter("x", func(context.Context, string, map[string]string) ([]string, error) { return nil, nil }),
		resource.WithInstances(listNotes),
	}
	for _, o := range templateOnly {
		_, ok := o.(resource.ResourceOption)
		assert.False(t, ok, "%T must not be a ResourceOption", o)
	}
	var both resource.EntryOption = resource.WithCache(resource.Cache{})
	var _ resource.ResourceOption = both
	var _ resource.TemplateOption = both

	reg := newRegistry(t, nil)
	for _, c := range []resource.Cache{{TTL: -1}, {Scope: "everyone"}} {
		assert.Error(t, reg.Add(&mcp.Resource{URI: "x://a", Name: "a"}, resource.Text("a"), resource.WithCache(c)))
		assert.Error(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "x://t/{id}", Name: "t"}, nil2, resource.WithCache(c)))
	}
	assert.Error(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "x://t/{id}", Name: "t"}, nil2, resource.WithInstances(nil)))
	assert.Error(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "x://t/{id}", Name: "t"}, nil2, resource.WithCompleter("id", nil)))
	list, err := reg.ListResourceTemplates(t.Context(), nil)
	require.NoError(t, err)
	assert.Empty(t, list.ResourceTemplates, "refused entries change nothing")
}
