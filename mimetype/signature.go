package mimetype

import (
	"encoding/binary"
	"mime"
	"strings"
)

// sniffLimit is how far into a content sniffSignature reads: the ISO base
// media file format (MP4, HEIF, AVIF) lists brands after its first bytes.
const sniffLimit = 64

// sniffSignature returns the type whose signature (magic bytes) b starts
// with, or "" if it knows none. It reads at most the first sniffLimit
// bytes.
func sniffSignature(b []byte) string {
	has := func(off int, sig string) bool {
		return len(b) >= off+len(sig) && string(b[off:off+len(sig)]) == sig
	}
	switch {
	case has(0, "\x89PNG\r\n\x1a\n"):
		return "image/png"
	case has(0, "\xff\xd8\xff"):
		return "image/jpeg"
	case has(0, "GIF87a"), has(0, "GIF89a"):
		return "image/gif"
	case has(0, "RIFF") && has(8, "WEBP"):
		return "image/webp"
	case (has(0, "RIFF") || has(0, "RF64")) && has(8, "WAVE"):
		return "audio/wav"
	case has(0, "RIFF") && has(8, "AVI "):
		return "video/x-msvideo"
	case has(0, "BM") && len(b) >= 14 && has(6, "\x00\x00\x00\x00"):
		return "image/bmp"
	case has(0, "\x00\x00\x01\x00") && len(b) >= 6 && b[4]|b[5] != 0:
		return "image/vnd.microsoft.icon"
	case has(0, "II*\x00"), has(0, "MM\x00*"), has(0, "II+\x00"), has(0, "MM\x00+"): // TIFF, BigTIFF
		return "image/tiff"
	case has(0, "%PDF-"):
		return "application/pdf"
	case has(0, "PK\x03\x04"), has(0, "PK\x05\x06"), has(0, "PK\x07\x08"): // a file, an empty archive, a spanned one
		return "application/zip"
	case has(0, "\x1f\x8b"):
		return "application/gzip"
	case has(0, "BZh"):
		return "application/x-bzip2"
	case has(0, "\xfd7zXZ\x00"):
		return "application/x-xz"
	case has(0, "7z\xbc\xaf\x27\x1c"):
		return "application/x-7z-compressed"
	case has(0, "\x28\xb5\x2f\xfd"):
		return "application/zstd"
	case has(0, "Rar!\x1a\x07"):
		return "application/vnd.rar"
	case has(0, "\x00asm"):
		return "application/wasm"
	case has(0, "SQLite format 3\x00"):
		return "application/vnd.sqlite3"
	case has(0, "ID3"), mpegFrame(b):
		return "audio/mpeg"
	case has(0, "OggS"):
		return "audio/ogg"
	case has(0, "fLaC"):
		return "audio/flac"
	case has(0, "\x1a\x45\xdf\xa3"):
		return "video/webm"
	case len(b) >= 12 && b[0] == 0 && b[1] == 0 && (has(4, "ftyp") || has(4, "styp")): // a box of less than 64 KiB
		return isoBrand(b)
	case len(b) >= 8 && b[0] == 0 && (has(4, "moov") || has(4, "mdat") || has(4, "wide") ||
		has(4, "free") || has(4, "skip") || has(4, "pnot")):
		return "video/quicktime" // QuickTime from before ftyp
	case has(0, "wOFF"):
		return "font/woff"
	case has(0, "wOF2"):
		return "font/woff2"
	case has(0, "OTTO"):
		return "font/otf"
	case has(0, "\x00\x01\x00\x00\x00"):
		return "font/ttf"
	}
	return ""
}

// mpegFrame reports whether b starts with the header of an MPEG audio
// frame of layer II or III (MP2, MP3): a sync word, a version that is not
// reserved, a bit rate and a sample rate that are not invalid. Layer I,
// long extinct, is left out, as its "\xff\xfe" is the byte order mark of
// UTF-16LE; and so are layer bits 00, AAC in ADTS, which has no type here.
func mpegFrame(b []byte) bool {
	if len(b) < 3 || b[0] != 0xff || b[1]&0xe0 != 0xe0 {
		return false
	}
	version, layer := b[1]>>3&3, b[1]>>1&3
	bitrate, rate := b[2]>>4, b[2]>>2&3
	return version != 1 && (layer == 1 || layer == 2) && bitrate != 15 && rate != 3
}

