package reqmeta

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// header builds an http.Header of kv, a key and a value after another,
// adding a value per pair as a request's header lines do.
func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

func TestHeaders(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		h       http.Header
		modern  bool
		want    string
		decoded bool
		err     string // in the error; "" for none
	}{
		{name: "plain", h: header("Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "resources/read", "Mcp-Name", "docs://readme"),
			modern: true, want: "docs://readme"},
		{name: "no name", h: header("Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "resources/list"), modern: true},
		{name: "base64", h: header("Mcp-Protocol-Version", "2026-07-28", "Mcp-Name", "=?base64?ZG9jczovL3JlYWRtZQ==?="),
			modern: true, want: "docs://readme", decoded: true},
		{name: "base64 of non-ASCII", h: header("Mcp-Name", "=?base64?SGVsbG8sIOS4lueVjA==?="), modern: true, want: "Hello, 世界", decoded: true},
		{name: "base64 of the sentinel", h: header("Mcp-Name", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="), modern: true,
			want: "=?base64?literal?=", decoded: true},
		{name: "empty base64", h: header("Mcp-Name", "=?base64??="), modern: true, want: "", decoded: true},
		{name: "invalid base64", h: header("Mcp-Name", "=?base64?not base64!?="), modern: true, err: "not valid Base64"},
		{name: "unpadded base64", h: header("Mcp-Name", "=?base64?ZG9jcw?="), modern: true, err: "not valid Base64"},
		{name: "sentinel's case matters", h: header("Mcp-Name", "=?BASE64?ZG9jcw==?="), modern: true, want: "=?BASE64?ZG9jcw==?="},
		{name: "prefix without suffix", h: header("Mcp-Name", "=?base64?ZG9jcw=="), modern: true, want: "=?base64?ZG9jcw=="},
		{name: "the sentinel alone", h: header("Mcp-Name", "=?base64?="), modern: true, want: "=?base64?="},
		{name: "space and tab", h: header("Mcp-Name", "a b\tc"), modern: true, want: "a b\tc"},
		{name: "non-ASCII name", h: header("Mcp-Name", "docs://ré"), modern: true, err: "Mcp-Name header has a character"},
		{name: "DEL in name", h: header("Mcp-Name", "a\x7fb"), modern: true, err: "Mcp-Name header has a character"},
		{name: "non-ASCII method", h: header("Mcp-Method", "résources/read"), modern: true, err: "Mcp-Method header has a character"},
		{name: "two names", h: header("Mcp-Name", "a", "Mcp-Name", "a"), modern: true, err: "more than one Mcp-Name"},
		{name: "two methods", h: header("Mcp-Method", "resources/read", "Mcp-Method", "resources/list"), modern: true,
			err: "more than one Mcp-Method"},
		{name: "two modern versions", h: header("Mcp-Protocol-Version", "2026-07-28", "Mcp-Protocol-Version", "2026-07-28"),
			modern: true, err: "more than one Mcp-Protocol-Version"},
		{name: "legacy then modern", h: header("Mcp-Protocol-Version", "2025-11-25", "Mcp-Protocol-Version", "2026-07-28"),
			err: "more than one Mcp-Protocol-Version"},
		// Of a legacy request, the mirrored headers mean nothing, and
		// nothing but two versions of which one is modern is refused.
		{name: "two legacy versions", h: header("Mcp-Protocol-Version", "2025-11-25", "Mcp-Protocol-Version", "2025-06-18")},
		{name: "legacy with odd headers", h: header("Mcp-Protocol-Version", "2025-11-25", "Mcp-Name", "ré", "Mcp-Name", "x",
			"Mcp-Method", "a", "Mcp-Method", "b")},
	} {
		t.Run(c.name, func(t *testing.T) {
			name, decoded, err := Headers(c.h, c.modern)
			if c.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.err)
				assert.True(t, strings.HasPrefix(err.Error(), "header mismatch: "), err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, name)
			assert.Equal(t, c.decoded, decoded)
		})
	}
}

// meta is a request body of method with params and a _meta naming
// version, which is spliced in as JSON (with its quotes).
func meta(id, method, params, version string) string {
	if params != "" {
		params += ","
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":{` + params +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":` + version + `,"io.modelcontextprotocol/clientCapabilities":{}}}}`
}

func TestBody(t *testing.T) {
	t.Parallel()
	read := meta("7", "resources/read", `"uri":"docs://readme"`, `"2026-07-28"`)
	for _, c := range []struct {
		name    string
		body    string
		version string // the header's
		id      any    // of the request refused; nil for none
		err     string // in the error; "" for none
	}{
		{name: "legacy request", version: "2025-11-25",
			body: `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"docs://readme"}}`},
		{name: "initialize", body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2026-07-28"}}`},
		{name: "modern request, legacy header", body: read, version: "2025-11-25", id: float64(7), err: "does not match"},
		{name: "modern request, no header", body: read, id: float64(7), err: "is required"},
		{name: "string id", body: meta(`"a"`, "resources/list", "", `"2026-07-28"`), id: "a", err: "is required"},
		{name: "notification", body: `{"jsonrpc":"2.0","method":"notifications/x","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
			version: "2025-11-25", err: "does not match"},
		{name: "header and _meta agree", body: meta("1", "resources/list", "", `"2025-11-25"`), version: "2025-11-25"},
		{name: "escaped key", version: "2025-11-25", id: float64(1), err: "does not match",
			body: `{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"_meta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28"}}}`},
		{name: "escaped underscore", version: "2025-11-25", id: float64(1), err: "does not match",
			body: `{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"\u005fmeta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`},
		{name: "batch", version: "2025-11-25", id: float64(2), err: "does not match",
			body: ` [{"jsonrpc":"2.0","id":1,"method":"resources/list"},` + meta("2", "resources/list", "", `"2026-07-28"`) + `]`},
		// As go-sdk reads it: keys as they are written, and a string only.
		{name: "_META", version: "2025-11-25",
			body: `{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"_META":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`},
		{name: "version not a string", body: meta("1", "resources/list", "", `20260728`), version: "2025-11-25"},
		{name: "empty version", body: meta("1", "resources/list", "", `""`), version: "2025-11-25"},
		{name: "_meta null", version: "2025-11-25",
			body: `{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"_meta":null}}`},
		{name: "params not an object", version: "2025-11-25",
			body: `{"jsonrpc":"2.0","id":1,"method":"resources/list","params":["io.modelcontextprotocol/protocolVersion"]}`},
		{name: "response", body: `{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`},
		{name: "not JSON", body: `{"io.modelcontextprotocol/protocolVersion"`},
		{name: "not JSON-RPC", body: `{"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`},
		{name: "broken batch", body: `[{"jsonrpc":"2.0","id":1,"method":"resources/list"`},
		// Refused as far as it parses: the handler would refuse it anyway.
		{name: "broken batch after a bad request", body: `[` + read, id: float64(7), err: "is required"},
		// Which of two keys counts is the reader's guess.
		{name: "two _meta", version: "2025-11-25", id: float64(1), err: "twice",
			body: `{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"},"_meta":{}}}`},
		{name: "two _meta, one escaped", version: "2025-11-25", id: float64(1), err: "twice",
			body: `{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"_meta":{},"\u005fmeta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}}`},
		{name: "two versions in _meta", version: "2025-11-25", id: float64(1), err: "twice",
			body: meta("1", "resources/list", "", `"2025-11-25","io.modelcontextprotocol/protocolVersion":"2025-11-25"`)},
		{name: "two params", version: "2025-11-25", id: float64(1), err: "twice",
			body: `{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}},"params":{}}`},
		{name: "two _meta in two messages", version: "2025-11-25",
			body: `[` + meta("1", "a", "", `"2025-11-25"`) + `,` + meta("2", "b", "", `"2025-11-25"`) + `]`},
		{name: "empty", body: ``},
	} {
		t.Run(c.name, func(t *testing.T) {
			id, err := Body([]byte(c.body), c.version)
			if c.err == "" {
				require.NoError(t, err)
				assert.False(t, id.IsValid())
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.err)
			if c.id == nil {
				assert.False(t, id.IsValid(), "no id")
				return
			}
			want, err := jsonrpc.MakeID(c.id)
			require.NoError(t, err)
			assert.Equal(t, want, id)
		})
	}
}

