package cursor

import (
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
)

// KeysEnv is the environment variable that, by convention, holds a
// server's cursor keys, in the form ParseKeys reads: the name the
// package's examples pass to LoadCodec.
const KeysEnv = "MCPRES_CURSOR_KEYS"

// ParseKeys returns the cursor keys text lists, in order, for
// Options.Keys. Keys are separated by newlines, commas or spaces; each is
// standard base64 (as the base64 command writes it) or URL-safe base64,
// padded or not, and must decode to at least MinKeyLength bytes. Blank
// lines are ignored, and so is the rest of a line from a '#' that begins
// a key's place: comments.
//
// It returns an error, which names the bad key by its position and line
// but never shows key material, if a key is not base64 or too short, and
// if text holds no key at all.
func ParseKeys(text string) ([][]byte, error) {
	keys, err := parseKeys(text)
	if err != nil {
		return nil, fmt.Errorf("cursor: %w", err)
	}
	return keys, nil
}

// parseKeys is ParseKeys with errors that do not name the package.
func parseKeys(text string) ([][]byte, error) {
	var keys [][]byte
	for i, line := range strings.Split(text, "\n") {
		for _, field := range strings.FieldsFunc(line, isKeySeparator) {
			if strings.HasPrefix(field, "#") {
				break // a comment, to the end of the line
			}
			key, ok := decodeKey(field)
			switch {
			case !ok:
				return nil, fmt.Errorf("key %d (line %d) is not base64", len(keys)+1, i+1)
			case len(key) < MinKeyLength:
				return nil, fmt.Errorf("key %d (line %d) is %d bytes, fewer than %d", len(keys)+1, i+1, len(key), MinKeyLength)
			}
			keys = append(keys, key)
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("no keys")
	}
	return keys, nil
}

// isKeySeparator reports whether r separates keys: a comma or white
// space (a carriage return among them).
func isKeySeparator(r rune) bool {
	switch r {
	case ',', ' ', '\t', '\r', '\v', '\f':
		return true
	}
	return false
}

// keyEncodings are the encodings a key may be in. No string decodes
// under two of them to different bytes: the alphabets differ only where
// the other refuses, and a padded string is refused unpadded. They are
// strict: a last character with bits that encode nothing (a typo, or a
// key cut short) is refused.
var keyEncodings = [...]*base64.Encoding{
	base64.StdEncoding.Strict(), base64.RawStdEncoding.Strict(),
	base64.URLEncoding.Strict(), base64.RawURLEncoding.Strict(),
}

// decodeKey returns the bytes s encodes in one of keyEncodings.
func decodeKey(s string) ([]byte, bool) {
	for _, enc := range keyEncodings {
		if key, err := enc.DecodeString(s); err == nil {
			return key, true
		}
	}
	return nil, false
}

// LoadKeys returns the cursor keys of a server, for Options.Keys, and
// where they came from, for a start-up log line: from the file at path,
// if path is not "" (such as "file /etc/mcpres/cursor-keys (2 keys)");
// else from the environment variable envVar, if envVar is not "" and the
// variable is set and not empty (such as "$MCPRES_CURSOR_KEYS (1 key)");
// else none: nil, "" and no error, and the caller goes on with a random
// key (Options.Keys left empty), whose cursors end with the process.
// Either holds keys in the form ParseKeys reads. LoadKeys returns an
// error if the file cannot be read or its keys, or the variable's, are
// not valid: a server should then not start.
//
// Every replica of a server must hold the same keys, in the same order,
// for a cursor one issues to be good at the others, and across restarts.
// To rotate keys:
//
//  1. Generate a new key: head -c 32 /dev/urandom | base64
//  2. Put it first, and keep the old key after it: the new key encrypts
//     the cursors issued from then on, and the old one still decrypts
//     those issued before. Deploy to every replica.
//  3. Once the cursors issued with the old key no longer matter (after
//     the codec's TTL, or, without one, as long as a client may take to
//     walk a list's pages), drop it, and deploy again.
//
// A cursor made with a key since dropped is refused with ErrUnknownKey.
// Keep the file readable by the server alone: a key lets its holder read
// and forge cursors.
func LoadKeys(path, envVar string) ([][]byte, string, error) {
	var text, from string
	switch {
	case path != "":
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, "", fmt.Errorf("cursor: reading keys: %w", err)
		}
		text, from = string(b), "file "+path
	case envVar != "" && os.Getenv(envVar) != "":
		text, from = os.Getenv(envVar), "$"+envVar
	default:
		return nil, "", nil
	}
	keys, err := parseKeys(text)
	if err != nil {
		return nil, "", fmt.Errorf("cursor: keys in %s: %w", from, err)
	}
	plural := "s"
	if len(keys) == 1 {
		plural = ""
	}
	return keys, fmt.Sprintf("%s (%d key%s)", from, len(keys), plural), nil
}

// LoadCodec returns a Codec with the keys LoadKeys finds at path or in
// the environment variable envVar, and where they came from, as LoadKeys
// says it. If neither gives keys, from is "" and the Codec holds a random
// key: its cursors end with the process. A server whose clients may come
// back after a restart, or reach another replica, should then warn.
// opts, which may be nil, sets the rest (TTL, Now); LoadCodec does not
// change it.
//
// LoadCodec returns an error if opts.Keys is not empty (the keys come
// from path or envVar), or as LoadKeys or NewCodec does: a server should
// then not start.
func LoadCodec(path, envVar string, opts *Options) (codec *Codec, from string, err error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if len(o.Keys) > 0 {
		return nil, "", errors.New("cursor: LoadCodec reads the keys itself: leave Options.Keys empty")
	}
	o.Keys, from, err = LoadKeys(path, envVar)
	if err != nil {
		return nil, "", err
	}
	codec, err = NewCodec(&o)
	if err != nil {
		return nil, "", err
	}
	return codec, from, nil
}

// LogKeys logs on logger the one line a server writes at start-up about
// the keys of its list cursors, never the keys: where they came from
// (from, as LoadCodec returns it), at Info. If from is "" the codec has a
// random key: LogKeys says so at Warn if shared is true (its clients may
// come back after a restart, or reach another replica, as over HTTP),
// with a hint to give keys in where (such as "-cursor-keys FILE or
// $MCPRES_CURSOR_KEYS"), and at Info if not. A nil logger logs nothing.
func LogKeys(logger *slog.Logger, from string, shared bool, where string) {
	switch {
	case logger == nil:
	case from != "":
		logger.Info("list cursors use the keys given", "from", from)
	case shared:
		logger.Warn("no cursor keys given: list cursors use a random key, so they will not survive a restart or reach another replica",
			"hint", "give keys with "+where+": one base64 key a line; make one with: head -c 32 /dev/urandom | base64")
	default:
		logger.Info("no cursor keys given: list cursors use a random key, valid while this process runs")
	}
}
