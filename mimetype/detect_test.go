package mimetype

import (
	"math/rand/v2"
	"mime"
	"strings"
	"testing"
	"unicode/utf8"
)

// Realistic first bytes of files in each format sniffSignature knows.
const (
	pngHeader  = "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
	jpegHeader = "\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
	gifHeader  = "GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04"
	zipHeader  = "PK\x03\x04\x14\x00\x00\x00\x08\x00\x00\x00!\x00\x00\x00\x00\x00"
	pdfHeader  = "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n"
	wavHeader  = "RIFF\x24\x08\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x02\x00"
	webpHeader = "RIFF\x24\x00\x00\x00WEBPVP8 \x18\x00\x00\x00"
	mp3ID3     = "ID3\x04\x00\x00\x00\x00\x00\x23TSSE\x00\x00\x00\x0f"
	mp3Frame   = "\xff\xfb\x90\x64\x00\x0f\xf0\x00\x00\x69\x00\x00\x00\x08" // MPEG-1 layer III
	aacADTS    = "\xff\xf1\x50\x80\x02\x1f\xfc\x21\x00\x49\x90\x02\x19\x00" // AAC in ADTS: no signature here
	mp4Header  = "\x00\x00\x00\x20ftypisom\x00\x00\x02\x00isomiso2avc1mp41\x00\x00\x00\x08free"
	m4aHeader  = "\x00\x00\x00\x20ftypM4A \x00\x00\x02\x00M4A isommp42\x00\x00\x00\x00"
	avifHeader = "\x00\x00\x00\x1cftypavif\x00\x00\x00\x00avifmif1miaf\x00\x00\x00\x00"
	heicHeader = "\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic\x00\x00\x00\x00"
	wasmHeader = "\x00asm\x01\x00\x00\x00\x01\x07\x01\x60"
	oggHeader  = "OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00"
	gzipHeader = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03"
)

