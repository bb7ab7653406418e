// Package mimetype detects the MIME type of resource content and checks
// that content matches the type a resource declares.
//
// Detect names a type from a file name's extension, refined by the
// content's signature (magic bytes) and, as a last resort, net/http's
// sniffer. Validate checks one MCP resource content against its declared
// type and names the rule it breaks: text where a blob belongs, JSON that
// does not parse, a PNG that is really a JPEG.
package mimetype

import (
	"encoding/binary"
	"net/http"
	"path"
	"strings"
	"unicode/utf8"
)

// Directory is the MIME type of a directory.
const Directory = "inode/directory"

// Fallbacks for content Detect knows nothing about.
const (
	PlainText = "text/plain; charset=utf-8"
	Binary    = "application/octet-stream"
)

// byExt maps lower-case extensions to types.
var byExt = map[string]string{
	// Text and markup.
	".txt": "text/plain", ".text": "text/plain", ".log": "text/plain",
	".md": "text/markdown", ".markdown": "text/markdown",
	".csv": "text/csv", ".tsv": "text/tab-separated-values",
	".html": "text/html", ".htm": "text/html", ".css": "text/css",
	".xml": "application/xml", ".xsd": "application/xml", ".rss": "application/rss+xml", ".atom": "application/atom+xml",
	".xhtml": "application/xhtml+xml", ".svg": "image/svg+xml",
	".json": "application/json", ".jsonld": "application/ld+json", ".geojson": "application/geo+json",
	".webmanifest": "application/manifest+json", ".ipynb": "application/x-ipynb+json",
	".ndjson": "application/x-ndjson", ".jsonl": "application/jsonl",
	".yaml": "application/yaml", ".yml": "application/yaml", ".toml": "application/toml",
	".ini": "text/plain", ".cfg": "text/plain", ".conf": "text/plain", ".env": "text/plain",
	".rst": "text/x-rst", ".tex": "application/x-tex", ".ics": "text/calendar", ".vcf": "text/vcard",
	// Source code.
	".go": "text/x-go", ".rs": "text/x-rust", ".py": "text/x-python", ".java": "text/x-java",
	".js": "text/javascript", ".mjs": "text/javascript", ".cjs": "text/javascript",
	".ts": "text/x-typescript", ".tsx": "text/x-typescript", ".jsx": "text/javascript",
	".c": "text/x-c", ".h": "text/x-c", ".cc": "text/x-c++", ".cpp": "text/x-c++", ".hpp": "text/x-c++",
	".cs": "text/x-csharp", ".kt": "text/x-kotlin", ".swift": "text/x-swift", ".rb": "text/x-ruby",
	".php": "text/x-php", ".scala": "text/x-scala", ".lua": "text/x-lua", ".pl": "text/x-perl",
	".r": "text/x-r", ".sql": "application/sql", ".sh": "text/x-shellscript", ".bash": "text/x-shellscript",
	".zsh": "text/x-shellscript", ".ps1": "text/plain", ".proto": "text/plain", ".graphql": "application/graphql",
	".dockerfile": "text/plain", ".mod": "text/plain", ".sum": "text/plain",
	// Images.
	".png": "image/png", ".apng": "image/apng", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
	".webp": "image/webp", ".bmp": "image/bmp", ".ico": "image/vnd.microsoft.icon",
	".tif": "image/tiff", ".tiff": "image/tiff", ".avif": "image/avif", ".heic": "image/heic", ".heif": "image/heif",
	// Audio and video.
	".mp3": "audio/mpeg", ".ogg": "audio/ogg", ".oga": "audio/ogg", ".opus": "audio/ogg",
	".wav": "audio/wav", ".flac": "audio/flac", ".m4a": "audio/mp4", ".aac": "audio/aac",
	".mp4": "video/mp4", ".m4v": "video/mp4", ".webm": "video/webm", ".mkv": "video/x-matroska",
	".mov": "video/quicktime", ".avi": "video/x-msvideo", ".ogv": "video/ogg", ".3gp": "video/3gpp",
	".mid": "audio/midi", ".midi": "audio/midi", ".aif": "audio/aiff", ".aiff": "audio/aiff",
	// Documents, archives, binaries.
	".pdf": "application/pdf", ".zip": "application/zip", ".gz": "application/gzip", ".tgz": "application/gzip",
	".tar": "application/x-tar", ".bz2": "application/x-bzip2", ".xz": "application/x-xz", ".7z": "application/x-7z-compressed",
	".zst": "application/zstd", ".rar": "application/vnd.rar", ".jar": "application/java-archive", ".apk": "application/vnd.android.package-archive",
	".doc": "application/msword", ".xls": "application/vnd.ms-excel", ".ppt": "application/vnd.ms-powerpoint",
	".odt": "application/vnd.oasis.opendocument.text", ".ods": "application/vnd.oasis.opendocument.spreadsheet",
	".odp":  "application/vnd.oasis.opendocument.presentation",
	".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
	".epub": "application/epub+zip", ".wasm": "application/wasm",
	".woff": "font/woff", ".woff2": "font/woff2", ".ttf": "font/ttf", ".otf": "font/otf", ".eot": "application/vnd.ms-fontobject",
	".bin": Binary, ".exe": "application/vnd.microsoft.portable-executable", ".so": Binary,
	".sqlite": "application/vnd.sqlite3", ".db": Binary, ".parquet": "application/vnd.apache.parquet",
}

