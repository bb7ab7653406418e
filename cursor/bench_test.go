package cursor

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"sync"
	"testing"
	"time"
)

// A benchCodec is the encrypted Codec or the signed baseline.
type benchCodec interface {
	Encode(method, scope string, p Position) string
	Decode(method, scope, cursor string) (Position, error)
}

// BenchmarkCodec measures Encode, Decode and the two in turn, of a typical
// position, for the encrypted Codec and, beside it, the signed codec it
// replaced (signedCodec, below): plain (one key, no scope or TTL),
// ttl+scope, and rotated (decoded by the second of two keys).
//
//	go test -run '^$' -bench Codec -benchmem -count 5 ./cursor/
func BenchmarkCodec(b *testing.B) {
	p := Position{Source: "users://{id}/profile", Key: "users://ada.lovelace/profile"}
	const method = "resources/list"
	clock := func() time.Time { return time.Unix(1_800_000_000, 0) }
	for _, bc := range []struct {
		name  string
		scope string
		ttl   time.Duration
		keys  [][]byte // the decoder's; the encoder's is testKey
	}{
		{name: "plain", keys: [][]byte{testKey}},
		{name: "ttl+scope", scope: "user:ada@example.com", ttl: time.Hour, keys: [][]byte{testKey}},
		{name: "rotated", keys: [][]byte{newKey, testKey}},
	} {
		impls := []struct {
			name     string
			enc, dec benchCodec
		}{
			{"signed",
				newSignedCodec(b, [][]byte{testKey}, bc.ttl, clock),
				newSignedCodec(b, bc.keys, bc.ttl, clock)},
			{"encrypted",
				newTestCodec(b, &Options{Keys: [][]byte{testKey}, TTL: bc.ttl, Now: clock}),
				newTestCodec(b, &Options{Keys: bc.keys, TTL: bc.ttl, Now: clock})},
		}
		for _, op := range []string{"encode", "decode", "roundtrip"} {
			for _, impl := range impls {
				b.Run(bc.name+"/"+op+"/"+impl.name, func(b *testing.B) {
					enc, dec := impl.enc, impl.dec
					s := enc.Encode(method, bc.scope, p)
					if got, err := dec.Decode(method, bc.scope, s); err != nil || got != p {
						b.Fatal(got, err)
					}
					b.ReportAllocs()
					switch op {
					case "encode":
						for b.Loop() {
							s = enc.Encode(method, bc.scope, p)
						}
						b.ReportMetric(float64(len(s)), "chars")
					case "decode":
						for b.Loop() {
							if _, err := dec.Decode(method, bc.scope, s); err != nil {
								b.Fatal(err)
							}
						}
					default:
						for b.Loop() {
							s = enc.Encode(method, bc.scope, p)
							if _, err := dec.Decode(method, bc.scope, s); err != nil {
								b.Fatal(err)
							}
						}
					}
				})
			}
		}
	}
}

// signedCodec is the codec of cursor format version 1, which Codec
// replaced: signed (HMAC-SHA256, truncated to 128 bits) but not
// encrypted, so that base64-decoding a cursor shows its position. It is
// kept, as it was, for BenchmarkCodec to compare against, and for tests
// to make version 1 cursors (which Codec refuses) and to check that
// TestRevealsNothing would catch it.
//
// A version 1 cursor is the unpadded base64url encoding of
//
//	version (1 byte, 1) | flags (1 byte)
//	| expiry (signed varint, Unix milliseconds; if flags&flagExpiry)
//	| len(Source) (uvarint) | Source | Key
//	| MAC (signedMACSize bytes)
//
// where MAC is the truncated HMAC-SHA256 of
//
//	len(method) (uvarint) | method | len(scope) (uvarint) | scope
//	| everything before the MAC
type signedCodec struct {
	keys []*signedMACKey
	ttl  time.Duration
	now  func() time.Time
}

const (
	signedVersion = 1
	signedMACSize = 16
)

// signedMACKey pools keyed HMAC states, which are costly to set up.
type signedMACKey struct{ pool sync.Pool }

// A signedMACState is a keyed HMAC with buffers for its input and output,
// so that computing a MAC allocates nothing.
type signedMACState struct {
	h   hash.Hash
	buf []byte
	sum [sha256.Size]byte
}

func newSignedMACKey(key []byte) *signedMACKey {
	k := append([]byte(nil), key...)
	return &signedMACKey{pool: sync.Pool{New: func() any {
		return &signedMACState{h: hmac.New(sha256.New, k), buf: make([]byte, 0, 256)}
	}}}
}

func newSignedCodec(t testing.TB, keys [][]byte, ttl time.Duration, now func() time.Time) *signedCodec {
	t.Helper()
	if len(keys) == 0 || ttl < 0 {
		t.Fatal("newSignedCodec: no keys or negative TTL")
	}
	c := &signedCodec{ttl: ttl, now: now}
	if c.now == nil {
		c.now = time.Now
	}
	for _, k := range keys {
		c.keys = append(c.keys, newSignedMACKey(k))
	}
	return c
}

func (c *signedCodec) Encode(method, scope string, p Position) string {
	var buf [256]byte // most payloads fit: no allocation but the result
	payload := append(buf[:0], signedVersion, 0)
	if c.ttl > 0 {
		payload[1] |= flagExpiry
		payload = binary.AppendVarint(payload, expiry(c.now(), c.ttl))
	}
	payload = binary.AppendUvarint(payload, uint64(len(p.Source)))
	payload = append(payload, p.Source...)
	payload = append(payload, p.Key...)
	payload = c.keys[0].sum(payload, method, scope, payload)
	var out [344]byte // encodes buf
	return string(encoding.AppendEncode(out[:0], payload))
}