// signatureCases holds, for every signature sniffSignature knows, a file
// start and the type it names. TestSignedCoversCases checks that every
// type in signed appears here.
var signatureCases = []struct {
	name, content, want string
}{
	{"png", pngHeader, "image/png"},
	{"jpeg jfif", jpegHeader, "image/jpeg"},
	{"jpeg exif", "\xff\xd8\xff\xe1\x00\x18Exif\x00\x00II*\x00", "image/jpeg"},
	{"gif87a", "GIF87a\x01\x00\x01\x00\x80\x00\x00", "image/gif"},
	{"gif89a", gifHeader, "image/gif"},
	{"webp", webpHeader, "image/webp"},
	{"wav", wavHeader, "audio/wav"},
	{"wav rf64", "RF64\xff\xff\xff\xffWAVEds64\x1c\x00\x00\x00", "audio/wav"},
	{"avi", "RIFF\x00\x10\x00\x00AVI LIST\x00\x01\x00\x00", "video/x-msvideo"},
	{"bmp", "BM\x3a\x00\x00\x00\x00\x00\x00\x00\x36\x00\x00\x00\x28\x00\x00\x00", "image/bmp"},
	{"ico", "\x00\x00\x01\x00\x01\x00\x10\x10\x00\x00\x01\x00\x20\x00", "image/vnd.microsoft.icon"},
	{"tiff little-endian", "II*\x00\x08\x00\x00\x00\x0e\x00", "image/tiff"},
	{"tiff big-endian", "MM\x00*\x00\x00\x00\x08\x00\x0e", "image/tiff"},
	{"bigtiff little-endian", "II+\x00\x08\x00\x00\x00\x10\x00\x00\x00", "image/tiff"},
	{"bigtiff big-endian", "MM\x00+\x00\x08\x00\x00\x00\x00\x00\x00", "image/tiff"},
	{"pdf", pdfHeader, "application/pdf"},
	{"zip", zipHeader, "application/zip"},
	{"zip empty", "PK\x05\x06\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", "application/zip"},
	{"zip spanned", "PK\x07\x08PK\x03\x04\x14\x00", "application/zip"},
	{"gzip", gzipHeader, "application/gzip"},
	{"bzip2", "BZh91AY&SY\x8b\x12\x00\x00", "application/x-bzip2"},
	{"xz", "\xfd7zXZ\x00\x00\x04\xe6\xd6\xb4\x46", "application/x-xz"},
	{"7z", "7z\xbc\xaf\x27\x1c\x00\x04\x8d\x9b", "application/x-7z-compressed"},
	{"zstd", "\x28\xb5\x2f\xfd\x24\x05\x29\x00\x00", "application/zstd"},
	{"rar", "Rar!\x1a\x07\x01\x00\x33\x92\xb5\xe5", "application/vnd.rar"},
	{"wasm", wasmHeader, "application/wasm"},
	{"sqlite", "SQLite format 3\x00\x10\x00\x01\x01\x00\x40\x20\x20", "application/vnd.sqlite3"},
	{"mp3 id3", mp3ID3, "audio/mpeg"},
	{"mp3 mpeg-1 layer III", mp3Frame, "audio/mpeg"},
	{"mp3 mpeg-2 layer III", "\xff\xf3\x48\xc4\x00\x00", "audio/mpeg"},
	{"mp2 mpeg-1 layer II", "\xff\xfd\x94\x00\x00\x00", "audio/mpeg"},
	{"ogg", oggHeader, "audio/ogg"},
	{"flac", "fLaC\x00\x00\x00\x22\x10\x00\x10\x00", "audio/flac"},
	{"webm", "\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81", "video/webm"},
	{"avif", avifHeader, "image/avif"},
	{"avif sequence", "\x00\x00\x00\x1cftypavis\x00\x00\x00\x00avisavifmsf1", "image/avif"},
	{"avif under mif1", "\x00\x00\x00\x1cftypmif1\x00\x00\x00\x00mif1avifmiaf", "image/avif"},
	{"heic", heicHeader, "image/heic"},
	{"heic under mif1", "\x00\x00\x00\x18ftypmif1\x00\x00\x00\x00mif1heic", "image/heic"},
	{"heif", "\x00\x00\x00\x14ftypmif1\x00\x00\x00\x00mif1\x00\x00\x00\x00", "image/heif"},
	{"m4a", m4aHeader, "audio/mp4"},
	{"quicktime ftyp", "\x00\x00\x00\x14ftypqt  \x20\x05\x03\x00qt  ", "video/quicktime"},
	{"quicktime moov", "\x00\x00\x06\x5cmoov\x00\x00\x00\x6cmvhd", "video/quicktime"},
	{"quicktime wide", "\x00\x00\x00\x08wide\x00\x01\x00\x00mdat", "video/quicktime"},
	{"quicktime mdat", "\x00\x10\x00\x00mdat\x00\x00\x00\x00", "video/quicktime"},
	{"3gp", "\x00\x00\x00\x18ftyp3gp5\x00\x00\x00\x00", "video/3gpp"},
	{"mp4", mp4Header, "video/mp4"},
	{"mp4 segment", "\x00\x00\x00\x18stypmsdh\x00\x00\x00\x00msdhmsix", "video/mp4"},
	{"woff", "wOFF\x00\x01\x00\x00\x00\x00\x10\x00", "font/woff"},
	{"woff2", "wOF2\x00\x01\x00\x00\x00\x00\x10\x00", "font/woff2"},
	{"otf", "OTTO\x00\x0b\x00\x80\x00\x03\x00\x30", "font/otf"},
	{"ttf", "\x00\x01\x00\x00\x00\x0f\x00\x80\x00\x03\x00\x70", "font/ttf"},
}