func TestID(t *testing.T) {
	t.Parallel()
	want, err := jsonrpc.MakeID(float64(7))
	require.NoError(t, err)
	assert.Equal(t, want, ID([]byte(`{"jsonrpc":"2.0","id":7,"method":"resources/list"}`)))
	for _, body := range []string{
		`{"jsonrpc":"2.0","method":"notifications/x"}`,
		`[{"jsonrpc":"2.0","id":7,"method":"resources/list"}]`,
		`{"jsonrpc":"2.0","id":7,"method":"resour`,
		``,
	} {
		assert.False(t, ID([]byte(body)).IsValid(), body)
	}
}

// FuzzBody: Body never panics; its shortcut (no backslash, no
// protocol-version key: nothing to check) answers as the scan does; and
// on valid JSON without a key given twice, the scan answers as the check
// it replaced, which decoded the body as go-sdk does.
func FuzzBody(f *testing.F) {
	f.Add([]byte(meta("1", "resources/read", `"uri":"a"`, `"2026-07-28"`)), "2025-11-25")
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"\u005fmeta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28"}}}`), "")
	f.Add([]byte(`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"x"}}}]`), "2025-06-18")
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"a","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":1}}}`), "")
	f.Add([]byte(`{"jsonrpc":"2.0","id":"\u0061","method":"\u0061","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"\u0078"}}}`), "x")
	f.Fuzz(func(t *testing.T, body []byte, version string) {
		id, err := Body(body, version)
		wantID, wantErr := scan(body, version)
		if (err == nil) != (wantErr == nil) || id != wantID {
			t.Fatalf("Body(%q, %q) = %v, %v; the scan: %v, %v", body, version, id, err, wantID, wantErr)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "header mismatch: ") {
			t.Fatalf("Body(%q, %q): error %q", body, version, err)
		}
		ID(body)
		if errors.Is(err, errDuplicate) || !json.Valid(body) {
			return
		}
		refID, refErr := reference(body, version)
		if refErr == nil && err != nil && !decodable(body) {
			return // refused where go-sdk cannot decode it either
		}
		if err != refErr || id != refID {
			t.Fatalf("Body(%q, %q) = %v, %v; decoding whole: %v, %v", body, version, id, err, refID, refErr)
		}
	})
}

