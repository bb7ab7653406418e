package cursor

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Fixed keys, so that cursors made with a given nonce (and the fuzz
// corpus) stay the same from run to run.
var (
	testKey  = []byte("0123456789abcdef0123456789abcdef")
	otherKey = []byte("fedcba9876543210fedcba9876543210")
	newKey   = []byte("a new key of at least 16 bytes..")
)

// testNonce is a fixed nonce for Codec.encode.
var testNonce = []byte("fixed nonce!")

// rawOf returns the bytes a cursor encodes.
func rawOf(t testing.TB, cursor string) []byte {
	t.Helper()
	raw, err := encoding.DecodeString(cursor)
	require.NoError(t, err)
	return raw
}

func newTestCodec(t testing.TB, opts *Options) *Codec {
	t.Helper()
	if opts == nil {
		opts = &Options{Keys: [][]byte{testKey}}
	}
	c, err := NewCodec(opts)
	require.NoError(t, err)
	return c
}

// A fakeClock is a settable Options.Now.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// testPositions covers empty, long, binary and UTF-8 sources and keys.
var testPositions = []Position{
	{},
	{Source: "", Key: "a"},
	{Source: "s", Key: ""},
	{Source: "static", Key: "file:///etc/hosts"},
	{Source: "users://{id}/profile", Key: "users://ada/profile"},
	{Source: "日本語", Key: "ключ/κλειδί/🔑"},
	{Source: "\x00\xff\xfe", Key: "\x00\x01\x02\x80\xc0\xff"},
	{Source: "\xc3\x28 invalid UTF-8", Key: "\xed\xa0\x80"},
	{Source: strings.Repeat("s", 300), Key: strings.Repeat("k", 300)},
	{Source: strings.Repeat("\x80", 127), Key: strings.Repeat("\x00", 128)},
	{Source: strings.Repeat("x", 1000), Key: strings.Repeat("界", 1500)},
}

func TestRoundTrip(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)}
	random, err := NewCodec(nil)
	require.NoError(t, err)
	codecs := map[string]*Codec{
		"fixed key":  newTestCodec(t, nil),
		"random key": random,
		"rotation":   newTestCodec(t, &Options{Keys: [][]byte{newKey, testKey}}),
		"ttl":        newTestCodec(t, &Options{Keys: [][]byte{testKey}, TTL: time.Hour, Now: clock.Now}),
	}
	for name, c := range codecs {
		t.Run(name, func(t *testing.T) {
			for _, method := range []string{"", "resources/list", "méthode"} {
				for _, scope := range []string{"", "user:ada", "\x00"} {
					for _, p := range testPositions {
						s := c.Encode(method, scope, p)
						assert.NotEmpty(t, s)
						assert.LessOrEqual(t, len(s), MaxLength)
						assert.Equal(t, -1, strings.IndexFunc(s, func(r rune) bool {
							return !('A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '-' || r == '_')
						}), "cursor %q is not unpadded base64url", s)
						got, err := c.Decode(method, scope, s)
						require.NoError(t, err, "position %+q", p)
						assert.Equal(t, p, got)
					}
				}
			}
		})
	}
}

// TestEncodeNonce checks that every cursor has a fresh random nonce, so
// that two cursors for one position differ, and that for a given nonce
// (and, without a TTL, at any time) a position has one cursor, which the
// fuzz targets rely on.
func TestEncodeNonce(t *testing.T) {
	c1, c2 := newTestCodec(t, nil), newTestCodec(t, nil)
	p := Position{Source: "s", Key: "k"}
	cursors, nonces := map[string]bool{}, map[string]bool{}
	for range 1000 {
		s := c1.Encode("m", "x", p)
		assert.False(t, cursors[s], "cursor %q repeats", s)
		cursors[s] = true
		raw := rawOf(t, s)
		assert.Equal(t, byte(version), raw[0])
		assert.Equal(t, c1.keys[0].id[:], raw[1:nonceAt])
		nonces[string(raw[nonceAt:headerSize])] = true
		got, err := c2.Decode("m", "x", s)
		require.NoError(t, err)
		assert.Equal(t, p, got)
	}
	assert.Len(t, nonces, 1000)

	n := testNonce
	s := c1.encode("m", "x", p, n)
	assert.Equal(t, n, rawOf(t, s)[nonceAt:headerSize], "the nonce follows the version and key id, in clear")
	assert.Equal(t, s, c2.encode("m", "x", p, n))
	assert.NotEqual(t, s, c1.encode("m", "y", p, n))
	assert.NotEqual(t, s, c1.encode("n", "x", p, n))
	// Length prefixes keep method and scope apart.
	assert.NotEqual(t, c1.encode("ab", "c", p, n), c1.encode("a", "bc", p, n))
}

func assertInvalid(t *testing.T, c *Codec, method, scope, cursor string) {
	t.Helper()
	p, err := c.Decode(method, scope, cursor)
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("Decode(%q, %q, %q) = %+q, %v; want ErrInvalid", method, scope, cursor, p, err)
		return
	}
	assert.Equal(t, Position{}, p)
	assert.True(t, strings.HasPrefix(err.Error(), ErrInvalid.Error()), "error %q", err)
}

func TestDecodeGarbage(t *testing.T) {
	c := newTestCodec(t, nil)
	valid := c.Encode("m", "", Position{Source: "s", Key: "k"})
	for _, s := range []string{
		"",
		"A",
		"AA",
		"AAAA",
		"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		"////////////////////////////////////////////////////////////////////",
		"not a cursor",
		"!!!!",
		"====",
		"a+b/",
		"eyJvZmZzZXQiOjEwMH0",  // {"offset":100}
		"eyJvZmZzZXQiOjEwMH0=", // padded
		"MTAw",                 // "100"
		valid + "=",            // padding
		valid + "==",           // padding
		" " + valid,            // space
		valid + " ",            // space
		"\x00" + valid,         // NUL
		valid + "\xff",         // not UTF-8
		strings.ToUpper(valid), // case-folded
		strings.Repeat("A", MaxLength+4),
		strings.Repeat(valid, 2),
		strings.Repeat(valid, MaxLength/len(valid)+1),
	} {
		assertInvalid(t, c, "m", "", s)
	}
}