// isoBrand names an ISO base media file (b starts with an ftyp box, or
// the styp box of a segment) by its major brand and, for a generic HEIF,
// its compatible brands.
func isoBrand(b []byte) string {
	major := string(b[8:12])
	switch major {
	case "avif", "avis":
		return "image/avif"
	case "heic", "heix", "hevc", "hevx", "heim", "heis":
		return "image/heic"
	case "mif1", "msf1":
		end := min(int(binary.BigEndian.Uint32(b)), len(b), sniffLimit)
		for i := 16; i+4 <= end; i += 4 {
			switch string(b[i : i+4]) {
			case "avif", "avis":
				return "image/avif"
			case "heic", "heix", "hevc", "hevx":
				return "image/heic"
			}
		}
		return "image/heif"
	case "M4A ", "M4B ", "M4P ":
		return "audio/mp4"
	case "qt  ":
		return "video/quicktime"
	}
	if strings.HasPrefix(major, "3gp") || strings.HasPrefix(major, "3g2") {
		return "video/3gpp"
	}
	return "video/mp4"
}

// aliases maps types to the one name this package uses for them.
var aliases = map[string]string{
	"image/x-icon": "image/vnd.microsoft.icon", "image/jpg": "image/jpeg", "image/pjpeg": "image/jpeg",
	"image/x-png": "image/png", "image/x-ms-bmp": "image/bmp", "image/x-bmp": "image/bmp",
	"image/heif-sequence": "image/heif", "image/heic-sequence": "image/heic", "image/avif-sequence": "image/avif",
	"audio/x-wav": "audio/wav", "audio/wave": "audio/wav", "audio/vnd.wave": "audio/wav", "audio/x-flac": "audio/flac",
	"audio/mp3": "audio/mpeg", "audio/x-mpeg": "audio/mpeg", "audio/mpeg3": "audio/mpeg", "audio/x-mp3": "audio/mpeg",
	"application/ogg": "audio/ogg", "video/ogg": "audio/ogg", "audio/vorbis": "audio/ogg", "audio/opus": "audio/ogg",
	"video/x-matroska": "video/webm", "audio/x-matroska": "video/webm", "audio/webm": "video/webm",
	"audio/x-m4a": "audio/mp4", "audio/m4a": "audio/mp4", "video/x-m4v": "video/mp4",
	"video/3gpp2": "video/3gpp", "audio/3gpp": "video/3gpp", "audio/3gpp2": "video/3gpp",
	"application/x-gzip": "application/gzip", "application/x-zip-compressed": "application/zip",
	"application/x-pdf": "application/pdf", "application/x-sqlite3": "application/vnd.sqlite3",
	"application/x-rar-compressed": "application/vnd.rar", "application/x-rar": "application/vnd.rar",
	"application/x-bzip": "application/x-bzip2", "application/x-font-woff": "font/woff", "application/font-woff": "font/woff",
	"application/x-font-ttf": "font/ttf", "application/x-font-otf": "font/otf",
	"application/font-sfnt": "font/ttf", "font/sfnt": "font/ttf",
}

// signatureSamples holds one content for each signature sniffSignature
// knows; signed is built from it.
var signatureSamples = []string{
	"\x89PNG\r\n\x1a\n", "\xff\xd8\xff", "GIF89a", "RIFF\x00\x00\x00\x00WEBP",
	"RIFF\x00\x00\x00\x00WAVE", "RIFF\x00\x00\x00\x00AVI ", "BM\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00",
	"\x00\x00\x01\x00\x01\x00", "II*\x00", "%PDF-", "PK\x03\x04", "\x1f\x8b",
	"BZh", "\xfd7zXZ\x00", "7z\xbc\xaf\x27\x1c", "\x28\xb5\x2f\xfd", "Rar!\x1a\x07", "\x00asm",
	"SQLite format 3\x00", "ID3", "\xff\xfb\x90", "OggS", "fLaC", "\x1a\x45\xdf\xa3",
	"\x00\x00\x00\x10ftypavif", "\x00\x00\x00\x10ftypheic", "\x00\x00\x00\x10ftypmif1", "\x00\x00\x00\x10ftypM4A ",
	"\x00\x00\x00\x10ftypqt  ", "\x00\x00\x00\x10ftyp3gp5", "\x00\x00\x00\x10ftypisom",
	"wOFF", "wOF2", "OTTO", "\x00\x01\x00\x00\x00",
}

// signed holds the types sniffSignature can name: a blob declared as one
// of these (or an alias, see normalize) must carry a compatible signature.
var signed = func() map[string]bool {
	m := map[string]bool{}
	for _, b := range signatureSamples {
		m[sniffSignature([]byte(b))] = true
	}
	delete(m, "")
	return m
}()

// normalize returns the lower-case base type of t, without parameters,
// under the name this package uses for it; "" if t does not parse.
func normalize(t string) string {
	base, ok := parseBase(t)
	if !ok {
		return ""
	}
	return canonical(base)
}

// canonical returns the name this package uses for the lower-case base
// type base.
func canonical(base string) string {
	if a, ok := aliases[base]; ok {
		return a
	}
	return base
}

// parseBase returns t's lower-case base type, as mime.ParseMediaType reads
// it; ok is false if t does not parse or has no subtype.
func parseBase(t string) (base string, ok bool) {
	base, _, ok = parseType(t)
	return base, ok
}

