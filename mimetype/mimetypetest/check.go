// Package mimetypetest helps a server's own tests check that its read
// functions return what their resources declare.
package mimetypetest

import (
	"testing"

	"github.com/mcpres/mcpres/mimetype"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Check reports, through t.Errorf, every content of res that does not
// match its type: the content's own MIMEType, or declared where the content
// leaves it empty (declared is usually the resource's MIMEType). It
// reports a nil or empty result too. It returns whether all was well.
//
//	res, err := readUser(ctx, req, vars)
//	require.NoError(t, err)
//	mimetypetest.Check(t, "application/json", res)
func Check(t testing.TB, declared string, res *mcp.ReadResourceResult) bool {
	t.Helper()
	if res == nil || len(res.Contents) == 0 {
		t.Errorf("mimetypetest: no contents to check")
		return false
	}
	ok := true
	for i, c := range res.Contents {
		typ := declared
		if c != nil && c.MIMEType != "" {
			typ = c.MIMEType
		}
		if typ == "" {
			t.Errorf("mimetypetest: content %d has no MIME type, and none is declared", i)
			ok = false
			continue
		}
		if err := mimetype.Validate(typ, c); err != nil {
			if c != nil && c.URI != "" {
				t.Errorf("mimetypetest: content %d (%s): %v", i, c.URI, err)
			} else {
				t.Errorf("mimetypetest: content %d: %v", i, err)
			}
			ok = false
		}
	}
	return ok
}