func TestDecodeNonBase64(t *testing.T) {
	c := newTestCodec(t, nil)
	valid := c.Encode("m", "", Position{Source: "s", Key: "k"})
	// Standard-alphabet and padded forms of the same bytes.
	std := strings.NewReplacer("-", "+", "_", "/").Replace(valid)
	if std != valid {
		assertInvalid(t, c, "m", "", std)
	}
	for i := range len(valid) {
		for _, b := range []byte{'+', '/', '=', '.', '~', '%', '\t', '\r', '\n', 0, 0x80} {
			assertInvalid(t, c, "m", "", valid[:i]+string(b)+valid[i+1:])
		}
	}
}

func TestDecodeTruncated(t *testing.T) {
	c := newTestCodec(t, nil)
	for _, p := range testPositions[:6] {
		valid := c.Encode("m", "", p)
		for n := range len(valid) {
			assertInvalid(t, c, "m", "", valid[:n])   // prefix
			assertInvalid(t, c, "m", "", valid[n+1:]) // suffix
		}
	}
}

func TestDecodeBitFlips(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	for _, c := range []*Codec{
		newTestCodec(t, nil),
		newTestCodec(t, &Options{Keys: [][]byte{testKey}, TTL: time.Hour, Now: clock.Now}),
	} {
		for _, p := range testPositions[:9] {
			valid := c.Encode("m", "x", p)
			b := []byte(valid)
			for i := range b {
				for bit := range 8 {
					b[i] ^= 1 << bit
					assertInvalid(t, c, "m", "x", string(b))
					b[i] ^= 1 << bit
				}
			}
			// Every other character in every place, too (the last
			// four places of a long cursor): this covers the unused
			// low bits of the last character.
			for i := range b {
				if len(b) > 100 && i < len(b)-4 {
					continue
				}
				for _, r := range base64URLAlphabet {
					if byte(r) == valid[i] {
						continue
					}
					b[i] = byte(r)
					assertInvalid(t, c, "m", "x", string(b))
				}
				b[i] = valid[i]
			}
		}
	}
}

const base64URLAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

func TestDecodeAppended(t *testing.T) {
	c := newTestCodec(t, nil)
	for _, p := range testPositions[:6] {
		valid := c.Encode("m", "", p)
		for _, suffix := range []string{"A", "AA", "AAA", "AAAA", "_", "\n", "\r\n", "\r", "=", "==", "\x00", valid} {
			assertInvalid(t, c, "m", "", valid+suffix)
			assertInvalid(t, c, "m", "", suffix+valid)
		}
		// Line breaks anywhere are alterations too.
		for i := 1; i < len(valid); i++ {
			for _, nl := range []string{"\n", "\r", "\r\n"} {
				assertInvalid(t, c, "m", "", valid[:i]+nl+valid[i:])
			}
		}
	}
}

func TestDecodeWrongBinding(t *testing.T) {
	c := newTestCodec(t, nil)
	p := Position{Source: "s", Key: "k"}
	s := c.Encode("resources/list", "ada", p)
	_, err := c.Decode("resources/list", "ada", s)
	require.NoError(t, err)
	assertInvalid(t, c, "resources/templates/list", "ada", s)
	assertInvalid(t, c, "", "ada", s)
	assertInvalid(t, c, "resources/list", "bob", s)
	assertInvalid(t, c, "resources/list", "", s)
	assertInvalid(t, c, "resources/list", "Ada", s)
	// The boundary between method and scope is part of the binding.
	assertInvalid(t, c, "resources/lista", "da", s)
	assertInvalid(t, c, "resources/lis", "tada", s)

	s = c.Encode("m", "", p)
	assertInvalid(t, c, "m", "x", s)
	assertInvalid(t, c, "m ", "", s)

	s = c.Encode("ab", "c", p)
	assertInvalid(t, c, "a", "bc", s)
	assertInvalid(t, c, "abc", "", s)
	_, err = c.Decode("a", "bc", s)
	assert.ErrorContains(t, err, "not issued by this server for a")
	assert.ErrorIs(t, err, ErrOtherMethod)
}

func TestDecodeForeignKey(t *testing.T) {
	p := Position{Source: "s", Key: "k"}
	mine := newTestCodec(t, nil)
	theirs := newTestCodec(t, &Options{Keys: [][]byte{otherKey}})
	random1, random2 := newTestCodec(t, &Options{}), newTestCodec(t, &Options{})
	assertInvalid(t, mine, "m", "", theirs.Encode("m", "", p))
	assertInvalid(t, theirs, "m", "", mine.Encode("m", "", p))
	assertInvalid(t, random1, "m", "", random2.Encode("m", "", p))
	assertInvalid(t, random1, "m", "", mine.Encode("m", "", p))
	// A key that is a prefix of, or a byte off, the real one.
	almost := bytes.Clone(testKey)
	almost[len(almost)-1] ^= 1
	assertInvalid(t, newTestCodec(t, &Options{Keys: [][]byte{almost}}), "m", "", mine.Encode("m", "", p))
	assertInvalid(t, newTestCodec(t, &Options{Keys: [][]byte{testKey[:16]}}), "m", "", mine.Encode("m", "", p))
	// Each fixed key has its own key id: the reason is the unknown key.
	_, err := mine.Decode("m", "", theirs.Encode("m", "", p))
	assert.ErrorIs(t, err, ErrUnknownKey)
	_, err = newTestCodec(t, &Options{Keys: [][]byte{almost}}).Decode("m", "", mine.Encode("m", "", p))
	assert.ErrorIs(t, err, ErrUnknownKey)
}

// Two keys whose key ids are the same (72a809a2), found by a search.
var (
	twinKey1 = []byte("colliding key 0000049403")
	twinKey2 = []byte("colliding key 0000103101")
)

