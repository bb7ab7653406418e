package resource_test

import (
	"context"
	"fmt"
	"log"
	"maps"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/mcpres/mcpres/mcptest"
	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorder is an Observer that keeps what it is told.
type recorder struct {
	mu      sync.Mutex
	started int
	calls   []resource.Call // as they ended
	events  []resource.Event
}

type callKey struct{}

func (o *recorder) StartCall(ctx context.Context, c *resource.Call) context.Context {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.started++
	return context.WithValue(ctx, callKey{}, c.Method)
}

func (o *recorder) EndCall(ctx context.Context, c *resource.Call) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if ctx.Value(callKey{}) != c.Method {
		panic("EndCall without StartCall's context")
	}
	o.calls = append(o.calls, *c)
}

func (o *recorder) Event(e resource.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.events = append(o.events, e)
}

// ended returns the calls ended so far, as method, template and decision.
func (o *recorder) ended() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for _, c := range o.calls {
		out = append(out, fmt.Sprintf("%s %s %s", c.Method, c.Template, c.Decision))
	}
	return out
}

// Every call is observed once at each end, with StartCall's context
// reaching the user's functions and EndCall; what came of it is filled
// in, in both eras.
func TestObserverSeesEveryCall(t *testing.T) {
	forEachEra(t, func(t *testing.T, version string) {
		obs := &recorder{}
		var seen []string // what the user's functions found in their context
		var mu sync.Mutex
		note := func(ctx context.Context) {
			mu.Lock()
			seen = append(seen, fmt.Sprint(ctx.Value(callKey{})))
			mu.Unlock()
		}
		reg := newRegistry(t, &resource.Options{Observer: obs, Logger: quietLogger(),
			Authorize: func(ctx context.Context, a resource.Access) error {
				note(ctx)
				if a.URI == "db://users/13" {
					return resource.ErrDenied
				}
				return nil
			}})
		require.NoError(t, reg.Add(&mcp.Resource{URI: "docs://readme", Name: "readme", MIMEType: "text/plain"}, resource.Text("hello")))
		require.NoError(t, reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "db://users/{id}", Name: "user"},
			func(ctx context.Context, _ *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
				note(ctx)
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: "user " + vars.Get("id")}}}, nil
			}))
		server, err := reg.NewServer(&mcp.Implementation{Name: "observed"}, &mcp.ServerOptions{Logger: quietLogger()})
		require.NoError(t, err)
		cs := mcptest.Connect(t, server, version, nil)
		ctx := t.Context()

		_, err = cs.ListResources(ctx, nil)
		require.NoError(t, err)
		_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://readme"})
		require.NoError(t, err)
		_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "db://users/42"})
		require.NoError(t, err)
		_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "db://users/13"})
		require.Error(t, err)
		_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "nope://x"})
		require.Error(t, err)
		require.NoError(t, cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "db://users/42"}))
		synctest.Wait()

		want := []string{
			"resources/list  allowed",
			"resources/read  allowed",
			"resources/read db://users/{id} allowed",
			"resources/read db://users/{id} denied",
			"resources/read  not_found",
			"resources/subscribe db://users/{id} allowed",
		}
		assert.Equal(t, want, obs.ended())
		obs.mu.Lock()
		readme, denied, missing := obs.calls[1], obs.calls[3], obs.calls[4]
		assert.Equal(t, 1, obs.calls[0].Entries, "the list page's size")
		assert.Equal(t, resource.OpRead, readme.Op)
		assert.Equal(t, "docs://readme", readme.URI)
		assert.Equal(t, version, readme.ProtocolVersion)
		assert.Equal(t, int64(len("hello")), readme.Bytes)
		assert.Equal(t, 1, readme.Entries)
		assert.Equal(t, "match", readme.MIME)
		assert.False(t, readme.End.Before(readme.Start))
		assert.Zero(t, readme.Code)
		assert.NoError(t, readme.Err)
		assert.Equal(t, denied.Code, missing.Code, "a denial is answered as not found")
		assert.NotZero(t, denied.Code)
		assert.Error(t, denied.Err)
		assert.Zero(t, denied.Bytes)
		started := obs.started
		obs.mu.Unlock()
		if version >= "2026-07-28" {
			// The listen is a call too, still under way.
			assert.Equal(t, len(want)+1, started)
		} else {
			assert.Equal(t, len(want), started)
		}

		// The user's functions ran in the call's context.
		mu.Lock()
		for _, m := range seen {
			assert.Contains(t, []string{"resources/list", "resources/read", "resources/subscribe"}, m)
		}
		mu.Unlock()

		// A change, and the open subscriptions, are events.
		require.NoError(t, reg.Changed("db://users/42"))
		synctest.Wait()
		obs.mu.Lock()
		assert.Contains(t, obs.events, resource.Event{Kind: resource.EventSubscriptions, Count: 1})
		assert.Contains(t, obs.events, resource.Event{Kind: resource.EventNotified,
			Method: "notifications/resources/updated", URI: "db://users/42"})
		obs.mu.Unlock()
	})
}

// Direct calls without a request are observed, with what they lack left
// empty.
func TestObserverDirectCalls(t *testing.T) {
	t.Parallel()
	obs := &recorder{}
	reg := newRegistry(t, &resource.Options{Observer: obs, Logger: quietLogger()})
	require.NoError(t, reg.Add(&mcp.Resource{URI: "docs://readme", Name: "readme"}, resource.Text("hello")))
	_, err := reg.ReadResource(context.Background(), nil)
	require.Error(t, err)
	_, err = reg.ListResources(context.Background(), nil)
	require.NoError(t, err)
	_, err = reg.Complete(context.Background(), nil)
	require.Error(t, err)
	require.Error(t, reg.Subscribe(context.Background(), nil))
	assert.Equal(t, []string{
		"resources/read  invalid", "resources/list  allowed", "completion/complete  invalid", "resources/subscribe  invalid",
	}, obs.ended())
	obs.mu.Lock()
	defer obs.mu.Unlock()
	for _, c := range obs.calls {
		assert.Nil(t, c.Request)
		assert.Empty(t, c.SessionID)
		assert.Empty(t, c.ProtocolVersion)
	}
	assert.Equal(t, obs.started, len(obs.calls))
}

// An Observer that counts calls by method and decision, as a metrics
// system would; here it prints them.
type countingObserver struct {
	mu     sync.Mutex
	counts map[string]int
}

func (o *countingObserver) StartCall(ctx context.Context, c *resource.Call) context.Context {
	return ctx
}

func (o *countingObserver) EndCall(ctx context.Context, c *resource.Call) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.counts[c.Method+" "+string(c.Decision)]++
}

func (o *countingObserver) Event(resource.Event) {}

func ExampleObserver() {
	obs := &countingObserver{counts: map[string]int{}}
	reg, err := resource.NewRegistry(&resource.Options{Observer: obs})
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()
	reg.Add(&mcp.Resource{URI: "docs://readme", Name: "readme"}, resource.Text("# Hello"))

	ctx := context.Background()
	for _, u := range []string{"docs://readme", "docs://readme", "docs://missing"} {
		reg.ReadResource(ctx, &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: u}})
	}
	reg.ListResources(ctx, nil)

	obs.mu.Lock()
	defer obs.mu.Unlock()
	for _, k := range slices.Sorted(maps.Keys(obs.counts)) {
		fmt.Println(k, obs.counts[k])
	}
	// Output:
	// resources/list allowed 1
	// resources/read allowed 2
	// resources/read not_found 1
}
