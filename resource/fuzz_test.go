package resource_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mcpres/mcpres/resource"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzReadResource sends arbitrary URIs through the read path: it must
// never panic, and must answer with contents or one of the documented
// errors.
func FuzzReadResource(f *testing.F) {
	for _, s := range []string{
		"test://static", "test://items/42", "test://items/%20x", "test://files/a/b/c",
		"test://items/", "test://items/%zz", "test://u:p@h/x", "x", "", "test://files/..%2f..%2fetc",
	} {
		f.Add(s)
	}
	reg := newRegistry(f, &resource.Options{Logger: quietLogger()})
	reg.Add(&mcp.Resource{URI: "test://static", Name: "s"}, resource.Text("s"))
	echo := func(_ context.Context, _ *mcp.ReadResourceRequest, v resource.Vars) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{Text: v.Get("id") + v.Get("path")}}}, nil
	}
	reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "test://items/{id}", Name: "item"}, echo)
	reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "test://files/{+path}", Name: "file"}, echo)
	reg.AddTemplate(&mcp.ResourceTemplate{URITemplate: "test://q{?a,b}", Name: "query"}, echo)

	f.Fuzz(func(t *testing.T, uri string) {
		res, err := reg.ReadResource(context.Background(), &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: uri}})
		if err == nil {
			if res == nil || len(res.Contents) == 0 || res.Contents[0].URI == "" {
				t.Fatalf("read %q: success without contents: %+v", uri, res)
			}
			return
		}
		var jerr *jsonrpc.Error
		if !errors.As(err, &jerr) {
			t.Fatalf("read %q: error %v is not a JSON-RPC error", uri, err)
		}
		switch jerr.Code {
		case jsonrpc.CodeInvalidParams, resource.CodeLegacyResourceNotFound:
		default:
			t.Fatalf("read %q: unexpected code %d (%s)", uri, jerr.Code, jerr.Message)
		}
	})
}
