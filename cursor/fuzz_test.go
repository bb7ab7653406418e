package cursor

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The fuzz targets' codecs have fixed keys and a fixed clock, and their
// cursors fixed nonces, so that the checked-in corpus (testdata/fuzz)
// stays valid and a failure can be replayed.
const (
	fuzzMethod = "resources/list"
	fuzzScope  = "user:ada"
)

var fuzzNow = time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)

func fuzzCodecs(t testing.TB) []*Codec {
	return []*Codec{
		newTestCodec(t, nil),
		newTestCodec(t, &Options{Keys: [][]byte{newKey, testKey}, TTL: time.Hour, Now: func() time.Time { return fuzzNow }}),
	}
}

// fuzzNonce returns the i-th of a fixed sequence of nonces.
func fuzzNonce(i int) []byte {
	n := make([]byte, nonceSize)
	binary.BigEndian.PutUint64(n[4:], uint64(i)*0x9e3779b97f4a7c15)
	return n
}

// FuzzDecode checks that Decode never panics, refuses with ErrInvalid, and
// accepts no string but the one the codec itself produces for the
// position it decodes to, with the nonce the string holds: a cursor has
// one spelling for a nonce, so no altered cursor is accepted. (A string
// the fuzzer makes up is never accepted: it would have to forge a GCM
// tag.)
func FuzzDecode(f *testing.F) {
	for i, c := range fuzzCodecs(f) {
		for j, p := range testPositions[:9] {
			n := fuzzNonce(10*i + j)
			valid := c.encode(fuzzMethod, fuzzScope, p, n)
			f.Add(valid)
			f.Add(valid + "\n")
			f.Add(valid[:len(valid)-1])
			f.Add(c.encode(fuzzMethod, "", p, n))
			f.Add(c.encode("resources/templates/list", fuzzScope, p, n))
		}
	}
	// Version 1 (signed) and 2 cursors: refused for their version.
	v1 := newSignedCodec(f, [][]byte{testKey}, 0, nil)
	f.Add(v1.Encode(fuzzMethod, fuzzScope, Position{}))
	f.Add(v1.Encode(fuzzMethod, fuzzScope, testPositions[3]))
	f.Add(encodeV2(testKey, fuzzMethod, fuzzScope, Position{}))
	f.Add(encodeV2(testKey, fuzzMethod, fuzzScope, testPositions[3]))
	for _, s := range []string{"", "A", "AAAA", "not a cursor", "eyJvZmZzZXQiOjEwMH0", "MTAw", "AQ", "AQAA", "AQEA", "Ag", "AgAA", "_-_-", "===="} {
		f.Add(s)
	}
	codecs := fuzzCodecs(f)
	f.Fuzz(func(t *testing.T, s string) {
		for i, c := range codecs {
			p, err := c.Decode(fuzzMethod, fuzzScope, s)
			if err != nil {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("codec %d: Decode(%q) = %v, not ErrInvalid", i, s, err)
				}
				if p != (Position{}) {
					t.Fatalf("codec %d: Decode(%q) = %+q with error %v", i, s, p, err)
				}
				continue
			}
			raw, err := encoding.DecodeString(s)
			if err != nil {
				t.Fatalf("codec %d: Decode accepted %q, which is not base64url: %v", i, s, err)
			}
			if again := c.encode(fuzzMethod, fuzzScope, p, raw[nonceAt:headerSize]); again != s {
				t.Fatalf("codec %d: Decode accepted %q as %+q, which encodes as %q", i, s, p, again)
			}
		}
	})
}