// TestSharedKeyID checks that keys which share a key id by chance are
// each tried in turn, and that a cursor under one of them is refused by a
// codec holding only the other: as tampered, since the id is known.
func TestSharedKeyID(t *testing.T) {
	p := Position{Source: "s", Key: "k"}
	one := newTestCodec(t, &Options{Keys: [][]byte{twinKey1}})
	two := newTestCodec(t, &Options{Keys: [][]byte{twinKey2}})
	require.Equal(t, one.keys[0].id, two.keys[0].id)
	both := newTestCodec(t, &Options{Keys: [][]byte{twinKey1, twinKey2}})
	for _, c := range []*Codec{one, two, both} {
		got, err := both.Decode("m", "x", c.Encode("m", "x", p))
		require.NoError(t, err)
		assert.Equal(t, p, got)
	}
	_, err := one.Decode("m", "x", two.Encode("m", "x", p))
	assert.ErrorIs(t, err, ErrTampered)
	_, err = both.Decode("m", "y", two.Encode("m", "x", p))
	assert.ErrorIs(t, err, ErrOtherScope)
}

// TestKeyID checks that a cursor names the key that made it by an id that
// is fixed for the key, differs between keys, and shows none of the key.
func TestKeyID(t *testing.T) {
	p := Position{Source: "s", Key: "k"}
	ids := map[[idSize]byte]string{}
	for _, key := range [][]byte{testKey, otherKey, newKey, testKey[:16], []byte("0123456789abcdef0123456789abcdeg")} {
		c := newTestCodec(t, &Options{Keys: [][]byte{key}})
		id := c.keys[0].id
		assert.Equal(t, id, newTestCodec(t, &Options{Keys: [][]byte{key}}).keys[0].id, "fixed")
		assert.NotContains(t, ids, id, "key %q", key)
		ids[id] = string(key)
		assert.False(t, bytes.Contains(key, id[:]), "the id is not part of the key")
		s := c.Encode("m", "", p)
		assert.Equal(t, id[:], rawOf(t, s)[1:nonceAt])
		assert.Empty(t, leaks(t, s, string(key)))
	}
	// A rotated codec encrypts with, and names, its first key.
	rotated := newTestCodec(t, &Options{Keys: [][]byte{newKey, testKey}})
	assert.Equal(t, rotated.keys[0].id[:], rawOf(t, rotated.Encode("m", "", p))[1:nonceAt])
	assert.Equal(t, newTestCodec(t, &Options{Keys: [][]byte{newKey}}).keys[0].id, rotated.keys[0].id)
}

// TestDecodeReasons checks that each reason for refusing a cursor is told
// apart, matched by errors.Is with its own error, with ErrInvalid, and
// with none of the others.
func TestDecodeReasons(t *testing.T) {
	const method, scope = "resources/list", "user:ada"
	p := Position{Source: "s", Key: "k"}
	issued := time.Unix(1_800_000_000, 0)
	clock := &fakeClock{now: issued}
	opts := func(keys ...[]byte) *Options { return &Options{Keys: keys, TTL: time.Minute, Now: clock.Now} }
	c := newTestCodec(t, opts(newKey, testKey))
	second := newTestCodec(t, opts(testKey))
	foreign := newTestCodec(t, opts(otherKey))
	random := newTestCodec(t, opts())
	noTTL := newTestCodec(t, &Options{Keys: [][]byte{testKey}, Now: clock.Now})
	valid := c.Encode(method, scope, p)
	long := rawOf(t, c.Encode(method, scope, Position{Key: strings.Repeat("k", 100)}))
	shortened := encoding.EncodeToString(slices.Delete(long, headerSize, headerSize+padTo))
	flip := func(s string, i int) string {
		raw := rawOf(t, s)
		raw[(i+len(raw))%len(raw)] ^= 1
		return encoding.EncodeToString(raw)
	}
	reasons := []error{ErrTampered, ErrUnknownKey, ErrOtherMethod, ErrOtherScope, ErrExpired}
	type call struct{ method, scope string }
	mine := call{method, scope}
	for _, tc := range []struct {
		name   string
		call   call
		cursor string
		later  time.Duration // after issue
		want   error         // nil: ErrInvalid and no other
		says   string
	}{
		{"tampered: a ciphertext bit", mine, flip(valid, headerSize+3), 0, ErrTampered, "tampered with"},
		{"tampered: the tag", mine, flip(valid, -1), 0, ErrTampered, ""},
		{"tampered: the nonce", mine, flip(valid, nonceAt), 0, ErrTampered, ""},
		{"tampered: the version", mine, flip(valid, 0), 0, nil, "unknown version 2"},
		{"tampered: a bucket removed", mine, shortened, 0, ErrTampered, ""},
		{"tampered: under the second key", mine, flip(second.Encode(method, scope, p), headerSize), 0, ErrTampered, ""},
		{"unknown key", mine, foreign.Encode(method, scope, p), 0, ErrUnknownKey, "made with an unknown key"},
		{"unknown key: a random one", mine, random.Encode(method, scope, p), 0, ErrUnknownKey, ""},
		{"unknown key: the id altered", mine, flip(valid, 1), 0, ErrUnknownKey, ""},
		{"other method", call{"resources/templates/list", scope}, valid, 0, ErrOtherMethod,
			"issued for another method: not issued by this server for resources/templates/list"},
		{"other method: the same bytes", call{"resources/lis", "t" + scope}, valid, 0, ErrOtherMethod, ""},
		{"other method and scope", call{"", ""}, valid, 0, ErrOtherMethod, ""},
		{"other method, and expired", call{"resources/templates/list", scope}, valid, time.Hour, ErrOtherMethod, ""},
		{"other scope", call{method, "user:bob"}, valid, 0, ErrOtherScope, "issued for another scope"},
		{"other scope: none", call{method, ""}, valid, 0, ErrOtherScope, ""},
		{"other scope, and expired", call{method, "user:bob"}, valid, time.Hour, ErrOtherScope, ""},
		{"expired", mine, valid, time.Minute, ErrExpired, "expired at 2027-01-15T08:01:00Z"},
		{"expired long ago", mine, valid, 1000 * time.Hour, ErrExpired, ""},
		{"unknown version 2", mine, encodeV2(testKey, method, scope, p), 0, nil, "unknown version 2"},
		{"unknown version 1", mine, newSignedCodec(t, [][]byte{testKey}, time.Minute, clock.Now).Encode(method, scope, p), 0, nil, "unknown version 1"},
		{"no expiry", mine, noTTL.Encode(method, scope, p), 0, nil, "no expiry"},
		{"not base64url", mine, valid[:10] + "+" + valid[11:], 0, nil, "not base64url"},
		{"truncated", mine, encoding.EncodeToString(rawOf(t, valid)[:overhead]), 0, nil, "truncated"},
		{"empty", mine, "", 0, nil, "empty"},
		{"too long", mine, strings.Repeat("A", MaxLength+1), 0, nil, "too long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock.Set(issued.Add(tc.later))
			defer clock.Set(issued)
			got, err := c.Decode(tc.call.method, tc.call.scope, tc.cursor)
			require.Error(t, err)
			assert.Equal(t, Position{}, got)
			assert.ErrorIs(t, err, ErrInvalid)
			for _, r := range reasons {
				assert.Equal(t, r == tc.want, errors.Is(err, r), "errors.Is(%q, %q)", err, r)
			}
			assert.True(t, strings.HasPrefix(err.Error(), ErrInvalid.Error()+": "), "error %q", err)
			if tc.says != "" {
				assert.ErrorContains(t, err, tc.says)
			}
		})
	}
	// The cursor itself was good all along.
	got, err := c.Decode(method, scope, valid)
	require.NoError(t, err)
	assert.Equal(t, p, got)
}

