package cursor_test

import (
	"bytes"
	"encoding/base64"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpres/mcpres/cursor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Keys of 32, 16 and 24 bytes whose encodings hold each of the
// characters that differ between the standard and URL-safe alphabets.
var (
	key32 = bytes.Repeat([]byte{0xfb, 0xff, 0xbf}, 11)[:32] // "+/+/…" in standard base64
	key16 = []byte("sixteen bytes!!!")
	key24 = []byte("twenty-four bytes of key")
)

func TestParseKeys(t *testing.T) {
	std, url := base64.StdEncoding, base64.URLEncoding
	raw, rawURL := base64.RawStdEncoding, base64.RawURLEncoding
	for _, tc := range []struct {
		text string
		want [][]byte
	}{
		{std.EncodeToString(key32), [][]byte{key32}},
		{raw.EncodeToString(key32), [][]byte{key32}},
		{url.EncodeToString(key32), [][]byte{key32}},
		{rawURL.EncodeToString(key32), [][]byte{key32}},
		{std.EncodeToString(key32) + "\n", [][]byte{key32}},
		{std.EncodeToString(key32) + "\r\n" + std.EncodeToString(key16) + "\r\n", [][]byte{key32, key16}},
		{std.EncodeToString(key16) + "," + raw.EncodeToString(key24) + " " + rawURL.EncodeToString(key32), [][]byte{key16, key24, key32}},
		{" \t" + std.EncodeToString(key16) + " , ,\t" + std.EncodeToString(key24) + "  ", [][]byte{key16, key24}},
		{strings.Join([]string{
			"# cursor keys: the first encrypts",
			"",
			"   # the new key, from 2026-05-01",
			std.EncodeToString(key24) + "  # trailing comment, " + std.EncodeToString(key16),
			"#" + std.EncodeToString(key16) + " (dropped)",
			"",
			std.EncodeToString(key32) + " #old",
			"",
		}, "\n"), [][]byte{key24, key32}},
	} {
		got, err := cursor.ParseKeys(tc.text)
		require.NoError(t, err, "%q", tc.text)
		assert.Equal(t, tc.want, got, "%q", tc.text)
	}
	// What base64 writes.
	got, err := cursor.ParseKeys("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=\n")
	require.NoError(t, err)
	assert.Equal(t, [][]byte{[]byte("0123456789abcdef0123456789abcdef")}, got)
}

func TestParseKeysErrors(t *testing.T) {
	good := base64.StdEncoding.EncodeToString(key32)
	short := base64.StdEncoding.EncodeToString(key16[:15])
	for _, tc := range []struct {
		text, says string
	}{
		{"", "no keys"},
		{"\n\n  \n", "no keys"},
		{"# only a comment\n#" + good, "no keys"},
		{", ,", "no keys"},
		{short, "key 1 (line 1) is 15 bytes, fewer than 16"},
		{good + "\n\n" + short, "key 2 (line 3) is 15 bytes"},
		{good + "," + good + " " + short, "key 3 (line 1)"},
		{"not*base64", "key 1 (line 1) is not base64"},
		{good + "\n" + good[:len(good)-2] + "x=", "key 2 (line 2) is not base64"},
		{good[:10] + "-_" + good[12:], "is not base64"}, // alphabets mixed
		{good + "==", "is not base64"},
		{good[:len(good)-3], "is not base64"},        // cut short
		{good[:len(good)-2] + "9=", "is not base64"}, // bits that encode nothing: a typo
		{good + "#comment", "is not base64"},         // a comment begins a field
		{"\x00" + good, "is not base64"},
		{"ÿ" + good, "is not base64"},
	} {
		keys, err := cursor.ParseKeys(tc.text)
		if !assert.Error(t, err, "%q", tc.text) {
			continue
		}
		assert.Nil(t, keys)
		assert.ErrorContains(t, err, tc.says, "%q", tc.text)
		assert.True(t, strings.HasPrefix(err.Error(), "cursor: "), "%q", err)
		// Never any key material.
		for _, field := range strings.FieldsFunc(tc.text, func(r rune) bool { return strings.ContainsRune(", \t\r\n#", r) }) {
			if len(field) >= 4 {
				assert.NotContains(t, err.Error(), field[:4], "%q", tc.text)
			}
		}
	}
}

func TestLoadKeys(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "keys")
	require.NoError(t, os.WriteFile(file, []byte("# keys\n"+base64.StdEncoding.EncodeToString(key32)+"\n"+base64.StdEncoding.EncodeToString(key16)+"\n"), 0o600))
	const env = "MCPRES_TEST_CURSOR_KEYS"
	t.Setenv(env, base64.RawURLEncoding.EncodeToString(key24))

	// A file comes first.
	keys, from, err := cursor.LoadKeys(file, env)
	require.NoError(t, err)
	assert.Equal(t, [][]byte{key32, key16}, keys)
	assert.Equal(t, "file "+file+" (2 keys)", from)

	// Then the environment.
	keys, from, err = cursor.LoadKeys("", env)
	require.NoError(t, err)
	assert.Equal(t, [][]byte{key24}, keys)
	assert.Equal(t, "$"+env+" (1 key)", from)

	// Then nothing: the caller uses a random key.
	for _, envVar := range []string{"", env + "_UNSET", env + "_EMPTY"} {
		t.Setenv(env+"_EMPTY", "")
		keys, from, err = cursor.LoadKeys("", envVar)
		assert.NoError(t, err)
		assert.Nil(t, keys)
		assert.Empty(t, from)
	}

	// The keys made a codec with; the first encrypts.
	keys, _, err = cursor.LoadKeys(file, "")
	require.NoError(t, err)
	codec, err := cursor.NewCodec(&cursor.Options{Keys: keys})
	require.NoError(t, err)
	old, err := cursor.NewCodec(&cursor.Options{Keys: [][]byte{key16}})
	require.NoError(t, err)
	p := cursor.Position{Key: "k"}
	got, err := codec.Decode("m", "", old.Encode("m", "", p))
	require.NoError(t, err)
	assert.Equal(t, p, got)
	_, err = old.Decode("m", "", codec.Encode("m", "", p))
	assert.ErrorIs(t, err, cursor.ErrUnknownKey)
}

