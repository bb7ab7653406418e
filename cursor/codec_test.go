package cursor

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Fixed keys, so that cursors (and the fuzz corpus) stay the same from run
// to run.
var (
	testKey  = []byte("0123456789abcdef0123456789abcdef")
	otherKey = []byte("fedcba9876543210fedcba9876543210")
	newKey   = []byte("a new key of at least 16 bytes..")
)

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

// TestEncodeDeterministic checks that, without a TTL, a position has one
// cursor, which the fuzz targets rely on.
func TestEncodeDeterministic(t *testing.T) {
	c1, c2 := newTestCodec(t, nil), newTestCodec(t, nil)
	p := Position{Source: "s", Key: "k"}
	assert.Equal(t, c1.Encode("m", "x", p), c2.Encode("m", "x", p))
	assert.NotEqual(t, c1.Encode("m", "x", p), c1.Encode("m", "y", p))
	assert.NotEqual(t, c1.Encode("m", "x", p), c1.Encode("n", "x", p))
	// Length prefixes keep method and scope apart.
	assert.NotEqual(t, c1.Encode("ab", "c", p), c1.Encode("a", "bc", p))
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
}

func TestRotation(t *testing.T) {
	p := Position{Source: "s", Key: "k"}
	old := newTestCodec(t, &Options{Keys: [][]byte{testKey}})
	both := newTestCodec(t, &Options{Keys: [][]byte{newKey, testKey}})
	onlyNew := newTestCodec(t, &Options{Keys: [][]byte{newKey}})

	fromOld := old.Encode("m", "", p)
	got, err := both.Decode("m", "", fromOld)
	require.NoError(t, err)
	assert.Equal(t, p, got)
	assertInvalid(t, onlyNew, "m", "", fromOld)

	// [new, old] signs with new: onlyNew accepts it, old does not.
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
	assert.Equal(t, newTestCodec(t, nil).Encode("m", "", p), c.Encode("m", "", p))
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
				assert.ErrorContains(t, err, "expired", "%v after issue", d)
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
	// 2 bytes of header, 1 of source length, 16 of MAC: 6,144 bytes in
	// all are 8,192 base64 characters.
	fits := Position{Key: strings.Repeat("k", MaxLength*3/4-19)}
	s := c.Encode("m", "", fits)
	require.Len(t, s, MaxLength)
	got, err := c.Decode("m", "", s)
	require.NoError(t, err)
	assert.Equal(t, fits, got)

	tooLong := Position{Key: fits.Key + "k"}
	s = c.Encode("m", "", tooLong)
	assert.Greater(t, len(s), MaxLength)
	assertInvalid(t, c, "m", "", s)
	_, err = c.Decode("m", "", s)
	assert.ErrorContains(t, err, "too long")

	// The bound Encode documents, with a TTL.
	c = newTestCodec(t, &Options{Keys: [][]byte{testKey}, TTL: time.Hour})
	p := Position{Source: strings.Repeat("s", 3000), Key: strings.Repeat("k", 3000)}
	got, err = c.Decode("m", "", c.Encode("m", "", p))
	require.NoError(t, err)
	assert.Equal(t, p, got)
}