func TestRotation(t *testing.T) {
	p := Position{Source: "s", Key: "k"}
	old := newTestCodec(t, &Options{Keys: [][]byte{testKey}})
	both := newTestCodec(t, &Options{Keys: [][]byte{newKey, testKey}})
	onlyNew := newTestCodec(t, &Options{Keys: [][]byte{newKey}})

	// A cursor made with key A (testKey) decodes under Keys{B, A}, not
	// under Keys{B}.
	fromOld := old.Encode("m", "", p)
	got, err := both.Decode("m", "", fromOld)
	require.NoError(t, err)
	assert.Equal(t, p, got)
	assertInvalid(t, onlyNew, "m", "", fromOld)
	_, err = onlyNew.Decode("m", "", fromOld)
	assert.ErrorContains(t, err, "not issued by this server")
	assert.ErrorIs(t, err, ErrUnknownKey, "the old key was dropped")

	// [new, old] encrypts with new: onlyNew accepts it, old does not.
	fromBoth := both.Encode("m", "", p)
	assert.NotEqual(t, fromOld, fromBoth)
	got, err = onlyNew.Decode("m", "", fromBoth)
	require.NoError(t, err)
	assert.Equal(t, p, got)
	assertInvalid(t, old, "m", "", fromBoth)

	// Binding still applies under any key.
	assertInvalid(t, both, "other", "", fromOld)
}

func TestNewCodecCopiesKeys(t *testing.T) {
	key := bytes.Clone(testKey)
	c := newTestCodec(t, &Options{Keys: [][]byte{key}})
	p := Position{Source: "s", Key: "k"}
	s := c.Encode("m", "", p)
	key[0] ^= 0xff // the caller reuses its buffer
	got, err := c.Decode("m", "", s)
	require.NoError(t, err)
	assert.Equal(t, p, got)
	// c still encrypts with the key as it was.
	got, err = newTestCodec(t, nil).Decode("m", "", c.Encode("m", "", p))
	require.NoError(t, err)
	assert.Equal(t, p, got)
	assert.Equal(t, newTestCodec(t, nil).encode("m", "", p, testNonce), c.encode("m", "", p, testNonce))
}

func TestExpiry(t *testing.T) {
	const ttl = 10 * time.Second
	p := Position{Source: "s", Key: "k"}
	for _, start := range []time.Time{
		time.Unix(1_800_000_000, 0),
		time.Unix(1_800_000_000, 500_000_000),            // mid-second
		time.Unix(1_800_000_000, 999_999_999),            // just before a second
		time.Unix(1_800_000_000, 1),                      // just after a second
		time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC), // before the epoch
		time.Unix(0, 0),
	} {
		t.Run(start.Format(time.RFC3339Nano), func(t *testing.T) {
			clock := &fakeClock{now: start}
			c := newTestCodec(t, &Options{Keys: [][]byte{testKey}, TTL: ttl, Now: clock.Now})
			s := c.Encode("m", "", p)
			for _, d := range []time.Duration{0, time.Nanosecond, time.Second, ttl / 2, ttl - time.Millisecond, ttl - time.Nanosecond} {
				clock.Set(start.Add(d))
				got, err := c.Decode("m", "", s)
				if assert.NoError(t, err, "%v after issue", d) {
					assert.Equal(t, p, got)
				}
			}
			// A cursor from the future (a clock gone back) is still good
			// until its expiry.
			clock.Set(start.Add(-time.Hour))
			_, err := c.Decode("m", "", s)
			assert.NoError(t, err)
			for _, d := range []time.Duration{ttl + time.Millisecond, ttl + time.Second, 24 * time.Hour, 100 * 365 * 24 * time.Hour} {
				clock.Set(start.Add(d))
				assertInvalid(t, c, "m", "", s)
				_, err := c.Decode("m", "", s)
				assert.ErrorIs(t, err, ErrExpired, "%v after issue", d)
			}
			// The other codecs sharing the key and clock agree.
			c2 := newTestCodec(t, &Options{Keys: [][]byte{testKey}, TTL: time.Minute, Now: clock.Now})
			assertInvalid(t, c2, "m", "", s)
		})
	}
}