func TestLoadKeysErrors(t *testing.T) {
	dir := t.TempDir()
	const env = "MCPRES_TEST_CURSOR_KEYS"
	t.Setenv(env, base64.StdEncoding.EncodeToString(key32))

	// A file that cannot be read: no fallback to the environment.
	missing := filepath.Join(dir, "missing")
	keys, from, err := cursor.LoadKeys(missing, env)
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.ErrorContains(t, err, missing)
	assert.Nil(t, keys)
	assert.Empty(t, from)
	_, _, err = cursor.LoadKeys(dir, env) // a directory
	assert.Error(t, err)

	bad := filepath.Join(dir, "bad")
	secret := base64.StdEncoding.EncodeToString([]byte("fifteen bytes!!"))
	require.NoError(t, os.WriteFile(bad, []byte(base64.StdEncoding.EncodeToString(key24)+"\n"+secret+"\n"), 0o600))
	keys, from, err = cursor.LoadKeys(bad, env)
	assert.EqualError(t, err, "cursor: keys in file "+bad+": key 2 (line 2) is 15 bytes, fewer than 16")
	assert.Nil(t, keys)
	assert.Empty(t, from)

	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, []byte("# no keys yet\n"), 0o600))
	_, _, err = cursor.LoadKeys(empty, env)
	assert.EqualError(t, err, "cursor: keys in file "+empty+": no keys")

	t.Setenv(env, "a,"+secret)
	keys, from, err = cursor.LoadKeys("", env)
	assert.EqualError(t, err, "cursor: keys in $"+env+": key 1 (line 1) is not base64")
	assert.NotContains(t, err.Error(), secret)
	assert.Nil(t, keys)
	assert.Empty(t, from)
}

func TestKeysEnv(t *testing.T) {
	t.Setenv(cursor.KeysEnv, base64.StdEncoding.EncodeToString(key32)+","+base64.StdEncoding.EncodeToString(key16))
	keys, from, err := cursor.LoadKeys("", cursor.KeysEnv)
	require.NoError(t, err)
	assert.Equal(t, [][]byte{key32, key16}, keys)
	assert.Equal(t, "$MCPRES_CURSOR_KEYS (2 keys)", from)
}