// parseType returns t's lower-case base type and its charset parameter
// ("" if none), as mime.ParseMediaType reads them; ok is false if t does
// not parse or has no subtype. A plain "type/subtype", with at most a
// "; charset=token" parameter, is read without mime.ParseMediaType and
// its allocations.
func parseType(t string) (base, charset string, ok bool) {
	head, param, hasParam := strings.Cut(t, ";")
	if isPlainType(head) {
		if !hasParam {
			return head, "", true
		}
		name, value, _ := strings.Cut(strings.TrimLeft(param, " \t"), "=")
		if isCharset(name) && isToken(value) {
			return head, value, true
		}
	}
	base, params, err := mime.ParseMediaType(t)
	if err != nil || !strings.Contains(base, "/") {
		return "", "", false
	}
	return base, params["charset"], true
}

// isCharset reports whether name is "charset" in any ASCII case (not
// strings.EqualFold, which matches "charſet" too).
func isCharset(name string) bool {
	if len(name) != len("charset") {
		return false
	}
	for i := range len(name) {
		if name[i]|0x20 != "charset"[i] {
			return false
		}
	}
	return true
}

// isToken reports whether s is a non-empty RFC 2045 token.
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isTokenChar(s[i]) {
			return false
		}
	}
	return s != ""
}

// isTokenChar reports whether c may appear in an RFC 2045 token.
func isTokenChar(c byte) bool { return tokenChars[c] }

// tokenChars marks the bytes isTokenChar accepts.
var tokenChars = func() (t [256]bool) {
	for c := '!'; c < 0x7f; c++ {
		t[c] = !strings.ContainsRune(`()<>@,;:\"/[]?=`, c)
	}
	return t
}()

// isPlainType reports whether t is a lower-case "type/subtype" of token
// characters and nothing more: what mime.ParseMediaType would return as
// is, with no parameters.
func isPlainType(t string) bool {
	slash := -1
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case c == '/' && slash < 0:
			slash = i
		case 'A' <= c && c <= 'Z', !isTokenChar(c):
			return false
		}
	}
	return slash > 0 && slash < len(t)-1
}

// Compatible reports whether content declared as the type declared may
// carry the signature of the type detected: the same type (or an alias,
// such as image/jpg for image/jpeg or audio/x-wav for audio/wav), or a
// format built on it, as a docx, jar or epub is a zip, an m4a an MP4, an
// APNG a PNG. Parameters are ignored; a type that does not parse is
// compatible with nothing.
func Compatible(declared, detected string) bool {
	d, s := normalize(declared), normalize(detected)
	return d != "" && s != "" && compatible(d, s)
}

// compatible is Compatible for canonical base types.
func compatible(d, s string) bool {
	if d == s || builtOn(d) == s {
		return true
	}
	switch s {
	case "video/mp4", "audio/mp4", "video/quicktime", "video/3gpp":
		return d == "video/mp4" || d == "audio/mp4" || d == "video/quicktime" || d == "video/3gpp" || d == "audio/aac"
	case "image/heif":
		return d == "image/heic" || d == "image/avif"
	case "image/heic", "image/avif":
		return d == "image/heif" // a HEIC or an AVIF is a HEIF; but an AVIF is no HEIC
	}
	return false
}

// builtOn returns the type with a signature that a format d (a canonical
// base type) is built on, whose signature its content carries: zip for a
// docx, a jar or an epub (any +zip type); png for an apng; gzip for a
// .tar.gz (any +gzip type). It returns "" for any other type.
func builtOn(d string) string {
	switch {
	case d == "application/java-archive", d == "application/vnd.android.package-archive",
		d == "application/vnd.ms-xpsdocument", d == "application/oxps", d == "application/vnd.google-earth.kmz",
		strings.HasSuffix(d, "+zip"), strings.HasPrefix(d, "application/vnd.openxmlformats-officedocument."),
		strings.HasPrefix(d, "application/vnd.oasis.opendocument."):
		return "application/zip"
	case d == "image/apng":
		return "image/png"
	case d == "application/x-compressed-tar", d == "application/x-gtar", strings.HasSuffix(d, "+gzip"):
		return "application/gzip"
	}
	return ""
}

// checked reports whether a blob declared as d (a canonical base type)
// must carry a signature: d has one, or is built on a type that has.
// Types without a signature here (audio/aac, text formats,
// application/octet-stream) are not checked.
func checked(d string) bool { return signed[d] || builtOn(d) != "" }

// hasSignatureOf reports whether b carries the signature of a type
// compatible with declared (a canonical base type), and returns the type
// b's signature names ("" if none).
func hasSignatureOf(declared string, b []byte) (ok bool, found string) {
	found = sniffSignature(b)
	return found != "" && compatible(declared, found), found
}