// TestExpiryShortTTL checks a TTL under the clock's resolution of a
// second does not make cursors expire at once or live a second.
func TestExpiryShortTTL(t *testing.T) {
	const ttl = 300 * time.Millisecond
	start := time.Unix(1_800_000_000, 900_000_000)
	clock := &fakeClock{now: start}
	c := newTestCodec(t, &Options{Keys: [][]byte{testKey}, TTL: ttl, Now: clock.Now})
	s := c.Encode("m", "", Position{Key: "k"})
	clock.Set(start.Add(ttl - time.Nanosecond))
	_, err := c.Decode("m", "", s)
	assert.NoError(t, err)
	clock.Set(start.Add(ttl + time.Millisecond))
	assertInvalid(t, c, "m", "", s)
}

// TestExpiryLongTTL checks a TTL of centuries (or the longest there is)
// means a cursor that does not expire in practice, not one expired at once.
func TestExpiryLongTTL(t *testing.T) {
	for _, ttl := range []time.Duration{100 * 365 * 24 * time.Hour, 1<<63 - 1} {
		clock := &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		c := newTestCodec(t, &Options{Keys: [][]byte{testKey}, TTL: ttl, Now: clock.Now})
		s := c.Encode("m", "", Position{Key: "k"})
		clock.Set(clock.Now().Add(50 * 365 * 24 * time.Hour))
		_, err := c.Decode("m", "", s)
		assert.NoError(t, err, "TTL %v", ttl)
	}
}

// TestTTLRequiresExpiry checks that a codec with a TTL refuses a cursor
// issued, with the same key, by one without: it would never expire.
func TestTTLRequiresExpiry(t *testing.T) {
	p := Position{Key: "k"}
	forever := newTestCodec(t, nil)
	expiring := newTestCodec(t, &Options{Keys: [][]byte{testKey}, TTL: time.Hour})
	assertInvalid(t, expiring, "m", "", forever.Encode("m", "", p))
	// The other way round, the expiry is still honoured.
	got, err := forever.Decode("m", "", expiring.Encode("m", "", p))
	require.NoError(t, err)
	assert.Equal(t, p, got)
}

func TestNewCodecErrors(t *testing.T) {
	for _, opts := range []*Options{
		{Keys: [][]byte{nil}},
		{Keys: [][]byte{{}}},
		{Keys: [][]byte{testKey[:MinKeyLength-1]}},
		{Keys: [][]byte{testKey, testKey[:1]}},
		{Keys: [][]byte{testKey, nil}},
		{TTL: -time.Nanosecond},
		{Keys: [][]byte{testKey}, TTL: -time.Hour},
	} {
		c, err := NewCodec(opts)
		assert.Error(t, err, "%+v", opts)
		assert.Nil(t, c)
	}
	for _, opts := range []*Options{
		nil,
		{},
		{Keys: [][]byte{}},
		{Keys: [][]byte{testKey[:MinKeyLength]}},
		{TTL: 0},
		{TTL: time.Nanosecond},
	} {
		c, err := NewCodec(opts)
		assert.NoError(t, err, "%+v", opts)
		assert.NotNil(t, c)
	}
}

func TestCodecConcurrent(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	c := newTestCodec(t, &Options{Keys: [][]byte{newKey, otherKey, testKey}, TTL: time.Hour, Now: clock.Now})
	old := newTestCodec(t, &Options{Keys: [][]byte{testKey}})
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 300 {
				p := Position{Source: fmt.Sprint("s", g), Key: fmt.Sprint("k", i)}
				scope := fmt.Sprint(i % 3)
				s := c.Encode("m", scope, p)
				got, err := c.Decode("m", scope, s)
				if !assert.NoError(t, err) || !assert.Equal(t, p, got) {
					return
				}
				_, err = c.Decode("m", scope+"x", s)
				assert.ErrorIs(t, err, ErrInvalid)
				_, err = c.Decode("m", scope, old.Encode("m", scope, p))
				assert.ErrorIs(t, err, ErrInvalid) // no expiry
				if g == 0 && i%50 == 0 {
					clock.Set(clock.Now().Add(time.Second))
				}
			}
		})
	}
	wg.Wait()
}

// TestMaxLength checks the longest cursor Decode takes is MaxLength, and
// that positions up to the documented size fit.
func TestMaxLength(t *testing.T) {
	c := newTestCodec(t, nil)
	// MaxLength base64 characters are 6,144 bytes: 33 of overhead (version,
	// key id, nonce and tag) leave 6,111 for the plaintext, which is a
	// multiple of 32: 6,080. Of those, 1 is flags, 20 the binding and
	// method tag, 1 the source length, 2 the key length: the longest key
	// is 6,056 bytes, in a cursor of 8,151 characters, as close to
	// MaxLength as a cursor gets (the next bucket is 8,194).
	fits := Position{Key: strings.Repeat("k", 6056)}
	s := c.Encode("m", "", fits)
	require.Len(t, s, 8151)
	got, err := c.Decode("m", "", s)
	require.NoError(t, err)
	assert.Equal(t, fits, got)
	// A cursor of MaxLength characters is looked at (and is too long for
	// its bucket here).
	_, err = c.Decode("m", "", s+strings.Repeat("A", MaxLength-len(s)))
	assert.ErrorIs(t, err, ErrInvalid)
	assert.ErrorContains(t, err, "lengthened")
	assert.NotContains(t, err.Error(), "too long")

	tooLong := Position{Key: fits.Key + "k"}
	s = c.Encode("m", "", tooLong)
	assert.Greater(t, len(s), MaxLength)
	assertInvalid(t, c, "m", "", s)
	_, err = c.Decode("m", "", s)
	assert.ErrorContains(t, err, "too long")

	// The bounds Encode documents, with a TTL (the longest there is, for
	// the longest expiry).
	for _, ttl := range []time.Duration{time.Hour, 1<<63 - 1} {
		c = newTestCodec(t, &Options{Keys: [][]byte{testKey}, TTL: ttl})
		for _, p := range []Position{
			{Source: strings.Repeat("s", 3000), Key: strings.Repeat("k", 3000)},
			{Source: strings.Repeat("s", 200), Key: strings.Repeat("k", 6045-200)},
		} {
			s := c.Encode("m", "", p)
			assert.LessOrEqual(t, len(s), MaxLength)
			got, err = c.Decode("m", "", s)
			require.NoError(t, err)
			assert.Equal(t, p, got)
		}
	}
}