// FuzzMutate alters a valid cursor (a bit flipped, a byte inserted,
// deleted, replaced or appended, the cursor cut short) and checks Decode
// refuses it.
func FuzzMutate(f *testing.F) {
	for _, p := range testPositions[:9] {
		for op := range uint8(numMutations) {
			f.Add(p.Source, p.Key, op, uint16(3*op), byte('A'+op))
		}
	}
	f.Add("s", "k", uint8(mutateInsert), uint16(5), byte('\n'))
	f.Add("s", "k", uint8(mutateAppend), uint16(0), byte('\r'))
	f.Add("", "", uint8(mutateReplace), uint16(86), byte('B')) // low bits of the last character
	f.Add("", "", uint8(mutateReplace), uint16(1), byte('g'))  // the version's last bits
	f.Add("s", "k", uint8(mutateFlip), uint16(3), byte(2))     // the key id
	f.Add("s", "k", uint8(mutateSwap), uint16(2), byte(5))     // key id and nonce
	codecs := fuzzCodecs(f)
	f.Fuzz(func(t *testing.T, source, key string, op uint8, at uint16, b byte) {
		p := Position{Source: source, Key: key}
		for i, c := range codecs {
			valid := c.encode(fuzzMethod, fuzzScope, p, testNonce)
			if len(valid) > MaxLength {
				continue // refused anyway
			}
			got, err := c.Decode(fuzzMethod, fuzzScope, valid)
			if err != nil || got != p {
				t.Fatalf("codec %d: round trip of %+q: %+q, %v", i, p, got, err)
			}
			mutated := mutate(valid, op, int(at), b)
			if mutated == valid {
				continue
			}
			got, err = c.Decode(fuzzMethod, fuzzScope, mutated)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("codec %d: %q, altered from %q (%+q), decodes to %+q, %v", i, mutated, valid, p, got, err)
			}
		}
	})
}