// ByExtension returns the type of a file name's extension (case-insensitive),
// or "" if the extension is unknown. name may be a path or a URI: a URI's
// query and fragment are not part of its name ("file:///a/b.go?rev=2" is
// Go). A name ending in '/' is a Directory. A few extension-less names
// (Makefile, Dockerfile, LICENSE, ...) are plain text.
func ByExtension(name string) string {
	name = withoutQuery(name)
	if strings.HasSuffix(name, "/") {
		return Directory
	}
	ext := strings.ToLower(path.Ext(name))
	if t, ok := byExt[ext]; ok {
		return t
	}
	switch strings.ToLower(path.Base(name)) {
	case "dockerfile", "containerfile", "makefile", "gnumakefile", "license", "licence", "copying", "notice",
		"readme", "authors", "changelog", "go.mod", "go.sum", "go.work", "cargo.lock", "gemfile", "rakefile",
		"procfile", "vagrantfile", ".gitignore", ".gitattributes", ".dockerignore", ".editorconfig":
		return "text/plain"
	}
	return ""
}

// withoutQuery cuts the query and fragment off a URI (a name starting with
// a scheme such as "file:"); other names are left alone, '?' and '#' being
// legal in file names.
func withoutQuery(name string) string {
	if !hasScheme(name) {
		return name
	}
	if i := strings.IndexAny(name, "?#"); i >= 0 {
		return name[:i]
	}
	return name
}

// hasScheme reports whether name starts with an RFC 3986 scheme and ':'.
// A one-letter scheme is taken for a Windows drive ("C:").
func hasScheme(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case c == ':':
			return i > 1
		default:
			return false
		}
	}
	return false
}

