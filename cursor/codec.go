// Package cursor implements opaque, encrypted, keyset pagination cursors,
// a sorted in-memory collection to page through, and Paginate, which walks
// any number of sorted sources (in-memory collections, database tables) as
// one ordered list.
//
// A cursor records where a page ended: the source and the key of its last
// item. The next page continues after that key (keyset, never an offset),
// so items inserted or deleted between pages never shift others: a walk
// never skips or repeats an item that existed for all of it.
//
// A cursor is encrypted and authenticated with AES-256-GCM (format
// version 2), with a random nonce: it reveals nothing of the position it
// records (two cursors for one position differ) but, by its length, which
// bucket of 32 bytes the position's length falls in (see Codec.Encode). It is bound to the list method it came from and,
// optionally, to a scope such as the caller's identity: a client cannot
// read one, forge one, alter one, or replay one against another method
// or identity. Every such cursor, as every cursor of another format
// version, decodes to an error matching ErrInvalid. Keys can be rotated
// (see Options.Keys).
//
// The package knows nothing of MCP.
package cursor

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// ErrInvalid is matched (errors.Is) by every error Decode returns: the
// cursor is malformed, truncated, altered, of another format version,
// made with an unknown key, expired, or issued for another method or
// scope.
var ErrInvalid = errors.New("invalid cursor")

// MinKeyLength is the shortest key NewCodec accepts, in bytes.
const MinKeyLength = 16

// MaxLength is the longest cursor Decode looks at, in bytes; longer ones
// are invalid at once.
const MaxLength = 8 << 10

// A cursor (format version 2) is the unpadded base64url encoding of
//
//	version (1 byte, 2) | nonce (nonceSize bytes, random)
//	| AES-256-GCM ciphertext of the plaintext, with its tag (tagSize bytes)
//
// where the plaintext is
//
//	flags (1 byte)
//	| expiry (signed varint, Unix milliseconds; if flags&flagExpiry)
//	| len(Source) (uvarint) | len(Key) (uvarint) | Source | Key
//	| zero bytes, fewest that make the plaintext a multiple of padTo bytes
//
// and the additional data the tag covers is
//
//	version | len(method) (uvarint) | method | len(scope) (uvarint) | scope
//
// each length-prefixed so that no two bindings share an input. The AES
// key is derived from a configured key with HKDF-SHA256 (no salt, info
// keyInfo), so that keys of any length work.
//
// Varints are minimal and the padding is checked, so that a plaintext has
// one spelling; with the strict base64, so has a cursor for a given nonce.
const (
	version    = 2
	nonceSize  = 12 // GCM's standard nonce: 96 random bits
	tagSize    = 16 // GCM's full tag
	headerSize = 1 + nonceSize
	overhead   = headerSize + tagSize
	padTo      = 32 // plaintexts are a multiple of this: the length bucket
	flagExpiry = 1
	keyInfo    = "mcpres cursor v2"
)

// A Position is where a page ended: the name of the source its last item
// came from and that item's key.
type Position struct {
	Source string
	Key    string
}

// Options configures a Codec.
type Options struct {
	// Keys encrypt and decrypt cursors (AES-256-GCM): the first encrypts,
	// each in turn is tried to decrypt, so a key can be rotated in by
	// putting it first and out by dropping it once its cursors no longer
	// matter. Each must be at least MinKeyLength bytes: an AES-256 key is
	// derived from each with HKDF-SHA256, which does not make a guessable
	// key strong, so use random bytes (32 are best). Empty means one
	// random key made by NewCodec: cursors then stay valid for the life
	// of the Codec only, which is enough for a single server process.
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
	keys    []cipher.AEAD // AES-256-GCM, one per configured key
	ttl     time.Duration
	now     func() time.Time
	scratch sync.Pool // *scratch
}

// A scratch holds the buffers one Encode or Decode works in, so that
// neither allocates but its result. (The AEAD is an interface: whatever
// is passed to it escapes, so stack buffers would not do.)
type scratch struct {
	ad  []byte // additional data: version, method and scope
	pt  []byte // plaintext
	raw []byte // version | nonce | ciphertext and tag
	txt []byte // the cursor
}

// maxPooledBuf bounds the buffers a pooled scratch keeps.
const maxPooledBuf = 1 << 10