// A codec LoadCodec makes at one start accepts the cursors of one made at
// the next from the same keys, from a file or the environment, the file
// first; with neither, each start has its own random key, and says so.
func TestLoadCodec(t *testing.T) {
	std := base64.StdEncoding
	file := filepath.Join(t.TempDir(), "keys")
	// The new key first, the old one after it: a rotation in progress.
	require.NoError(t, os.WriteFile(file, []byte("# newest first\n"+std.EncodeToString(key32)+"\n"+std.EncodeToString(key16)+"\n"), 0o600))
	const env = "MCPRES_TEST_CURSOR_KEYS"
	old, err := cursor.NewCodec(&cursor.Options{Keys: [][]byte{key16}})
	require.NoError(t, err)
	p := cursor.Position{Source: "s", Key: "file:///b.txt"}

	for _, tc := range []struct {
		name, path, env, from string
		resumes, oldResumes   bool
	}{
		{"file", file, "", "file " + file + " (2 keys)", true, true},
		{"file over env", file, std.EncodeToString(key24), "file " + file + " (2 keys)", true, true},
		{"env", "", std.EncodeToString(key24), "$" + env + " (1 key)", true, false},
		{"none", "", "", "", false, false},
	} {
		t.Setenv(env, tc.env)
		before, from, err := cursor.LoadCodec(tc.path, env, nil)
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.from, from, tc.name)
		after, _, err := cursor.LoadCodec(tc.path, env, nil) // a restart, or another replica
		require.NoError(t, err, tc.name)

		got, err := after.Decode("resources/list", "", before.Encode("resources/list", "", p))
		if tc.resumes {
			assert.NoError(t, err, "%s: a cursor across the restart", tc.name)
			assert.Equal(t, p, got, tc.name)
		} else {
			assert.ErrorIs(t, err, cursor.ErrUnknownKey, "%s: a cursor across the restart", tc.name)
		}
		_, err = after.Decode("resources/list", "", old.Encode("resources/list", "", p))
		assert.Equal(t, tc.oldResumes, err == nil, "%s: a cursor of the old key: %v", tc.name, err)
	}

	// opts sets the rest, and is left as it was.
	opts := &cursor.Options{TTL: time.Minute}
	codec, _, err := cursor.LoadCodec(file, "", opts)
	require.NoError(t, err)
	assert.Equal(t, &cursor.Options{TTL: time.Minute}, opts)
	noTTL, _, err := cursor.LoadCodec(file, "", nil)
	require.NoError(t, err)
	_, err = codec.Decode("resources/list", "", noTTL.Encode("resources/list", "", p))
	assert.ErrorIs(t, err, cursor.ErrInvalid, "a cursor without an expiry, to a codec with a TTL")
}

// Keys that cannot be had, or a bad option, give no codec and an error
// that says why, never the keys.
func TestLoadCodecErrors(t *testing.T) {
	dir := t.TempDir()
	const env = "MCPRES_TEST_CURSOR_KEYS"
	secret := base64.StdEncoding.EncodeToString([]byte("fifteen bytes!!"))
	short := filepath.Join(dir, "short")
	require.NoError(t, os.WriteFile(short, []byte(secret+"\n"), 0o600))
	good := base64.StdEncoding.EncodeToString(key32)

	for _, tc := range []struct {
		name, path, env string
		opts            *cursor.Options
		says            string
	}{
		{"missing file", filepath.Join(dir, "missing"), good, nil, "cursor: reading keys: open " + filepath.Join(dir, "missing")},
		{"short key in the file", short, good, nil, "cursor: keys in file " + short + ": key 1 (line 1) is 15 bytes, fewer than 16"},
		{"short key in the environment", "", secret, nil, "cursor: keys in $" + env + ": key 1 (line 1) is 15 bytes, fewer than 16"},
		{"keys in opts", "", good, &cursor.Options{Keys: [][]byte{key32}}, "cursor: LoadCodec reads the keys itself: leave Options.Keys empty"},
		{"negative TTL", "", good, &cursor.Options{TTL: -time.Second}, "cursor: negative TTL -1s"},
	} {
		t.Setenv(env, tc.env)
		codec, from, err := cursor.LoadCodec(tc.path, env, tc.opts)
		assert.ErrorContains(t, err, tc.says, tc.name)
		assert.Nil(t, codec, tc.name)
		assert.Empty(t, from, tc.name)
		if err != nil {
			assert.NotContains(t, err.Error(), secret[:8], tc.name)
		}
	}
}

// LogKeys writes one line, never a key: where the keys came from, or that
// there are none, as a warning only where cursors must outlive the
// process.
func TestLogKeys(t *testing.T) {
	for _, tc := range []struct {
		from   string
		shared bool
		want   string
	}{
		{"file /etc/keys (2 keys)", true, `level=INFO msg="list cursors use the keys given" from="file /etc/keys (2 keys)"`},
		{"$K (1 key)", false, `level=INFO msg="list cursors use the keys given" from="$K (1 key)"`},
		{"", true, `level=WARN msg="no cursor keys given: list cursors use a random key, so they will not survive a restart or reach another replica" hint="give keys with -k FILE or $K: one base64 key a line;`},
		{"", false, `level=INFO msg="no cursor keys given: list cursors use a random key, valid while this process runs"`},
	} {
		var out bytes.Buffer
		cursor.LogKeys(slog.New(slog.NewTextHandler(&out, nil)), tc.from, tc.shared, "-k FILE or $K")
		assert.Equal(t, 1, strings.Count(out.String(), "\n"), "one line: %s", out.String())
		assert.Contains(t, out.String(), tc.want)
	}
	cursor.LogKeys(nil, "", true, "-k FILE") // no logger: nothing, and no panic
}