// TestMutations applies a million random mutations, from a fixed seed, to
// valid cursors and checks that Decode refuses every one. A mutation is
// one alteration (three times in four) or two or three, each of the text (any of mutate's, with any
// byte or with a base64url character) or, more often, of the bytes it
// encodes, which are then encoded again: a bit flipped, a byte changed,
// inserted or deleted, 32 bytes (a padding bucket) inserted or deleted,
// the cursor cut short, or its nonce, tag or ciphertext taken from another
// cursor. Most mutations are thus refused by GCM, as tampered with, not
// by the base64 or the length checks (the test checks that too), and
// none is taken for a cursor of another method or scope, or an expired
// one. The race detector makes Decode ten times slower: under it, the
// test makes 100,000 mutations.
func TestMutations(t *testing.T) {
	n := 1_000_000
	if raceEnabled {
		n = 100_000
	}
	clock := func() time.Time { return fuzzNow }
	type setup struct{ enc, dec *Codec }
	setups := []setup{
		{newTestCodec(t, nil), newTestCodec(t, nil)},
		{newTestCodec(t, &Options{Keys: [][]byte{testKey}, TTL: time.Hour, Now: clock}),
			newTestCodec(t, &Options{Keys: [][]byte{testKey}, TTL: time.Hour, Now: clock})},
		{newTestCodec(t, nil), newTestCodec(t, &Options{Keys: [][]byte{newKey, testKey}})}, // rotated
	}
	r := rand.New(rand.NewPCG(20260102, 1))
	randomNonce := func() []byte {
		b := make([]byte, nonceSize)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	type base struct {
		dec    *Codec
		cursor string
		raw    []byte
	}
	var bases []base
	var raws [][]byte
	valid := map[string]bool{} // splicing may rebuild one: not a mutation
	positions := append(slices.Clone(testPositions[:9]), Position{Source: "tenant-b/catalog", Key: "product/personas"})
	for _, s := range setups {
		for _, p := range positions {
			c := s.enc.encode(fuzzMethod, fuzzScope, p, randomNonce())
			bases = append(bases, base{s.dec, c, rawOf(t, c)})
			raws = append(raws, rawOf(t, c))
			valid[c] = true
		}
	}

	refused := map[string]int{}
	accepted := 0
	start := time.Now()
	for i := 0; i < n; {
		b := bases[r.IntN(len(bases))]
		m := mutateRandomly(r, b.cursor, raws)
		if valid[m] {
			continue
		}
		i++
		p, err := b.dec.Decode(fuzzMethod, fuzzScope, m)
		if err == nil {
			accepted++
			t.Errorf("%q, altered from %q, decodes to %+q", m, b.cursor, p)
			continue
		}
		if !errors.Is(err, ErrInvalid) || p != (Position{}) {
			t.Fatalf("%q, altered from %q: %+q, %v", m, b.cursor, p, err)
		}
		refused[reasonOf(err)]++
	}
	elapsed := time.Since(start)
	t.Logf("%d mutations in %v (%v each): %d accepted; refused as %v", n, elapsed.Round(time.Millisecond), elapsed/time.Duration(n), accepted, refused)
	assert.Zero(t, accepted)
	// Most get as far as GCM, which refuses them; none is taken for a
	// cursor of another method or scope, or an expired one.
	assert.Greater(t, refused[ErrTampered.Error()], n/2)
	assert.Zero(t, refused[ErrOtherMethod.Error()]+refused[ErrOtherScope.Error()]+refused[ErrExpired.Error()])
}

// reasonOf returns the reason err, from Decode, gives: the reason error's
// text, or Decode's message without numbers.
func reasonOf(err error) string {
	for _, r := range []error{ErrTampered, ErrUnknownKey, ErrOtherMethod, ErrOtherScope, ErrExpired} {
		if errors.Is(err, r) {
			return r.Error()
		}
	}
	return strings.TrimRight(err.Error(), "0123456789")
}

// mutateRandomly alters a valid cursor as TestMutations says; others are
// the bytes of other valid cursors, to splice in.
func mutateRandomly(r *rand.Rand, cursor string, others [][]byte) string {
	s := cursor
	n := 1 // usually one alteration; else two or three
	if r.IntN(4) == 0 {
		n += 1 + r.IntN(2)
	}
	for range n {
		if s == "" {
			s = string(base64URLAlphabet[r.IntN(64)])
			continue
		}
		raw, err := encoding.DecodeString(s)
		switch k := r.IntN(8); {
		case k == 0 || err != nil:
			s = mutate(s, uint8(r.IntN(numMutations)), r.IntN(len(s)), byte(r.Uint32()))
		case k == 1:
			s = mutate(s, uint8(r.IntN(numMutations)), r.IntN(len(s)), base64URLAlphabet[r.IntN(64)])
		default:
			s = encoding.EncodeToString(mutateBytes(r, raw, others))
		}
	}
	return s
}

// mutateBytes alters the bytes of a cursor.
func mutateBytes(r *rand.Rand, raw []byte, others [][]byte) []byte {
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	other := others[r.IntN(len(others))]
	if len(raw) == 0 {
		return random(1 + r.IntN(100))
	}
	at := r.IntN(len(raw))
	// Alterations that keep the length are likelier: they get past the
	// length checks, to GCM.
	switch r.IntN(18) {
	case 0, 1, 2, 3: // a bit flipped
		raw[at] ^= 1 << r.IntN(8)
	case 4, 5, 6, 7: // a byte changed
		raw[at] ^= byte(1 + r.IntN(255))
	case 8: // a byte inserted
		raw = slices.Insert(raw, at, byte(r.Uint32()))
	case 9: // a byte deleted
		raw = slices.Delete(raw, at, at+1)
	case 10: // cut short
		raw = raw[:at]
	case 11: // a bucket inserted: the length stays one a cursor can have
		raw = slices.Insert(raw, at, random(padTo)...)
	case 12: // a bucket deleted
		if len(raw) >= at+padTo {
			raw = slices.Delete(raw, at, at+padTo)
		} else {
			raw = raw[:len(raw)-min(len(raw), padTo)]
		}
	case 13: // another cursor's nonce
		if len(raw) >= headerSize && len(other) >= headerSize {
			copy(raw[nonceAt:headerSize], other[nonceAt:headerSize])
		}
	case 14: // another cursor's tag
		if len(raw) >= tagSize && len(other) >= tagSize {
			copy(raw[len(raw)-tagSize:], other[len(other)-tagSize:])
		}
	case 15: // another cursor's ciphertext, tag and all
		if len(other) >= headerSize {
			raw = append(raw[:min(len(raw), headerSize)], other[headerSize:]...)
		}
	default: // two bytes swapped
		j := r.IntN(len(raw))
		raw[at], raw[j] = raw[j], raw[at]
	}
	return raw
}

const (
	mutateFlip = iota
	mutateInsert
	mutateDelete
	mutateReplace
	mutateAppend
	mutateTruncate
	mutateSwap
	numMutations
)

// mutate alters s as op says, at byte at (modulo its length), with b.
func mutate(s string, op uint8, at int, b byte) string {
	bs := []byte(s)
	at %= len(bs)
	switch op % numMutations {
	case mutateFlip:
		bs[at] ^= 1 << (b % 8)
	case mutateInsert:
		bs = slices.Insert(bs, at, b)
	case mutateDelete:
		bs = slices.Delete(bs, at, at+1)
	case mutateReplace:
		bs[at] = b
	case mutateAppend:
		bs = append(bs, b)
	case mutateTruncate:
		bs = bs[:at]
	default: // mutateSwap
		j := int(b) % len(bs)
		bs[at], bs[j] = bs[j], bs[at]
	}
	return string(bs)
}
