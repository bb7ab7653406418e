package cursor

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// The fuzz targets' codecs have fixed keys and a fixed clock, so that the
// checked-in corpus (testdata/fuzz) stays valid.
const (
	fuzzMethod = "resources/list"
	fuzzScope  = "user:ada"
)

func fuzzCodecs(t testing.TB) []*Codec {
	now := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	return []*Codec{
		newTestCodec(t, nil),
		newTestCodec(t, &Options{Keys: [][]byte{newKey, testKey}, TTL: time.Hour, Now: func() time.Time { return now }}),
	}
}

// FuzzDecode checks that Decode never panics, refuses with ErrInvalid, and
// accepts no string but the one the codec itself produces for the
// position it decodes to: a cursor has one spelling, so no altered cursor
// is accepted.
func FuzzDecode(f *testing.F) {
	for _, c := range fuzzCodecs(f) {
		for _, p := range testPositions[:9] {
			valid := c.Encode(fuzzMethod, fuzzScope, p)
			f.Add(valid)
			f.Add(valid + "\n")
			f.Add(valid[:len(valid)-1])
			f.Add(c.Encode(fuzzMethod, "", p))
			f.Add(c.Encode("resources/templates/list", fuzzScope, p))
		}
	}
	for _, s := range []string{"", "A", "AAAA", "not a cursor", "eyJvZmZzZXQiOjEwMH0", "MTAw", "AQ", "AQAA", "AQEA", "_-_-", "===="} {
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
			if again := c.Encode(fuzzMethod, fuzzScope, p); again != s {
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
	f.Add("", "", uint8(mutateReplace), uint16(25), byte('B')) // low bits of the last character
	codecs := fuzzCodecs(f)
	f.Fuzz(func(t *testing.T, source, key string, op uint8, at uint16, b byte) {
		p := Position{Source: source, Key: key}
		for i, c := range codecs {
			valid := c.Encode(fuzzMethod, fuzzScope, p)
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
