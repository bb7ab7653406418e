package mimetype

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The benchmarks set each check beside its baseline, on the same input in
// the same run, so that their ratio is what the issue asks about:
//
//	go test -run '^$' -bench . -benchmem -count 5 ./mimetype/
//
// BenchmarkValidateText: Validate's UTF-8 rule against utf8.ValidString,
// in MB/s (want >= 1 GB/s). BenchmarkValidateJSON: Validate against
// encoding/json.Valid (want within 2x). BenchmarkValidateBlob: a 1 MB
// blob, of which Validate reads the signature only (want a few µs).

var sizes = []struct {
	name string
	n    int
}{{"100KB", 100 << 10}, {"1MB", 1 << 20}}

// benchText returns n bytes of UTF-8 prose, mostly ASCII, with accented
// letters, CJK and an emoji now and then.
func benchText(n int) string {
	const line = "The quick brown fox jumps over the lazy dog; café, naïve, Grüße, 日本語のテキスト, 🙂.\n"
	s := strings.Repeat(line, n/len(line)+1)
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// benchJSON returns a JSON array of objects of about n bytes.
func benchJSON(n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"item %d","price":%d.%02d,"tags":["a","b","ünïcode"],"ok":true,"parent":null}`, i, i, i, i%100)
	}
	b.WriteByte(']')
	return b.String()
}

// benchXML returns an XML document of about n bytes.
func benchXML(n int) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><items>`)
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, `<item id="%d"><name>item %d &amp; more</name><tags><tag>a</tag><tag>b</tag></tags></item>`, i, i)
	}
	b.WriteString(`</items>`)
	return b.String()
}

var sink bool

func BenchmarkValidateText(b *testing.B) {
	for _, size := range sizes {
		s := benchText(size.n)
		c := &mcp.ResourceContents{Text: s}
		b.Run(size.name+"/mimetype", func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				if err := Validate("text/plain; charset=utf-8", c); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(size.name+"/utf8-ValidString", func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				sink = utf8.ValidString(s)
			}
		})
	}
}

func BenchmarkValidateJSON(b *testing.B) {
	for _, size := range sizes {
		s := benchJSON(size.n)
		data := []byte(s)
		c := &mcp.ResourceContents{Text: s}
		b.Run(size.name+"/mimetype", func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				if err := Validate("application/json", c); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(size.name+"/encoding-json-Valid", func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				sink = json.Valid(data)
			}
		})
	}
}

func BenchmarkValidateBlob(b *testing.B) {
	png := make([]byte, 1<<20)
	copy(png, pngHeader)
	docx := make([]byte, 1<<20)
	copy(docx, zipHeader)
	for _, tc := range []struct {
		name, declared string
		blob           []byte
	}{
		{"1MB-png", "image/png", png},
		{"1MB-docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", docx},
		{"1MB-png-with-parameter", "image/png; name=logo", png},
	} {
		c := &mcp.ResourceContents{Blob: tc.blob}
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if err := Validate(tc.declared, c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkValidateXML sets Validate beside a bare encoding/xml token
// loop, the least a well-formedness check with encoding/xml costs.
func BenchmarkValidateXML(b *testing.B) {
	s := benchXML(100 << 10)
	c := &mcp.ResourceContents{Text: s}
	b.Run("100KB/mimetype", func(b *testing.B) {
		b.SetBytes(int64(len(s)))
		for b.Loop() {
			if err := Validate("application/xml", c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("100KB/encoding-xml-Token", func(b *testing.B) {
		b.SetBytes(int64(len(s)))
		for b.Loop() {
			d := xml.NewDecoder(strings.NewReader(s))
			for {
				if _, err := d.Token(); err != nil {
					if err != io.EOF {
						b.Fatal(err)
					}
					break
				}
			}
		}
	})
}

// BenchmarkIsTextContent sets Detect's text test (UTF-8 and no binary
// control character) beside utf8.Valid.
func BenchmarkIsTextContent(b *testing.B) {
	data := []byte(benchText(1 << 20))
	b.Run("1MB/mimetype", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			sink = IsTextContent(data)
		}
	})
	b.Run("1MB/utf8-Valid", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			sink = utf8.Valid(data)
		}
	})
}

// BenchmarkDetect detects the first 512 bytes of a resource, as a
// registry does to fill in a missing type.
func BenchmarkDetect(b *testing.B) {
	png := make([]byte, 512)
	copy(png, pngHeader)
	for _, tc := range []struct {
		name, file string
		content    []byte
	}{
		{"go-source", "file:///src/main.go", []byte(benchText(512))},
		{"png", "file:///img/logo", png},
		{"unknown-text", "any://thing", []byte(benchText(512))},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				_, sink = Detect(tc.file, tc.content)
			}
		})
	}
}
