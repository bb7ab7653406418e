package reqmeta

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// benchBodies are the bodies of BenchmarkBody: a 4 MiB batch of tiny
// messages, each with a backslash, so that no shortcut applies; and one
// request of a 2025-11-25 client whose _meta names its version.
func benchBodies() map[string][]byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := 0; b.Len() < 4<<20-100; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"a\/b"}`)
	}
	b.WriteByte(']')
	return map[string][]byte{
		"batch":   b.Bytes(),
		"request": []byte(meta("1", "resources/read", `"uri":"docs:\/\/readme"`, `"2025-11-25"`)),
	}
}

// BenchmarkBody is the scan beside the check it replaced (before) and
// go-sdk's decoding of the same body,
// as its handler decodes a POST (mcp's readBatch: the array, then each
// message with jsonrpc.DecodeMessage):
//
//	go test ./internal/reqmeta -run XXX -bench Body -benchmem -count 5
func BenchmarkBody(b *testing.B) {
	for name, body := range benchBodies() {
		b.Run(name+"/scan", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := Body(body, "2025-11-25"); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/before", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := reference(body, "2025-11-25"); err != nil {
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