// reference is the check Body made before its scan: the body decoded
// whole, as go-sdk decodes it.
func reference(body []byte, version string) (jsonrpc.ID, error) {
	if trimmed := bytes.TrimLeft(body, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(body, &batch) != nil {
			return jsonrpc.ID{}, nil
		}
		for _, m := range batch {
			if id, err := referenceMessage(m, version); err != nil {
				return id, err
			}
		}
		return jsonrpc.ID{}, nil
	}
	return referenceMessage(body, version)
}

// decodable reports whether go-sdk decodes each message of body.
func decodable(body []byte) bool {
	var batch []json.RawMessage
	if json.Unmarshal(body, &batch) != nil {
		batch = []json.RawMessage{body}
	}
	for _, m := range batch {
		if _, err := jsonrpc.DecodeMessage(m); err != nil {
			return false
		}
	}
	return true
}

func referenceMessage(data []byte, version string) (jsonrpc.ID, error) {
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return jsonrpc.ID{}, nil
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return jsonrpc.ID{}, nil
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	var v string
	var named map[string]json.RawMessage
	if len(req.Params) > 0 && json.Unmarshal(req.Params, &named) == nil && json.Unmarshal(named["_meta"], &p.Meta) == nil {
		_ = json.Unmarshal(p.Meta[mcp.MetaKeyProtocolVersion], &v)
	}
	switch {
	case v == "" || v == version:
		return jsonrpc.ID{}, nil
	case version == "":
		return req.ID, errNoHeader
	}
	return req.ID, errVersion
}

// FuzzHeaders: Headers never panics; what it passes is plain, and what it
// decodes was sent as Base64.
func FuzzHeaders(f *testing.F) {
	for _, s := range []string{"docs://readme", "=?base64?ZG9jczovL3JlYWRtZQ==?=", "=?base64??=", "=?base64?=", "ré", "=?base64?%%?=", ""} {
		f.Add(s, "2026-07-28")
	}
	f.Add("x", "2025-11-25")
	f.Fuzz(func(t *testing.T, name, version string) {
		h := header("Mcp-Protocol-Version", version, "Mcp-Method", "resources/read", "Mcp-Name", name)
		got, decoded, err := Headers(h, version >= "2026-07-28")
		switch {
		case err != nil:
			if !strings.HasPrefix(err.Error(), "header mismatch: ") {
				t.Fatalf("Headers(%q): error %q", name, err)
			}
		case version < "2026-07-28":
			if got != "" || decoded {
				t.Fatalf("Headers(%q) of a legacy request = %q, %v", name, got, decoded)
			}
		case !plain(name):
			t.Fatalf("Headers(%q) passed a value that is not plain", name)
		case decoded && !(strings.HasPrefix(name, base64Prefix) && strings.HasSuffix(name, base64Suffix)):
			t.Fatalf("Headers(%q) decoded a value without the sentinel", name)
		case !decoded && got != name:
			t.Fatalf("Headers(%q) = %q, not decoded", name, got)
		}
	})
}