func (c *Codec) getScratch() *scratch {
	if st, ok := c.scratch.Get().(*scratch); ok {
		return st
	}
	return &scratch{
		ad:  make([]byte, 0, 128),
		pt:  make([]byte, 0, 4*padTo),
		raw: make([]byte, 0, overhead+4*padTo),
		txt: make([]byte, 0, 256),
	}
}

func (c *Codec) putScratch(st *scratch) {
	for _, b := range [...]*[]byte{&st.ad, &st.pt, &st.raw, &st.txt} {
		if cap(*b) > maxPooledBuf {
			*b = nil
		}
	}
	c.scratch.Put(st)
}

// newAEAD returns AES-256-GCM under the key derived from key.
func newAEAD(key []byte) (cipher.AEAD, error) {
	k, err := hkdf.Key(sha256.New, key, nil, keyInfo, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
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
	keys := o.Keys
	for i, k := range keys {
		if len(k) < MinKeyLength {
			return nil, fmt.Errorf("cursor: key %d is %d bytes, fewer than %d", i, len(k), MinKeyLength)
		}
	}
	if len(keys) == 0 {
		k := make([]byte, 32)
		rand.Read(k)
		keys = [][]byte{k}
	}
	for i, k := range keys {
		aead, err := newAEAD(k) // k itself is not kept: the caller may reuse it
		if err != nil {
			return nil, fmt.Errorf("cursor: key %d: %v", i, err)
		}
		c.keys = append(c.keys, aead)
	}
	return c, nil
}

// Encode returns the cursor for p, encrypted and authenticated with
// AES-256-GCM under the first key, with a random nonce, so that it
// reveals nothing of p and two cursors for one position differ. It is
// bound to method and scope: Decode accepts it only with the same two.
//
// The plaintext is padded to a multiple of 32 bytes, so that a cursor's
// length reveals only which bucket of 32 bytes len(Source)+len(Key) falls
// in, not the length itself nor how it splits between Source and Key: a
// cursor is 82 characters for up to 29 bytes (23 with a TTL, whose expiry
// takes 6 bytes until 2039), then about 43 characters more for each 32 bytes more (a
// Source or Key of 128 bytes or more moves the boundaries by a byte, for
// its longer length prefix).
//
// Encode never fails, but Decode refuses a cursor longer than MaxLength:
// Source and Key together must stay under about 6,000 bytes. Up to 6,097
// always fit: MaxLength*3/4 bytes, less 29 of version, nonce and tag,
// rounded down to a multiple of 32, less at most 15 of flags, expiry and
// lengths.
func (c *Codec) Encode(method, scope string, p Position) string {
	return c.encode(method, scope, p, nil)
}

// encode is Encode with the given nonce; nil means a random one. Only
// tests give one.
func (c *Codec) encode(method, scope string, p Position, nonce []byte) string {
	st := c.getScratch()
	defer c.putScratch(st)

	// The most the plaintext (and so the cursor) takes: grow the buffers
	// once, if at all.
	n := 1 + 3*binary.MaxVarintLen64 + len(p.Source) + len(p.Key)
	n += padding(n)
	pt := append(slices.Grow(st.pt[:0], n), 0)
	if c.ttl > 0 {
		pt[0] |= flagExpiry
		pt = binary.AppendVarint(pt, expiry(c.now(), c.ttl))
	}
	pt = binary.AppendUvarint(pt, uint64(len(p.Source)))
	pt = binary.AppendUvarint(pt, uint64(len(p.Key)))
	pt = append(pt, p.Source...)
	pt = append(pt, p.Key...)
	pt = append(pt, zeros[:padding(len(pt))]...)
	st.pt = pt

	raw := append(slices.Grow(st.raw[:0], overhead+n), version)
	raw = append(raw, zeros[:nonceSize]...)
	if nonce == nil {
		rand.Read(raw[1:headerSize])
	} else {
		copy(raw[1:headerSize], nonce)
	}
	st.ad = appendAD(st.ad[:0], method, scope)
	raw = c.keys[0].Seal(raw, raw[1:headerSize], pt, st.ad)
	st.raw = raw

	st.txt = encoding.AppendEncode(slices.Grow(st.txt[:0], encoding.EncodedLen(overhead+n)), raw)
	return string(st.txt)
}

// zeros pads plaintexts.
var zeros [padTo]byte

// padding returns how many zero bytes pad a plaintext of n bytes: the
// fewest that make it a multiple of padTo.
func padding(n int) int { return (padTo - n%padTo) % padTo }

// appendAD appends to dst the additional data that binds a cursor to its
// format version, method and scope.
func appendAD(dst []byte, method, scope string) []byte {
	dst = append(dst, version)
	dst = binary.AppendUvarint(dst, uint64(len(method)))
	dst = append(dst, method...)
	dst = binary.AppendUvarint(dst, uint64(len(scope)))
	return append(dst, scope...)
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
// with one of the Codec's keys, method and scope, that has expired, or
// that is of another format version (such as the signed, unencrypted
// cursors of version 1). A Codec with a TTL refuses cursors issued without
// one (by a Codec with the same key but no TTL): they would never expire.
//
// Each key is tried in turn; GCM's tag refuses a wrong key at once.
func (c *Codec) Decode(method, scope, cursor string) (Position, error) {
	if len(cursor) > MaxLength {
		return Position{}, fmt.Errorf("%w: too long", ErrInvalid)
	}
	st := c.getScratch()
	defer c.putScratch(st)

	src := append(st.txt[:0], cursor...)
	st.txt = src
	raw, err := encoding.AppendDecode(st.raw[:0], src)
	st.raw = raw[:0]
	// The decoder skips CR and LF: a cursor has none.
	if err != nil || encoding.EncodedLen(len(raw)) != len(src) {
		return Position{}, fmt.Errorf("%w: not base64url", ErrInvalid)
	}
	if len(raw) == 0 {
		return Position{}, fmt.Errorf("%w: empty", ErrInvalid)
	}
	if raw[0] != version {
		return Position{}, fmt.Errorf("%w: unknown version %d", ErrInvalid, raw[0])
	}
	if len(raw) < overhead+padTo {
		return Position{}, fmt.Errorf("%w: truncated", ErrInvalid)
	}
	if (len(raw)-overhead)%padTo != 0 {
		return Position{}, fmt.Errorf("%w: truncated or lengthened", ErrInvalid)
	}
	nonce, sealed := raw[1:headerSize], raw[headerSize:]
	ad := appendAD(st.ad[:0], method, scope)
	st.ad = ad
	var pt []byte
	for _, k := range c.keys {
		if pt, err = k.Open(st.pt[:0], nonce, sealed, ad); err == nil {
			break
		}
	}
	if err != nil {
		return Position{}, fmt.Errorf("%w: altered, or not issued by this server for %s", ErrInvalid, method)
	}
	st.pt = pt[:0]
	return c.parse(pt)
}

// parse returns the position a decrypted plaintext records. Only a key
// holder makes plaintexts, but their layout is checked all the same.
func (c *Codec) parse(pt []byte) (Position, error) {
	flags, rest := pt[0], pt[1:]
	if flags&^flagExpiry != 0 {
		return Position{}, fmt.Errorf("%w: unknown flags %#x", ErrInvalid, flags)
	}
	if flags&flagExpiry != 0 {
		exp, n := varint(rest)
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
	srcLen, n := uvarint(rest)
	if n <= 0 {
		return Position{}, fmt.Errorf("%w: malformed position", ErrInvalid)
	}
	rest = rest[n:]
	keyLen, n := uvarint(rest)
	if n <= 0 || srcLen > uint64(len(rest)-n) || keyLen > uint64(len(rest)-n)-srcLen {
		return Position{}, fmt.Errorf("%w: malformed position", ErrInvalid)
	}
	rest = rest[n:]
	body, pad := rest[:srcLen+keyLen], rest[srcLen+keyLen:]
	if len(pad) != padding(len(pt)-len(pad)) {
		return Position{}, fmt.Errorf("%w: malformed padding", ErrInvalid)
	}
	for _, b := range pad {
		if b != 0 {
			return Position{}, fmt.Errorf("%w: malformed padding", ErrInvalid)
		}
	}
	s := string(body) // one allocation for both
	return Position{Source: s[:srcLen], Key: s[srcLen:]}, nil
}

// uvarint is binary.Uvarint refusing overlong encodings, so that a number
// has one spelling.
func uvarint(b []byte) (uint64, int) {
	v, n := binary.Uvarint(b)
	if n > 1 && b[n-1] == 0 {
		return 0, 0
	}
	return v, n
}

// varint is binary.Varint refusing overlong encodings.
func varint(b []byte) (int64, int) {
	v, n := binary.Varint(b)
	if n > 1 && b[n-1] == 0 {
		return 0, 0
	}
	return v, n
}