// TestVersion checks that a cursor of any format version but 3, among
// them the signed cursors of version 1 and the encrypted ones of version 2
// made with the same key, is refused before anything else, saying so.
func TestVersion(t *testing.T) {
	c := newTestCodec(t, nil)
	p := Position{Source: "s", Key: "k"}
	s := c.Encode("m", "", p)
	assert.Equal(t, byte(3), rawOf(t, s)[0])

	v1 := newSignedCodec(t, [][]byte{testKey}, 0, nil).Encode("m", "", p)
	assertInvalid(t, c, "m", "", v1)
	_, err := c.Decode("m", "", v1)
	assert.ErrorContains(t, err, "unknown version 1")

	v2 := encodeV2(testKey, "m", "", p)
	assertInvalid(t, c, "m", "", v2)
	_, err = c.Decode("m", "", v2)
	assert.ErrorContains(t, err, "unknown version 2")
	for _, r := range []error{ErrTampered, ErrUnknownKey, ErrOtherMethod, ErrOtherScope, ErrExpired} {
		assert.NotErrorIs(t, err, r)
	}

	raw := rawOf(t, s)
	for _, v := range []byte{0, 1, 2, 4, 0x80, 0xff} {
		raw[0] = v
		other := encoding.EncodeToString(raw)
		assertInvalid(t, c, "m", "", other)
		_, err := c.Decode("m", "", other)
		assert.ErrorContains(t, err, fmt.Sprintf("unknown version %d", v))
	}
}

// leaks returns the 4-byte (or longer) substrings of secrets that show in
// cursor, as bytes (base64-decoded) or as text.
func leaks(t testing.TB, cursor string, secrets ...string) []string {
	t.Helper()
	raw := rawOf(t, cursor)
	var found []string
	for _, secret := range secrets {
		for i := 0; i+4 <= len(secret); i++ {
			if sub := secret[i : i+4]; bytes.Contains(raw, []byte(sub)) || strings.Contains(cursor, sub) {
				found = append(found, sub)
			}
		}
	}
	return found
}

// TestRevealsNothing checks that neither a cursor's bytes nor its text
// show any part of the position it records, that two cursors for one
// position differ, and that keys of length 10 and 30 make cursors of one
// length.
func TestRevealsNothing(t *testing.T) {
	p := Position{Source: "tenant-b/catalog", Key: "product/personas"}
	clock := func() time.Time { return time.Unix(1_800_000_000, 0) }
	const method = "resources/list"

	// The signed codec's cursors do show them: the check works.
	signed := newSignedCodec(t, [][]byte{testKey}, 0, nil).Encode(method, "user:ada", p)
	assert.Contains(t, string(rawOf(t, signed)), p.Source+p.Key)
	assert.NotEmpty(t, leaks(t, signed, p.Source, p.Key))

	for name, c := range map[string]*Codec{
		"plain":    newTestCodec(t, nil),
		"ttl":      newTestCodec(t, &Options{Keys: [][]byte{testKey}, TTL: time.Hour, Now: clock}),
		"rotation": newTestCodec(t, &Options{Keys: [][]byte{newKey, testKey}}),
	} {
		t.Run(name, func(t *testing.T) {
			for _, scope := range []string{"", "user:ada"} {
				// Nonces from a fixed sequence, so that the test is
				// deterministic: with random ones, some 4 bytes of
				// ciphertext would match by chance about once in a
				// million cursors.
				r := rand.New(rand.NewPCG(2026, 5))
				nonce := make([]byte, nonceSize)
				for range 500 {
					for i := range nonce {
						nonce[i] = byte(r.Uint32())
					}
					s := c.encode(method, scope, p, nonce)
					assert.Empty(t, leaks(t, s, p.Source, p.Key), "cursor %q", s)
				}

				// Encode's own cursors: random nonces.
				a, b := c.Encode(method, scope, p), c.Encode(method, scope, p)
				assert.NotEqual(t, a, b)
				assert.NotEqual(t, rawOf(t, a)[nonceAt:headerSize], rawOf(t, b)[nonceAt:headerSize])
				for _, s := range []string{a, b} {
					raw := string(rawOf(t, s))
					assert.NotContains(t, raw, p.Key)
					assert.NotContains(t, raw, p.Source)
					got, err := c.Decode(method, scope, s)
					require.NoError(t, err)
					assert.Equal(t, p, got)
				}

				// Keys of length 10 and 30 (and all between) share a
				// bucket, with a TTL or without.
				short := c.Encode(method, scope, Position{Source: "db", Key: strings.Repeat("k", 10)})
				for n := 11; n <= 30; n++ {
					long := c.Encode(method, scope, Position{Source: "db", Key: strings.Repeat("k", n)})
					assert.Len(t, long, len(short), "key of %d bytes", n)
				}
			}
		})
	}
}