// Detect returns the MIME type of a resource named name (a file name, a
// path or a URI, see ByExtension) holding content, and whether that
// content is text: whether it travels as an MCP text rather than a blob.
//
// A name ending in '/' is a Directory (not text). Otherwise:
//
//   - A content signature (PNG, JPEG, PDF, ZIP, MP3, ...) wins over the
//     extension when they disagree ("a.jpg" holding PNG bytes is
//     image/png), but a compatible, finer name stands (a ".docx" holding
//     a ZIP is a docx; see Compatible). The one exception is a text (see
//     IsTextContent) with a textual extension: "notes.txt" starting with
//     "GIF89a" or "%PDF-" is text/plain, the letters a coincidence.
//   - Else the extension's type stands, unless the content contradicts
//     it: content that is not text for a textual type, content without
//     the signature of a type that has one (".png" holding "hello").
//   - Else net/http's sniffer names HTML and XML text, UTF-16 text (with a
//     charset=utf-16le or -be parameter; such a type travels as a blob),
//     and binary formats this package has no signature for (MIDI,
//     PostScript, ...); other text is PlainText (or the textual
//     extension's type), other content Binary.
//
// So the type Detect returns never contradicts the content: delivered as
// Detect says (text or blob), the content passes Validate for that type,
// but for RuleJSON and RuleXML, which Detect does not check.
//
// text is true only for text content given a type that is not binary
// (see IsBinary). content may be just the first bytes of a resource
// (net/http sniffs 512): a UTF-8 character cut short at its very end is
// not held against it. nil or empty content means "judge by the name":
// the extension's type, text if that type is textual; an unknown name
// with no content is Binary. Detect never fails, and every type it
// returns parses with mime.ParseMediaType.
func Detect(name string, content []byte) (mimeType string, text bool) {
	byName := ByExtension(name)
	if byName == Directory {
		return Directory, false
	}
	if len(content) == 0 {
		if byName == "" {
			return Binary, false
		}
		return byName, IsTextual(byName)
	}
	text = IsTextContent(trimCutRune(content))
	t := detect(byName, content, text)
	return t, text && !IsBinary(t)
}

// detect is Detect for non-empty content, text telling whether it is text.
func detect(byName string, content []byte, text bool) string {
	textualName := byName != "" && IsTextual(byName)
	if sig := sniffSignature(content); sig != "" && !(text && textualName) {
		if byName != "" && Compatible(byName, sig) {
			return byName // a docx is a zip; keep the finer name
		}
		return sig
	}
	if byName != "" && (text && textualName || !textualName && !checked(normalize(byName))) {
		return byName
	}
	sniffed := http.DetectContentType(content)
	if text {
		if strings.HasPrefix(sniffed, "text/") && !strings.HasPrefix(sniffed, "text/plain") {
			return sniffed // html, xml
		}
		if textualName {
			return byName
		}
		return PlainText
	}
	if strings.HasPrefix(sniffed, "text/plain; charset=utf-16") { // a byte order mark
		if textualName {
			return byName + sniffed[len("text/plain"):]
		}
		return sniffed
	}
	if sniffed == Binary || strings.HasPrefix(sniffed, "text/") || checked(normalize(sniffed)) {
		// Not text; or a format whose signature sniffSignature, stricter
		// than net/http (an icon of no images), did not find.
		return Binary
	}
	return sniffed // net/http knows a few formats this package does not
}

// trimCutRune returns b without the incomplete UTF-8 sequence it ends
// with, if any (the tail of a character cut off by a read of a prefix),
// unless nothing else is left.
func trimCutRune(b []byte) []byte {
	for i := len(b) - 1; i > 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// allowedControls has bit c set for the C0 controls a text may hold: tab,
// line feed, vertical tab, form feed, carriage return and escape (as in
// ANSI colour sequences).
const allowedControls = 1<<'\t' | 1<<'\n' | 1<<'\v' | 1<<'\f' | 1<<'\r' | 1<<0x1b

// IsTextContent reports whether b is text: valid UTF-8 holding no C0
// control character (U+0000 to U+001F) other than tab, line feed,
// vertical tab, form feed, carriage return and escape. Empty content is
// text. Detect uses it; Validate does not (a text need only be UTF-8).
func IsTextContent(b []byte) bool {
	return !hasBinaryControl(b) && utf8.Valid(b)
}

// hasBinaryControl reports whether b holds a C0 control character that
// allowedControls does not allow. It tests eight bytes at a time for a
// byte below 0x20, and looks closer only at the words that have one.
func hasBinaryControl(b []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:])
		if (x-0x20*ones)&^x&highs == 0 {
			continue // no byte below 0x20
		}
		for _, c := range b[i : i+8] {
			if c < 0x20 && allowedControls>>c&1 == 0 {
				return true
			}
		}
	}
	for _, c := range b[i:] {
		if c < 0x20 && allowedControls>>c&1 == 0 {
			return true
		}
	}
	return false
}

