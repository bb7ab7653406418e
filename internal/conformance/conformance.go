// Package conformance holds the resources that the official MCP
// conformance suite's resource scenarios read, built with mcpres alone,
// so that every server scripts/conformance.sh tests serves the same
// registry: examples/conformance on go-sdk's server, and
// examples/mcpgo/conformance on mark3labs/mcp-go's (a nested module,
// which may import this package: its import path is under
// github.com/mcpres/mcpres).
//
// [NewRegistry] returns a registry that holds what go-sdk's reference
// "everything-server" offers:
//
//   - test://static-text, text/plain;
//   - test://static-binary, image/png: a 1x1 PNG, served as a blob;
//   - the template test://template/{id}/data, application/json, whose text
//     contains the id, with completions for {id}; every id but the empty
//     one exists (resource.WithExists);
//   - test://watched-resource, text/plain, which accepts subscriptions;
//     [Watched.Run] reports it updated at an interval.
//
// The suite's completion scenario completes the arguments of a prompt,
// which a registry does not serve: each server adds [PromptName] with its
// own SDK's API, and completes its arguments with [CompletePromptArgument].
package conformance

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The URIs the conformance scenarios read.
const (
	StaticTextURI = "test://static-text"
	StaticBinURI  = "test://static-binary"
	TemplateURI   = "test://template/{id}/data"
	WatchedURI    = "test://watched-resource"
)

// pngBase64 is the 1x1 red PNG that the reference servers serve as
// test://static-binary.
const pngBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="

// ids are the values offered when completing {id} in the template.
var ids = []string{"1", "2", "3", "42", "123", "1000"}

// The prompt the completion scenario completes the arguments of: its
// name, title and description, and its two required arguments.
const (
	PromptName        = "test_prompt_with_arguments"
	PromptTitle       = "Prompt With Arguments"
	PromptDescription = "A prompt with two required arguments, which completion/complete completes"
)

// PromptArguments are the names and descriptions of the prompt's
// arguments, in order.
var PromptArguments = [][2]string{
	{"arg1", "First test argument"},
	{"arg2", "Second test argument"},
}

// promptArgValues are the values offered when completing the arguments of
// the prompt.
var promptArgValues = map[string][]string{
	"arg1": {"test", "testing", "tested", "value1"},
	"arg2": {"alpha", "beta", "gamma", "value2"},
}

// CompletePromptArgument returns the values of the prompt's argument arg
// that start with value, never nil (values must be an array on the
// wire), and false if the prompt has no such argument.
func CompletePromptArgument(arg, value string) ([]string, bool) {
	values, ok := promptArgValues[arg]
	if !ok {
		return nil, false
	}
	return withPrefix(values, value), true
}

// PromptText is the text of the prompt's one message, given its
// arguments.
func PromptText(arg1, arg2 string) string {
	return fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", arg1, arg2)
}

// NewRegistry returns a registry, made with opts, holding the conformance
// resources; w is test://watched-resource. The caller closes it.
func NewRegistry(w *Watched, opts *resource.Options) (*resource.Registry, error) {
	png, err := base64.StdEncoding.DecodeString(pngBase64)
	if err != nil {
		return nil, err
	}
	reg, err := resource.NewRegistry(opts)
	if err != nil {
		return nil, err
	}

	// Fixed content may be cached for a while; the watched resource keeps
	// the default hint (stale at once), since it changes.
	fixed := resource.WithCache(resource.Cache{TTL: time.Hour, Scope: resource.Public})
	statics := []struct {
		res  *mcp.Resource
		read resource.ReadFunc
		opts []resource.ResourceOption
	}{
		{&mcp.Resource{
			URI: StaticTextURI, Name: "static-text",
			Description: "A static text resource for testing", MIMEType: "text/plain",
		}, resource.Text("This is the content of the static text resource."), []resource.ResourceOption{fixed}},
		{&mcp.Resource{
			URI: StaticBinURI, Name: "static-binary",
			Description: "A static binary resource (image) for testing", MIMEType: "image/png", Size: int64(len(png)),
		}, resource.Bytes(png), []resource.ResourceOption{fixed}},
		{&mcp.Resource{
			URI: WatchedURI, Name: "watched-resource",
			Description: "A resource that is reported updated every few seconds; subscribe to it", MIMEType: "text/plain",
		}, w.read, nil},
	}
	for _, s := range statics {
		if err := reg.Add(s.res, s.read, s.opts...); err != nil {
			reg.Close()
			return nil, err
		}
	}

	err = reg.AddTemplate(&mcp.ResourceTemplate{
		URITemplate: TemplateURI,
		Name:        "template",
		Description: "A resource template with parameter substitution",
		MIMEType:    "application/json",
	}, readTemplate, resource.WithCompleter("id", completeID), resource.WithExists(templateExists), fixed)
	if err != nil {
		reg.Close()
		return nil, err
	}
	return reg, nil
}

// readTemplate reads test://template/{id}/data: a JSON object that holds
// the id.
func readTemplate(ctx context.Context, req *mcp.ReadResourceRequest, vars resource.Vars) (*mcp.ReadResourceResult, error) {
	id := vars.Get("id")
	if id == "" {
		return nil, resource.ErrNotFound
	}
	data, err := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: string(data)}}}, nil
}

// templateExists reports whether the instance of test://template/{id}/data
// that vars names exists, as readTemplate finds it: every id but the empty
// one.
func templateExists(ctx context.Context, vars resource.Vars) (bool, error) {
	return vars.Get("id") != "", nil
}

// completeID proposes the ids that start with what the user has typed.
func completeID(ctx context.Context, partial string, bound map[string]string) ([]string, error) {
	return withPrefix(ids, partial), nil
}

// withPrefix returns the values that start with prefix, never nil (values
// must be an array on the wire).
func withPrefix(values []string, prefix string) []string {
	out := []string{}
	for _, v := range values {
		if strings.HasPrefix(v, prefix) {
			out = append(out, v)
		}
	}
	return out
}

// Watched is test://watched-resource: its content carries a version that
// Run bumps, reporting each change to the resource's subscribers. The
// zero value is ready to use.
type Watched struct {
	version atomic.Int64
}

func (w *Watched) read(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	text := fmt.Sprintf("Watched resource content, version %d", w.version.Load())
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: text}}}, nil
}

// Run changes the resource every interval and tells reg, until ctx is
// done.
func (w *Watched) Run(ctx context.Context, reg *resource.Registry, interval time.Duration, logger *slog.Logger) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			w.version.Add(1)
			// Changed fails for a URI no client could subscribe to:
			// say so rather than notify no one in silence.
			if err := reg.Changed(WatchedURI); err != nil {
				logger.Error("reporting a change", "uri", WatchedURI, "error", err)
			}
		}
	}
}