func TestSniffSignature(t *testing.T) {
	for _, tc := range signatureCases {
		if got := sniffSignature([]byte(tc.content)); got != tc.want {
			t.Errorf("%s: sniffSignature = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestSniffSignatureNone(t *testing.T) {
	for name, content := range map[string]string{
		"empty":                    "",
		"text":                     "hello, world",
		"aac adts":                 aacADTS,
		"jpeg cut short":           "\xff\xd8",
		"png cut short":            "\x89PNG\r\n",
		"bm text":                  "BMW is a car brand",
		"icon of no images":        "\x00\x00\x01\x00\x00\x00\x10\x10",
		"ftyp in text":             "abcdftypisom and more",
		"ftyp box too short":       "\x00\x00\x00\x20ftyp",
		"moov with a large size":   "\x01\x00\x00\x00moov\x00\x00",
		"riff of something else":   "RIFF\x00\x00\x00\x00CDXAfmt ",
		"zip central directory":    "PK\x01\x02\x14\x00",
		"mpeg sync without layers": "\xff\xe0\x00\x00",
		"mpeg layer I":             "\xff\xfe\x90\x00",
		"mpeg reserved version":    "\xff\xeb\x90\x00",
		"mpeg bad bit rate":        "\xff\xfb\xf0\x00",
		"mpeg bad sample rate":     "\xff\xfb\x9c\x00",
		"mpeg sync only":           "\xff\xfb",
		"utf-16le bom":             "\xff\xfeh\x00i\x00",
		"padding":                  "\xff\xff\xff\xff",
		"tar":                      "hello.txt\x00\x00\x00\x00\x00",
	} {
		if got := sniffSignature([]byte(content)); got != "" {
			t.Errorf("%s: sniffSignature(%q) = %q, want none", name, content, got)
		}
	}
}

// TestSignedCoversCases checks that the types a blob must carry the
// signature of are exactly the types signatureCases names, so that a new
// signature comes with a test case and a sample in signatureSamples.
func TestSignedCoversCases(t *testing.T) {
	want := map[string]bool{}
	for _, tc := range signatureCases {
		want[tc.want] = true
	}
	for typ := range signed {
		if !want[typ] {
			t.Errorf("signed type %s has no case in signatureCases", typ)
		}
	}
	for typ := range want {
		if !signed[typ] {
			t.Errorf("type %s of signatureCases is not in signed (add a sample to signatureSamples)", typ)
		}
	}
	for _, s := range signatureSamples {
		if sniffSignature([]byte(s)) == "" {
			t.Errorf("signature sample %q names no type", s)
		}
	}
}

// TestCheckedTypesAreBinary checks that every type Validate holds to a
// signature is binary, so that RuleSignature is reached.
func TestCheckedTypesAreBinary(t *testing.T) {
	types := []string{
		"application/java-archive", "application/vnd.android.package-archive", "application/vnd.ms-xpsdocument",
		"application/oxps", "application/vnd.google-earth.kmz", "application/epub+zip", "model/vnd.usdz+zip",
		"application/vnd.openxmlformats-officedocument.presentationml.presentation",
		"application/vnd.oasis.opendocument.spreadsheet", "image/apng", "application/x-compressed-tar",
		"application/x-gtar", "application/tlsrpt+gzip",
	}
	for typ := range signed {
		types = append(types, typ)
	}
	for typ := range aliases {
		types = append(types, typ)
	}
	for _, typ := range types {
		if d := canonical(typ); checked(d) != IsBinary(typ) && checked(d) {
			t.Errorf("%s: a signature is checked, but the type is not binary", typ)
		}
		if !checked(canonical(typ)) && signed[typ] {
			t.Errorf("%s: signed but not checked", typ)
		}
	}
}

func TestByExtension(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		// Plain text, markdown, csv, html.
		{"notes.txt", "text/plain"},
		{"server.log", "text/plain"},
		{"README", "text/plain"},
		{"Makefile", "text/plain"},
		{"go.mod", "text/plain"},
		{".gitignore", "text/plain"},
		{"README.md", "text/markdown"},
		{"doc.markdown", "text/markdown"},
		{"data.csv", "text/csv"},
		{"data.tsv", "text/tab-separated-values"},
		{"index.html", "text/html"},
		{"index.htm", "text/html"},
		{"site.css", "text/css"},
		// Source code.
		{"main.go", "text/x-go"},
		{"lib.rs", "text/x-rust"},
		{"app.py", "text/x-python"},
		{"Main.java", "text/x-java"},
		{"app.js", "text/javascript"},
		{"app.mjs", "text/javascript"},
		{"app.ts", "text/x-typescript"},
		{"App.tsx", "text/x-typescript"},
		{"main.c", "text/x-c"},
		{"query.sql", "application/sql"},
		{"run.sh", "text/x-shellscript"},
		// Data and markup.
		{"data.json", "application/json"},
		{"doc.jsonld", "application/ld+json"},
		{"feed.xml", "application/xml"},
		{"feed.atom", "application/atom+xml"},
		{"page.xhtml", "application/xhtml+xml"},
		{"logo.svg", "image/svg+xml"},
		{"config.yaml", "application/yaml"},
		{"config.yml", "application/yaml"},
		{"Cargo.toml", "application/toml"},
		// Images.
		{"a.png", "image/png"},
		{"a.jpg", "image/jpeg"},
		{"a.jpeg", "image/jpeg"},
		{"a.gif", "image/gif"},
		{"a.webp", "image/webp"},
		{"a.bmp", "image/bmp"},
		{"favicon.ico", "image/vnd.microsoft.icon"},
		{"a.tiff", "image/tiff"},
		{"a.avif", "image/avif"},
		{"a.heic", "image/heic"},
		// Audio and video.
		{"a.mp3", "audio/mpeg"},
		{"a.ogg", "audio/ogg"},
		{"a.wav", "audio/wav"},
		{"a.flac", "audio/flac"},
		{"a.m4a", "audio/mp4"},
		{"a.aac", "audio/aac"},
		{"a.mp4", "video/mp4"},
		{"a.webm", "video/webm"},
		{"a.mov", "video/quicktime"},
		{"a.avi", "video/x-msvideo"},
		{"a.mkv", "video/x-matroska"},
		// Documents, archives, binaries.
		{"a.pdf", "application/pdf"},
		{"a.zip", "application/zip"},
		{"a.tar.gz", "application/gzip"},
		{"a.tgz", "application/gzip"},
		{"a.tar", "application/x-tar"},
		{"a.bz2", "application/x-bzip2"},
		{"a.xz", "application/x-xz"},
		{"a.7z", "application/x-7z-compressed"},
		{"a.zst", "application/zstd"},
		{"a.rar", "application/vnd.rar"},
		{"a.jar", "application/java-archive"},
		{"a.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
		{"a.epub", "application/epub+zip"},
		{"a.wasm", "application/wasm"},
		{"a.woff2", "font/woff2"},
		{"a.bin", Binary},
		// Directories.
		{"dir/", Directory},
		{"file:///a/b/", Directory},
		{"file:///a/b/?list=1", Directory},
		// Paths and URIs.
		{"/home/me/src/main.go", "text/x-go"},
		{"file:///a/b.go", "text/x-go"},
		{"https://example.com/data.json?raw=1#top", "application/json"},
		{"file:///a/b.go#L10", "text/x-go"},
		{`C:\src\main.go`, "text/x-go"},
		{"dir.d/README", "text/plain"},
		// Case.
		{"PHOTO.JPG", "image/jpeg"},
		{"Main.GO", "text/x-go"},
		{"README.MD", "text/markdown"},
		// Unknown.
		{"", ""},
		{"archive.unknownext", ""},
		{"noext", ""},
		{"https://example.com", ""},
		{"a.txt?", ""}, // not a URI: '?' is part of the name
	} {
		if got := ByExtension(tc.name); got != tc.want {
			t.Errorf("ByExtension(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestExtensionTable checks every type the extension table names: it
// parses, and is either textual or binary, never both nor neither.
func TestExtensionTable(t *testing.T) {
	for ext, typ := range byExt {
		if ext != strings.ToLower(ext) || !strings.HasPrefix(ext, ".") {
			t.Errorf("extension %q: want lower case with a dot", ext)
		}
		if _, _, err := mime.ParseMediaType(typ); err != nil {
			t.Errorf("%s: %q does not parse: %v", ext, typ, err)
		}
		if IsTextual(typ) == IsBinary(typ) {
			t.Errorf("%s: %q: IsTextual = IsBinary = %v", ext, typ, IsTextual(typ))
		}
	}
}

func TestDetect(t *testing.T) {
	utf16 := "\xff\xfeh\x00i\x00\n\x00"
	for _, tc := range []struct {
		desc, name, content string
		nilContent          bool
		want                string
		text                bool
	}{
		// The extension, confirmed by text content.
		{"go source", "main.go", "package main\n", false, "text/x-go", true},
		{"rust source", "lib.rs", "fn main() {}\n", false, "text/x-rust", true},
		{"markdown", "README.md", "# Title\n", false, "text/markdown", true},
		{"json", "data.json", `{"k": 1}`, false, "application/json", true},
		{"svg", "logo.svg", `<svg xmlns="http://www.w3.org/2000/svg"/>`, false, "image/svg+xml", true},
		{"uri", "file:///a/b.go", "package b\n", false, "text/x-go", true},
		{"uri with a query", "https://h/x.csv?raw=1", "a,b\n1,2\n", false, "text/csv", true},
		{"upper-case extension", "MAIN.GO", "package main\n", false, "text/x-go", true},
		{"utf-8 text", "notes.txt", "héllo wörld ✓\n", false, "text/plain", true},
		{"escape sequences", "build.log", "\x1b[31mFAIL\x1b[0m\n", false, "text/plain", true},

		// No content: the name decides.
		{"no content, textual", "main.go", "", true, "text/x-go", true},
		{"no content, binary", "photo.png", "", true, "image/png", false},
		{"empty content", "notes.md", "", false, "text/markdown", true},
		{"no content, unknown name", "mystery", "", true, Binary, false},
		{"no content, no name", "", "", true, Binary, false},

		// Directories.
		{"directory", "dir/", "", true, Directory, false},
		{"directory uri", "file:///srv/data/", "whatever", false, Directory, false},

		// Signatures.
		{"png unnamed", "", pngHeader, false, "image/png", false},
		{"png named", "logo.png", pngHeader, false, "image/png", false},
		{"upper-case binary extension", "PHOTO.JPG", jpegHeader, false, "image/jpeg", false},
		{"signature contradicts extension", "photo.jpg", pngHeader, false, "image/png", false},
		{"signature contradicts textual extension", "notes.txt", pngHeader, false, "image/png", false},
		{"signature finer than octet-stream", "blob.bin", pdfHeader, false, "application/pdf", false},
		{"docx is a zip", "report.docx", zipHeader, false, "application/vnd.openxmlformats-officedocument.wordprocessingml.document", false},
		{"epub is a zip", "book.epub", zipHeader, false, "application/epub+zip", false},
		{"jar is a zip", "app.jar", zipHeader, false, "application/java-archive", false},
		{"m4a is an mp4", "song.m4a", mp4Header, false, "audio/mp4", false},
		{"jpg alias", "photo.jpeg", jpegHeader, false, "image/jpeg", false},
		{"wav", "sound.wav", wavHeader, false, "audio/wav", false},
		{"mp3 id3", "", mp3ID3, false, "audio/mpeg", false},
		{"mp3 frame", "", mp3Frame, false, "audio/mpeg", false},
		{"aac adts named", "song.aac", aacADTS, false, "audio/aac", false},
		{"aac adts unnamed", "", aacADTS, false, Binary, false},
		{"aac adts named mp3", "song.mp3", aacADTS, false, Binary, false},
		{"wasm", "x", wasmHeader, false, "application/wasm", false},
		{"heic named heif", "photo.heif", heicHeader, false, "image/heif", false},

		// A signature in text with a textual extension is a coincidence.
		{"gif letters in text", "notes.txt", "GIF89a is an image format.\n", false, "text/plain", true},
		{"pdf letters in markdown", "pdf.md", "%PDF-1.7 starts a PDF\n", false, "text/markdown", true},
		{"id3 letters in text", "tags.txt", "ID3 tags\n", false, "text/plain", true},
		{"gif letters unnamed", "", "GIF89a", false, "image/gif", false},

		// The extension's type stands unless the content contradicts it.
		{"binary in a text file", "notes.txt", "\x00\x01\x02\x03\x04", false, Binary, false},
		{"latin-1 in a text file", "notes.txt", "caf\xe9 cr\xe8me", false, Binary, false},
		{"latin-1 ending like a cut character", "notes.txt", "caf\xe9", false, "text/plain", true},
		{"text in a png", "photo.png", "hello", false, PlainText, true},
		{"html in a png", "photo.png", "<html><body>hi</body></html>", false, "text/html; charset=utf-8", true},
		{"text in a tar", "a.tar", "hello", false, "application/x-tar", false},
		{"utf-16 in a csv", "data.csv", utf16, false, "text/csv; charset=utf-16le", false},

		// Unknown names: net/http's sniffer.
		{"plain text", "", "hello\n", false, PlainText, true},
		{"json unnamed", "any://thing", `{"k": 1}`, false, PlainText, true},
		{"html", "", "<!DOCTYPE html><html><body>hi", false, "text/html; charset=utf-8", true},
		{"xml", "", `<?xml version="1.0"?><a/>`, false, "text/xml; charset=utf-8", true},
		{"utf-16le", "", utf16, false, "text/plain; charset=utf-16le", false},
		{"utf-16be", "", "\xfe\xff\x00h\x00i", false, "text/plain; charset=utf-16be", false},
		{"postscript", "", "%!PS-Adobe-3.0\n\x01\x02", false, "application/postscript", false},
		{"midi", "", "MThd\x00\x00\x00\x06\x00\x01", false, "audio/midi", false},
		{"net/http icon without images", "", "\x00\x00\x01\x00\x00\x00", false, Binary, false},
		{"binary", "", "\x00\x01\x02\x03", false, Binary, false},
		{"control character", "", "hi\x01there", false, Binary, false},
		{"nul", "", "hi\x00there", false, Binary, false},

		// A prefix: a character cut at the end is not held against it.
		{"cut character", "", "日本"[:4], false, PlainText, true},
		{"cut character named", "a.txt", "h\xc3", false, "text/plain", true},
		{"lone cut character", "", "\xe6\x97", false, Binary, false},
		{"invalid, not cut", "", "ab\xff", false, Binary, false},
	} {
		var content []byte
		if !tc.nilContent {
			content = []byte(tc.content)
		}
		got, text := Detect(tc.name, content)
		if got != tc.want || text != tc.text {
			t.Errorf("%s: Detect(%q, %q) = %q, %v; want %q, %v", tc.desc, tc.name, tc.content, got, text, tc.want, tc.text)
		}
	}
}

// TestDetectSignatures checks that Detect names every signature, with or
// without a name, and that the content passes Validate for that type.
func TestDetectSignatures(t *testing.T) {
	for _, tc := range signatureCases {
		for _, name := range []string{"", "mystery", "file:///data/blob.bin"} {
			got, text := Detect(name, []byte(tc.content))
			if got != tc.want || text {
				t.Errorf("%s: Detect(%q, ...) = %q, %v; want %q, false", tc.name, name, got, text, tc.want)
			}
		}
	}
}

func TestIsTextContent(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"", true},
		{"hello\n", true},
		{"tab\tnewline\ncr\rff\fvt\vesc\x1b", true},
		{"del\x7f", true},
		{"héllo, 世界, 🙂", true},
		{"\ufeffbom", true},
		{"nul\x00", false},
		{"\x01", false},
		{"bell\a", false},
		{"backspace\b", false},
		{"sub\x1a", false},
		{"unit separator\x1f", false},
		{"\xff", false},
		{"caf\xe9", false},
		{"cut \xe4\xb8", false},
		{"surrogate \xed\xa0\x80", false},
		{"overlong \xc0\xaf", false},
	} {
		if got := IsTextContent([]byte(tc.in)); got != tc.want {
			t.Errorf("IsTextContent(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
	// Every C0 control, at every offset of a word-sized run.
	for c := range byte(0x20) {
		allowed := strings.IndexByte("\t\n\v\f\r\x1b", c) >= 0
		for n := 1; n <= 24; n++ {
			for i := range n {
				b := []byte(strings.Repeat("x", n))
				b[i] = c
				if got := IsTextContent(b); got != allowed {
					t.Fatalf("IsTextContent(%q) = %v, want %v", b, got, allowed)
				}
			}
		}
	}
}

// isTextContentRef is IsTextContent written plainly.
func isTextContentRef(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\v' && c != '\f' && c != '\r' && c != 0x1b {
			return false
		}
	}
	return utf8.Valid(b)
}

func TestIsTextContentRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab \t\n\r\x00\x01\x1b\x1f\x20\x7f\x80\xc3\xa9\xe4\xb8\x96\xff")
	for range 20000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		if got, want := IsTextContent(b), isTextContentRef(b); got != want {
			t.Fatalf("IsTextContent(%q) = %v, want %v", b, got, want)
		}
	}
}

func TestIsTextualIsBinary(t *testing.T) {
	const (
		textual = iota
		binary
		unknown
	)
	for _, tc := range []struct {
		typ  string
		kind int
	}{
		{"text/plain", textual},
		{"text/plain; charset=utf-8", textual},
		{"TEXT/Markdown", textual},
		{"text/x-go", textual},
		{"text/csv", textual},
		{"text/html", textual},
		{"application/json", textual},
		{"application/ld+json", textual},
		{"application/vnd.api+json", textual},
		{"application/xml", textual},
		{"application/atom+xml", textual},
		{"image/svg+xml", textual},
		{"application/yaml", textual},
		{"application/x-yaml", textual},
		{"application/toml", textual},
		{"application/javascript", textual},
		{"application/x-ndjson", textual},
		{"application/sql", textual},
		{"image/png", binary},
		{"image/jpeg", binary},
		{"audio/mpeg", binary},
		{"video/mp4", binary},
		{"font/woff2", binary},
		{"application/pdf", binary},
		{"application/zip", binary},
		{"application/gzip", binary},
		{"application/wasm", binary},
		{"application/octet-stream", binary},
		{"application/epub+zip", binary},
		{"application/vnd.openxmlformats-officedocument.wordprocessingml.document", binary},
		{"application/vnd.oasis.opendocument.text", binary},
		{Directory, binary},
		{"application/x-custom", unknown},
		{"message/rfc822", unknown},
		{"text", unknown}, // mime.ParseMediaType accepts it; it is no media type
		{"", unknown},
		{"not a type", unknown},
		{"text/", unknown},
	} {
		want := [3][2]bool{textual: {true, false}, binary: {false, true}, unknown: {false, false}}[tc.kind]
		if got := [2]bool{IsTextual(tc.typ), IsBinary(tc.typ)}; got != want {
			t.Errorf("%q: IsTextual, IsBinary = %v, want %v", tc.typ, got, want)
		}
	}
}

func TestCompatible(t *testing.T) {
	for _, tc := range []struct {
		declared, detected string
		want               bool
	}{
		{"image/png", "image/png", true},
		{"image/png; foo=bar", "IMAGE/PNG", true},
		{"image/jpg", "image/jpeg", true},
		{"image/pjpeg", "image/jpeg", true},
		{"image/x-icon", "image/vnd.microsoft.icon", true},
		{"audio/x-wav", "audio/wav", true},
		{"audio/wave", "audio/wav", true},
		{"audio/mp3", "audio/mpeg", true},
		{"video/x-matroska", "video/webm", true},
		{"application/ogg", "audio/ogg", true},
		{"application/x-zip-compressed", "application/zip", true},
		{"application/vnd.openxmlformats-officedocument.wordprocessingml.document", "application/zip", true},
		{"application/vnd.oasis.opendocument.text", "application/zip", true},
		{"application/epub+zip", "application/zip", true},
		{"application/java-archive", "application/zip", true},
		{"application/vnd.android.package-archive", "application/zip", true},
		{"image/apng", "image/png", true},
		{"application/x-compressed-tar", "application/gzip", true},
		{"audio/mp4", "video/mp4", true},
		{"video/mp4", "audio/mp4", true},
		{"video/mp4", "video/quicktime", true},
		{"audio/aac", "video/mp4", true},
		{"video/3gpp", "video/mp4", true},
		{"image/heif", "image/avif", true},
		{"image/heic", "image/heif", true},
		{"image/png", "image/jpeg", false},
		{"application/zip", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", false},
		{"image/avif", "image/heic", false},
		{"video/mp4", "image/avif", false},
		{"audio/mpeg", "audio/ogg", false},
		{"application/octet-stream", "image/png", false},
		{"text/plain", "application/pdf", false},
		{"not a type", "image/png", false},
		{"image/png", "", false},
	} {
		if got := Compatible(tc.declared, tc.detected); got != tc.want {
			t.Errorf("Compatible(%q, %q) = %v, want %v", tc.declared, tc.detected, got, tc.want)
		}
	}
}

// parseTypeRef is parseType by mime.ParseMediaType alone.
func parseTypeRef(t string) (base, charset string, ok bool) {
	base, params, err := mime.ParseMediaType(t)
	if err != nil || !strings.Contains(base, "/") {
		return "", "", false
	}
	return base, params["charset"], true
}

func TestParseType(t *testing.T) {
	for _, typ := range []string{
		"text/plain", "image/svg+xml", "application/vnd.api+json", "Text/Plain", "text/plain; charset=utf-8",
		"text", "text/", "/plain", "a/b/c", " text/plain", "text/plain ", "", "*/*", "x/y;", "é/x", "text/pl\x00ain",
		"text/plain;charset=UTF-8", "text/plain; CHARSET=latin1", "text/plain; charset=", "text/plain; charset=\"utf-8\"",
		"text/plain; charset=utf-8;", "text/plain; charset=utf-8 ", "text/plain; charset=utf-8; format=flowed",
		"text/plain; format=flowed", "text/plain;\tcharset=x", "text/plain;\ncharset=x", "text/plain; charſet=x",
		"text/plain; charset=a=b", "text/plain; charset=é", "text/plain ;charset=x", "text/plain; charset",
		"TEXT/PLAIN; charset=x",
	} {
		base, charset, ok := parseType(typ)
		wbase, wcharset, wok := parseTypeRef(typ)
		if base != wbase || charset != wcharset || ok != wok {
			t.Errorf("parseType(%q) = %q, %q, %v; want %q, %q, %v", typ, base, charset, ok, wbase, wcharset, wok)
		}
	}
}