// IsTextual reports whether content of the media type t is text: text/*,
// JSON, XML, YAML, TOML, JavaScript and the like, including +json and
// +xml types (image/svg+xml among them). Parameters are ignored; an
// unparsable t is not textual.
func IsTextual(t string) bool {
	base, ok := parseBase(t)
	return ok && kindOf(base) == kindText
}

// IsBinary reports whether content of the media type t is binary: images
// (but SVG), audio, video, fonts, and application types such as PDF, ZIP,
// gzip, wasm and octet-stream. Types neither textual nor binary are
// unknown to this package.
func IsBinary(t string) bool {
	base, ok := parseBase(t)
	return ok && kindOf(base) == kindBinary
}

type kind int

const (
	kindUnknown kind = iota
	kindText
	kindBinary
)

var textualApplication = map[string]bool{
	"application/json": true, "application/xml": true, "application/yaml": true, "application/x-yaml": true,
	"application/toml": true, "application/javascript": true, "application/ecmascript": true,
	"application/x-javascript": true, "application/typescript": true, "application/sql": true,
	"application/graphql": true, "application/x-sh": true, "application/x-tex": true,
	"application/x-ndjson": true, "application/jsonl": true, "application/x-www-form-urlencoded": true,
	"application/csv": true, "application/xml-dtd": true, "application/json5": true, "application/x-toml": true,
	"application/x-httpd-php": true, "application/x-perl": true, "application/x-ruby": true, "application/x-python": true,
}

var binaryApplication = map[string]bool{
	"application/octet-stream": true, "application/pdf": true, "application/zip": true,
	"application/gzip": true, "application/x-gzip": true, "application/x-tar": true,
	"application/x-bzip2": true, "application/x-xz": true, "application/x-7z-compressed": true,
	"application/zstd": true, "application/java-archive": true, "application/wasm": true,
	"application/epub+zip": true, "application/vnd.sqlite3": true, "application/x-sqlite3": true,
	"application/vnd.microsoft.portable-executable": true, "application/vnd.apache.parquet": true,
	"application/msword": true, "application/vnd.ms-excel": true, "application/x-protobuf": true,
	"application/ogg": true, "application/vnd.rar": true, "application/x-rar-compressed": true,
	"application/vnd.ms-powerpoint": true, "application/vnd.ms-fontobject": true, "application/x-bzip": true,
	"application/x-executable": true, "application/x-msdownload": true, "application/x-shockwave-flash": true,
	"application/vnd.android.package-archive": true, "application/x-lz4": true, "application/x-lzip": true,
	"application/cbor": true, "application/msgpack": true, "application/x-msgpack": true,
	"application/x-compressed-tar": true, "application/x-gtar": true, "application/vnd.ms-xpsdocument": true,
	"application/oxps": true, "application/vnd.google-earth.kmz": true,
}

// kindOf classifies a lower-case media type without parameters. A type
// without a subtype ("text", which mime.ParseMediaType accepts) is unknown.
func kindOf(base string) kind {
	base = canonical(base) // application/x-zip-compressed is application/zip
	major, sub, _ := strings.Cut(base, "/")
	switch {
	case major == "" || sub == "":
		return kindUnknown
	case major == "text", strings.HasSuffix(sub, "+json"), strings.HasSuffix(sub, "+xml"), strings.HasSuffix(sub, "+yaml"):
		return kindText
	case major == "image", major == "audio", major == "video", major == "font",
		strings.HasSuffix(sub, "+zip"), strings.HasSuffix(sub, "+gzip"):
		return kindBinary
	case major == "application" && textualApplication[base]:
		return kindText
	case major == "application" && (binaryApplication[base] ||
		strings.HasPrefix(sub, "vnd.openxmlformats-officedocument.") || strings.HasPrefix(sub, "vnd.oasis.opendocument.")):
		return kindBinary
	case major == "inode":
		return kindBinary
	}
	return kindUnknown
}