// TestLengthBuckets checks the padding rule: a cursor is overhead bytes
// more than its plaintext, which is the fewest multiple of padTo bytes
// that hold the flags, expiry, lengths, source and key. The length of a
// cursor shows that of its position in buckets of padTo bytes, and not
// how it splits between source and key.
func TestLengthBuckets(t *testing.T) {
	clock := func() time.Time { return time.Unix(1_800_000_000, 0) }
	for _, ttl := range []time.Duration{0, time.Hour} {
		c := newTestCodec(t, &Options{Keys: [][]byte{testKey}, TTL: ttl, Now: clock})
		header := 1 + bindingSize + methodTagSize // flags, binding, method tag
		if ttl > 0 {
			header += len(binary.AppendVarint(nil, expiry(clock(), ttl)))
		}
		for n := range 300 {
			p := Position{Source: strings.Repeat("s", n/3), Key: strings.Repeat("k", n-n/3)}
			s := c.Encode("m", "", p)
			content := header + uvarintLen(len(p.Source)) + uvarintLen(len(p.Key)) + n
			want := overhead + (content+padTo-1)/padTo*padTo
			assert.Len(t, rawOf(t, s), want, "TTL %v, %d bytes", ttl, n)
			assert.Len(t, s, encoding.EncodedLen(want))
			swapped := c.Encode("m", "", Position{Source: p.Key, Key: p.Source})
			assert.Len(t, swapped, len(s))
		}
		// The documented sizes: 87, 130, 172 and 215 characters up to
		// 9, 41, 73 and 105 bytes (3, 35, 67 and 99 with a TTL), and in
		// general ⌈(132+128k)/3⌉ characters up to 32k−23 bytes (32k−29).
		chars := func(k int) int { return (132 + 128*k + 2) / 3 }
		assert.Equal(t, []int{87, 130, 172, 215}, []int{chars(1), chars(2), chars(3), chars(4)})
		for k := 1; k <= 8; k++ {
			most := 32*k - 23
			if ttl > 0 {
				most = 32*k - 29
			}
			// Source and Key under 128 bytes each.
			split := func(n int) Position {
				return Position{Source: strings.Repeat("s", n/2), Key: strings.Repeat("k", n-n/2)}
			}
			assert.Len(t, c.Encode("m", "", split(most)), chars(k), "TTL %v, %d bytes", ttl, most)
			assert.Len(t, c.Encode("m", "", split(most+1)), chars(k+1), "TTL %v, %d bytes", ttl, most+1)
			// A Key of 128 bytes or more takes a byte more.
			if most >= 128 {
				most--
			}
			assert.Len(t, c.Encode("m", "", Position{Key: strings.Repeat("k", most)}), chars(k), "TTL %v, a key of %d bytes", ttl, most)
			assert.Len(t, c.Encode("m", "", Position{Key: strings.Repeat("k", most+1)}), chars(k+1), "TTL %v, a key of %d bytes", ttl, most+1)
		}
		if ttl == 0 {
			assert.Len(t, c.Encode("m", "", Position{Key: strings.Repeat("k", 9)}), 87)
		} else {
			assert.Len(t, c.Encode("m", "", Position{Key: strings.Repeat("k", 3)}), 87)
		}
	}
}

func uvarintLen(n int) int { return len(binary.AppendUvarint(nil, uint64(n))) }

// seal returns the cursor for plaintext pt, which need not be well
// formed, as c would encrypt it.
func seal(c *Codec, pt []byte) string {
	k := c.keys[0]
	raw := append(append([]byte{version}, k.id[:]...), testNonce...)
	raw = k.aead.Seal(raw, testNonce, pt, raw[:adSize:adSize])
	return encoding.EncodeToString(raw)
}

// bound returns the binding and method tag of a cursor for method and
// scope.
func bound(method, scope string) []byte {
	var st scratch
	b, t := st.binding(method, scope), st.methodTag(method)
	return append(b[:], t[:]...)
}

// encodeV2 returns the cursor a Codec of format version 2 (the version
// before this one) made for p with key, method and scope: the same
// plaintext but for the binding, which was GCM's additional data, and
// another HKDF info.
func encodeV2(key []byte, method, scope string, p Position) string {
	k, err := hkdf.Key(sha256.New, key, nil, "mcpres cursor v2", 32)
	if err != nil {
		panic(err)
	}
	block, _ := aes.NewCipher(k)
	aead, _ := cipher.NewGCM(block)
	pt := binary.AppendUvarint([]byte{0}, uint64(len(p.Source)))
	pt = binary.AppendUvarint(pt, uint64(len(p.Key)))
	pt = append(append(pt, p.Source...), p.Key...)
	pt = append(pt, zeros[:padding(len(pt))]...)
	ad := binary.AppendUvarint([]byte{2}, uint64(len(method)))
	ad = append(ad, method...)
	ad = binary.AppendUvarint(ad, uint64(len(scope)))
	ad = append(ad, scope...)
	raw := append([]byte{2}, testNonce...)
	return encoding.EncodeToString(aead.Seal(raw, testNonce, pt, ad))
}

