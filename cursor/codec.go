// Package cursor implements opaque, signed, keyset pagination cursors, a
// sorted in-memory collection to page through, and Paginate, which walks
// any number of sorted sources (in-memory collections, database tables) as
// one ordered list.
//
// A cursor records where a page ended: the source and the key of its last
// item. The next page continues after that key (keyset, never an offset),
// so items inserted or deleted between pages never shift others: a walk
// never skips or repeats an item that existed for all of it.
//
// A cursor is authenticated with HMAC-SHA256 and bound to the list method
// it came from and, optionally, to a scope such as the caller's identity:
// a client cannot forge one, alter one, or replay one against another
// method or identity. Every such cursor decodes to an error matching
// ErrInvalid.
//
// The package knows nothing of MCP.
package cursor

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"sync"
	"time"
)

// ErrInvalid is matched (errors.Is) by every error Decode returns: the
// cursor is malformed, truncated, altered, signed by an unknown key,
// expired, or issued for another method or scope.
var ErrInvalid = errors.New("invalid cursor")

// MinKeyLength is the shortest signing key NewCodec accepts, in bytes.
const MinKeyLength = 16

// MaxLength is the longest cursor Decode looks at, in bytes; longer ones
// are invalid at once.
const MaxLength = 8 << 10

// A cursor is the unpadded base64url encoding of
//
//	version (1 byte) | flags (1 byte)
//	| expiry (signed varint, Unix milliseconds; if flags&flagExpiry)
//	| len(Source) (uvarint) | Source | Key
//	| MAC (macSize bytes)
//
// where MAC is the truncated HMAC-SHA256 of
//
//	len(method) (uvarint) | method | len(scope) (uvarint) | scope
//	| everything before the MAC
const (
	version    = 1
	macSize    = 16 // HMAC-SHA256 truncated to 128 bits
	flagExpiry = 1
)

// A Position is where a page ended: the name of the source its last item
// came from and that item's key.
type Position struct {
	Source string
	Key    string
}

// Options configures a Codec.
type Options struct {
	// Keys sign and verify cursors: the first signs, any verifies, so a
	// key can be rotated in by putting it first and out by dropping it
	// once its cursors no longer matter. Each must be at least
	// MinKeyLength bytes. Empty means one random key made by NewCodec:
	// cursors then stay valid for the life of the Codec only, which is
	// enough for a single server process.
	Keys [][]byte
	// TTL, if positive, is how long a cursor stays valid after it is
	// issued (rounded up to the millisecond). A Codec with a TTL refuses
	// cursors issued without one.
	TTL time.Duration
	// Now returns the current time; nil means time.Now. Tests set it.
	Now func() time.Time
}

// A Codec turns positions into opaque cursors and back. It is safe for
// concurrent use.
type Codec struct {
	keys []*macKey
	ttl  time.Duration
	now  func() time.Time
}

// macKey pools keyed HMAC states, which are costly to set up.
type macKey struct{ pool sync.Pool }

// A macState is a keyed HMAC with buffers for its input and output, so
// that computing a MAC allocates nothing.
type macState struct {
	h   hash.Hash
	buf []byte
	sum [sha256.Size]byte
}

// maxPooledBuf bounds the input buffer a macState keeps.
const maxPooledBuf = 1 << 10

func newMACKey(key []byte) *macKey {
	k := append([]byte(nil), key...)
	return &macKey{pool: sync.Pool{New: func() any {
		return &macState{h: hmac.New(sha256.New, k), buf: make([]byte, 0, 256)}
	}}}
}

// NewCodec returns a Codec configured by opts, which may be nil. It returns
// an error if a key is shorter than MinKeyLength or TTL is negative.
func NewCodec(opts *Options) (*Codec, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.TTL < 0 {
		return nil, fmt.Errorf("cursor: negative TTL %v", o.TTL)
	}
	c := &Codec{ttl: o.TTL, now: o.Now}
	if c.now == nil {
		c.now = time.Now
	}
	for i, k := range o.Keys {
		if len(k) < MinKeyLength {
			return nil, fmt.Errorf("cursor: key %d is %d bytes, fewer than %d", i, len(k), MinKeyLength)
		}
		c.keys = append(c.keys, newMACKey(k))
	}
	if len(c.keys) == 0 {
		k := make([]byte, 32)
		rand.Read(k)
		c.keys = append(c.keys, newMACKey(k))
	}
	return c, nil
}

// Encode returns the cursor for p, bound to method and scope: Decode
// accepts it only with the same two. It never fails, but Decode refuses a
// cursor longer than MaxLength: Source and Key together must stay under
// about 6,000 bytes (MaxLength*3/4 less the cursor's own 30 or so).
func (c *Codec) Encode(method, scope string, p Position) string {
	var buf [256]byte // most payloads fit: no allocation but the result
	payload := append(buf[:0], version, 0)
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

// expiry returns the time, in Unix milliseconds, at which a cursor issued
// at now expires: now+ttl rounded up, so that a cursor stays valid for at
// least ttl, and at most a millisecond longer.
func expiry(now time.Time, ttl time.Duration) int64 {
	t := now.Add(ttl)
	ms := t.UnixMilli()
	if t.Nanosecond()%int(time.Millisecond) != 0 {
		ms++
	}
	return ms
}

// encoding is unpadded base64url that refuses non-zero trailing bits, so
// that a cursor has one spelling (Decode also refuses line breaks, which
// the decoder skips).
var encoding = base64.RawURLEncoding.Strict()

// Decode returns the position a cursor records. It returns an error
// matching ErrInvalid, saying why, for a cursor that Encode did not produce
// with one of the Codec's keys, method and scope, or that has expired. A
// Codec with a TTL refuses cursors issued without one (by a Codec with the
// same key but no TTL): they would never expire.
func (c *Codec) Decode(method, scope, cursor string) (Position, error) {
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
	// The decoder skips CR and LF: a cursor has none.
	if err != nil || encoding.EncodedLen(n) != len(src) {
		return Position{}, fmt.Errorf("%w: not base64url", ErrInvalid)
	}
	raw = raw[:n]
	if len(raw) < 2+1+macSize {
		return Position{}, fmt.Errorf("%w: truncated", ErrInvalid)
	}
	payload, mac := raw[:len(raw)-macSize], raw[len(raw)-macSize:]
	if !c.verify(payload, method, scope, mac) {
		return Position{}, fmt.Errorf("%w: not signed by this server for %s", ErrInvalid, method)
	}
	// Signed by us: the layout can be trusted, but is checked all the same.
	if payload[0] != version {
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

func (c *Codec) verify(payload []byte, method, scope string, mac []byte) bool {
	var buf [macSize]byte
	for _, k := range c.keys {
		if hmac.Equal(k.sum(buf[:0], method, scope, payload), mac) {
			return true
		}
	}
	return false
}

// sum appends to dst the truncated MAC of payload bound to method and
// scope; each is length-prefixed so that no two bindings share an input.
func (k *macKey) sum(dst []byte, method, scope string, payload []byte) []byte {
	st := k.pool.Get().(*macState)
	defer k.pool.Put(st)
	b := binary.AppendUvarint(st.buf[:0], uint64(len(method)))
	b = append(b, method...)
	b = binary.AppendUvarint(b, uint64(len(scope)))
	b = append(b, scope...)
	b = append(b, payload...)
	if cap(b) <= maxPooledBuf {
		st.buf = b
	}
	st.h.Reset()
	st.h.Write(b)
	return append(dst, st.h.Sum(st.sum[:0])[:macSize]...)
}