func (c *signedCodec) Decode(method, scope, cursor string) (Position, error) {
	if len(cursor) > MaxLength {
		return Position{}, fmt.Errorf("%w: too long", ErrInvalid)
	}
	var sbuf, rbuf [344]byte // most cursors fit: no allocation but the result
	src := append(sbuf[:0], cursor...)
	raw := rbuf[:]
	if n := encoding.DecodedLen(len(src)); n > len(raw) {
		raw = make([]byte, n)
	}
	n, err := encoding.Decode(raw, src)
	if err != nil || encoding.EncodedLen(n) != len(src) {
		return Position{}, fmt.Errorf("%w: not base64url", ErrInvalid)
	}
	raw = raw[:n]
	if len(raw) < 2+1+signedMACSize {
		return Position{}, fmt.Errorf("%w: truncated", ErrInvalid)
	}
	payload, mac := raw[:len(raw)-signedMACSize], raw[len(raw)-signedMACSize:]
	if !c.verify(payload, method, scope, mac) {
		return Position{}, fmt.Errorf("%w: not signed by this server for %s", ErrInvalid, method)
	}
	if payload[0] != signedVersion {
		return Position{}, fmt.Errorf("%w: unknown version %d", ErrInvalid, payload[0])
	}
	flags, rest := payload[1], payload[2:]
	if flags&^flagExpiry != 0 {
		return Position{}, fmt.Errorf("%w: unknown flags %#x", ErrInvalid, flags)
	}
	if flags&flagExpiry != 0 {
		exp, n := binary.Varint(rest)
		if n <= 0 {
			return Position{}, fmt.Errorf("%w: malformed expiry", ErrInvalid)
		}
		if c.now().UnixMilli() >= exp {
			return Position{}, fmt.Errorf("%w: expired", ErrInvalid)
		}
		rest = rest[n:]
	} else if c.ttl > 0 {
		return Position{}, fmt.Errorf("%w: no expiry", ErrInvalid)
	}
	srcLen, n := binary.Uvarint(rest)
	if n <= 0 || srcLen > uint64(len(rest)-n) {
		return Position{}, fmt.Errorf("%w: malformed position", ErrInvalid)
	}
	rest = rest[n:]
	s := string(rest) // one allocation for both
	return Position{Source: s[:srcLen], Key: s[srcLen:]}, nil
}

func (c *signedCodec) verify(payload []byte, method, scope string, mac []byte) bool {
	var buf [signedMACSize]byte
	for _, k := range c.keys {
		if hmac.Equal(k.sum(buf[:0], method, scope, payload), mac) {
			return true
		}
	}
	return false
}

// sum appends to dst the truncated MAC of payload bound to method and
// scope; each is length-prefixed so that no two bindings share an input.
func (k *signedMACKey) sum(dst []byte, method, scope string, payload []byte) []byte {
	st := k.pool.Get().(*signedMACState)
	defer k.pool.Put(st)
	b := binary.AppendUvarint(st.buf[:0], uint64(len(method)))
	b = append(b, method...)
	b = binary.AppendUvarint(b, uint64(len(scope)))
	b = append(b, scope...)
	b = append(b, payload...)
	if cap(b) <= 1<<10 {
		st.buf = b
	}
	st.h.Reset()
	st.h.Write(b)
	return append(dst, st.h.Sum(st.sum[:0])[:signedMACSize]...)
}

// benchKey is the key of item i of a benchmark collection.
func benchKey(i int) string { return fmt.Sprintf("file:///srv/data/item-%08d.json", i) }

type benchValue struct{ uri, name string }

func benchSorted(n int) *Sorted[*benchValue] {
	s := new(Sorted[*benchValue])
	for i := range n {
		k := benchKey(2 * i) // odd keys are free for inserts
		s.Set(k, &benchValue{uri: k, name: fmt.Sprint(i)})
	}
	return s
}

var benchSizes = []int{1_000, 10_000, 100_000}

// BenchmarkPaginate measures one page of 100 from a cursor in the middle
// of a Sorted of N items: its cost should not depend on N.
func BenchmarkPaginate(b *testing.B) {
	ctx := context.Background()
	c := newTestCodec(b, nil)
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			s := benchSorted(n)
			sources := []Source[*benchValue]{{Name: "", Provider: s}}
			req := Request{Method: "resources/list", Size: 100,
				Cursor: c.Encode("resources/list", "", Position{Key: benchKey(n)})}
			b.ReportAllocs()
			for b.Loop() {
				page, next, err := Paginate(ctx, c, req, sources)
				if err != nil || len(page) != 100 || next == "" {
					b.Fatal(len(page), next, err)
				}
			}
		})
	}
}

// BenchmarkPageAfterSet measures a change to one item among N followed by
// the page that shows it: Set of a new key just after the cursor, the page
// of 100 from that cursor, and Delete of the key (to keep N fixed).
func BenchmarkPageAfterSet(b *testing.B) {
	ctx := context.Background()
	c := newTestCodec(b, nil)
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			s := benchSorted(n)
			sources := []Source[*benchValue]{{Name: "", Provider: s}}
			req := Request{Method: "resources/list", Size: 100,
				Cursor: c.Encode("resources/list", "", Position{Key: benchKey(n)})}
			k := benchKey(n + 1)
			v := &benchValue{uri: k}
			b.ReportAllocs()
			for b.Loop() {
				s.Set(k, v)
				page, next, err := Paginate(ctx, c, req, sources)
				if err != nil || page[0] != v || next == "" {
					b.Fatal(len(page), next, err)
				}
				s.Delete(k)
			}
		})
	}
}