// TestDecodeChecksPlaintext checks that Decode refuses a plaintext
// authenticated by its key but not laid out as Encode lays it out: the
// padding, its length and the varints have one spelling. It also checks
// that the binding and method tag decide the reason for a well-formed
// plaintext of another method or scope.
func TestDecodeChecksPlaintext(t *testing.T) {
	clock := func() time.Time { return time.Unix(1_800_000_000, 0) }
	c := newTestCodec(t, &Options{Keys: [][]byte{testKey}, Now: clock})
	pad := func(b ...byte) []byte { return append(b, zeros[:padding(len(b))]...) }
	with := func(b []byte, i int, v byte) []byte { b[i] = v; return b }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	exp := binary.AppendVarint(nil, clock().Add(time.Hour).UnixMilli())
	bind := bound("m", "") // what c.Decode("m", "", …) wants
	flags := func(f byte) []byte { return append([]byte{f}, bind...) }
	withExp := cat([]byte{flagExpiry}, exp, bind)
	headerLen := 1 + len(bind)

	for _, tc := range []struct {
		pt   []byte
		want Position
	}{
		{pad(cat(flags(0), []byte{0, 0})...), Position{}},
		{pad(cat(flags(0), []byte{1, 1, 's', 'k'})...), Position{Source: "s", Key: "k"}},
		{cat(flags(0), []byte{0, 9}, make([]byte, 9)), Position{Key: string(make([]byte, 9))}}, // no padding
		{pad(cat(withExp, []byte{0, 1, 'k'})...), Position{Key: "k"}},
	} {
		s := seal(c, tc.pt)
		got, err := c.Decode("m", "", s)
		require.NoError(t, err, "%x", tc.pt)
		assert.Equal(t, tc.want, got)
		if tc.pt[0]&flagExpiry == 0 { // c, without a TTL, writes none
			assert.Equal(t, s, c.encode("m", "", got, testNonce), "the helper seals as Encode does")
		}
	}

	ff := bytes.Repeat([]byte{0xff}, 8)
	for _, tc := range []struct {
		pt     []byte
		reason string
	}{
		{pad(cat(flags(2), []byte{0, 0})...), "unknown flags 0x2"},
		{pad(cat(flags(0x81), []byte{0, 0})...), "unknown flags 0x81"},
		{pad(flagExpiry, 0x80, 0x80), "malformed expiry"},                                   // runs into the padding: overlong
		{append([]byte{flagExpiry}, bytes.Repeat([]byte{0xff}, 31)...), "malformed expiry"}, // never ends
		{pad(cat(withExp, []byte{0x80})...), "malformed position"},                          // overlong 0
		{pad(cat(flags(0), []byte{0x81, 0, 's', 'k'})...), "malformed position"},            // overlong 1
		{pad(cat(flags(0), []byte{0, 0x80, 0})...), "malformed position"},
		{pad(cat(flags(0), []byte{10, 0})...), "malformed position"},                                  // source longer than the plaintext
		{pad(cat(flags(0), []byte{1, 9, 's'})...), "malformed position"},                              // key longer
		{pad(cat(flags(0), ff, []byte{0x7f, 0})...), "malformed position"},                            // 2^63-1
		{pad(cat(flags(0), []byte{1}, ff, []byte{0xff, 1})...), "malformed position"},                 // 2^64-1: wraps
		{with(pad(cat(flags(0), []byte{1, 1, 's', 'k'})...), 31, 1), "malformed padding"},             // the last byte
		{with(pad(cat(flags(0), []byte{1, 1, 's', 'k'})...), headerLen+4, 0x80), "malformed padding"}, // the first
		{append(pad(cat(flags(0), []byte{1, 1, 's', 'k'})...), zeros[:]...), "malformed padding"},     // a bucket too many
		{make([]byte, 64), "malformed padding"},
		// Well formed, but for another method or scope: the method tag
		// tells which. Layout comes first: a plaintext of another
		// binding but malformed is malformed.
		{pad(cat([]byte{0}, bound("n", ""), []byte{0, 0})...), "another method"},
		{pad(cat([]byte{0}, bound("m", "x"), []byte{0, 0})...), "another scope"},
		{pad(cat([]byte{0}, bound("m", "x")[:bindingSize], bound("n", "")[bindingSize:], []byte{0, 0})...), "another method"},
		{pad(cat([]byte{0}, bound("n", "")[:bindingSize], bind[bindingSize:], []byte{0, 0})...), "another scope"},
		{pad(cat([]byte{0}, make([]byte, bindingSize+methodTagSize), []byte{0, 0})...), "another method"},
		{pad(cat([]byte{0}, bound("n", ""), []byte{0, 0x80, 0})...), "malformed position"},
	} {
		s := seal(c, tc.pt)
		assertInvalid(t, c, "m", "", s)
		_, err := c.Decode("m", "", s)
		assert.ErrorContains(t, err, tc.reason, "%x", tc.pt)
	}
	// Lengths that no plaintext has.
	for _, n := range []int{0, 1, 31, 33, 63} {
		s := seal(c, make([]byte, n))
		assertInvalid(t, c, "m", "", s)
	}
	// A TTL codec refuses a cursor without expiry.
	withTTL := newTestCodec(t, &Options{Keys: [][]byte{testKey}, TTL: time.Hour, Now: clock})
	_, err := withTTL.Decode("m", "", seal(c, pad(cat(flags(0), []byte{0, 0})...)))
	assert.ErrorContains(t, err, "no expiry")
}

// TestCodecAllocs checks that Encode allocates only the cursor, and Decode
// only the position's string (none for an empty one), whatever the key.
func TestCodecAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items: counts are not meaningful")
	}
	clock := func() time.Time { return time.Unix(1_800_000_000, 0) }
	p := Position{Source: "users://{id}/profile", Key: "users://ada.lovelace/profile"}
	enc := newTestCodec(t, &Options{Keys: [][]byte{testKey}, TTL: time.Hour, Now: clock})
	dec := newTestCodec(t, &Options{Keys: [][]byte{newKey, otherKey, testKey}, TTL: time.Hour, Now: clock})
	s := enc.Encode("resources/list", "user:ada", p)
	empty := enc.Encode("resources/list", "user:ada", Position{})
	long := Position{Key: strings.Repeat("k", 6000)} // outgrows the pooled buffers
	sLong := enc.Encode("m", "", long)
	for name, tc := range map[string]struct {
		f    func()
		want float64
	}{
		"Encode": {func() { enc.Encode("resources/list", "user:ada", p) }, 1},
		"Decode": {func() {
			if _, err := dec.Decode("resources/list", "user:ada", s); err != nil {
				t.Fatal(err)
			}
		}, 1},
		"Decode empty": {func() {
			if _, err := dec.Decode("resources/list", "user:ada", empty); err != nil {
				t.Fatal(err)
			}
		}, 0},
	} {
		assert.Equal(t, tc.want, testing.AllocsPerRun(1000, tc.f), name)
	}
	// A long position outgrows the pooled buffers, which are then made
	// anew (and not kept).
	assert.LessOrEqual(t, testing.AllocsPerRun(100, func() { enc.Encode("m", "", long) }), 6.0)
	assert.LessOrEqual(t, testing.AllocsPerRun(100, func() {
		if _, err := dec.Decode("m", "", sLong); err != nil {
			t.Fatal(err)
		}
	}), 6.0)
}

// The method tags a Codec keeps are those of the methods themselves: a
// refusal names the right reason past the cached methods too.
func TestMethodTagsCached(t *testing.T) {
	c, err := NewCodec(nil)
	require.NoError(t, err)
	for i := range 2 * maxCachedTags {
		method := fmt.Sprintf("m%d", i)
		cur := c.Encode(method, "scope", Position{Key: "k"})
		_, err := c.Decode(method, "scope", cur)
		require.NoError(t, err, method)
		_, err = c.Decode(method+"x", "scope", cur)
		require.ErrorIs(t, err, ErrOtherMethod, method)
		_, err = c.Decode(method, "other", cur)
		require.ErrorIs(t, err, ErrOtherScope, method)
	}
}
