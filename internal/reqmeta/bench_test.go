package reqmeta

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A benchBody is a body of BenchmarkBody, and its Mcp-Protocol-Version
// header ("" for none).
type benchBody struct {
	body    []byte
	version string
}

// benchBodies are the bodies of BenchmarkBody: a 4 MiB batch of tiny
// messages, each with a backslash, so that no shortcut applies, of a
// 2025-11-25 client; bench/caps's batch attack, as large, of tiny
// notifications with an empty _meta each, with no version header (a
// client of 2025-03-26, whose batches the edge scanned before it left
// them to go-sdk's handler); and one request of a 2025-11-25 client whose
// _meta names its version.
func benchBodies() map[string]benchBody {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := 0; b.Len() < 4<<20-100; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"a\/b"}`)
	}
	b.WriteByte(']')
	var attack bytes.Buffer
	attack.WriteByte('[')
	msg := `{"jsonrpc":"2.0","method":"a\\b","params":{"_meta":{}}}`
	for attack.Len() < 4<<20-len(msg)-2 {
		if attack.Len() > 1 {
			attack.WriteByte(',')
		}
		attack.WriteString(msg)
	}
	attack.WriteByte(']')
	return map[string]benchBody{
		"batch":           {b.Bytes(), "2025-11-25"},
		"batch-nosession": {attack.Bytes(), ""},
		"request":         {[]byte(meta("1", "resources/read", `"uri":"docs:\/\/readme"`, `"2025-11-25"`)), "2025-11-25"},
	}
}

// BenchmarkBody is the scan beside the check it replaced (before), and
// go-sdk's decoding of the same body as its handler decodes a POST (mcp's
// readBatch: the array, then each message with jsonrpc.DecodeMessage);
// for a batch, also what serve's edge now reads of it for go-sdk's
// handler (head):
//
//	go test ./internal/reqmeta -run XXX -bench Body -benchmem -count 5
func BenchmarkBody(b *testing.B) {
	for name, bb := range benchBodies() {
		body := bb.body
		b.Run(name+"/scan", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := Body(body, bb.version); err != nil {
					b.Fatal(err)
				}
			}
		})
		if IsBatch(body) {
			// What serve's edge reads of a batch for go-sdk's handler:
			// its first bytes, enough to know it is one, whatever its
			// length.
			b.Run(name+"/head", func(b *testing.B) {
				for b.Loop() {
					if !IsBatch(body[:512]) {
						b.Fatal("not a batch")
					}
				}
			})
		}
		b.Run(name+"/before", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := reference(body, bb.version); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/go-sdk", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				decodeAsGoSDK(b, body)
			}
		})
	}
}

// decodeAsGoSDK decodes body as go-sdk v1.8's handler does.
func decodeAsGoSDK(b *testing.B, body []byte) {
	if body[0] != '[' {
		if _, err := jsonrpc.DecodeMessage(body); err != nil {
			b.Fatal(err)
		}
		return
	}
	var batch []json.RawMessage
	if err := json.Unmarshal(body, &batch); err != nil {
		b.Fatal(err)
	}
	for _, m := range batch {
		if _, err := jsonrpc.DecodeMessage(m); err != nil {
			b.Fatal(err)
		}
	}
}
