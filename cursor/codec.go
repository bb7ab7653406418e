// Package cursor implements opaque, encrypted, keyset pagination cursors,
// a sorted in-memory collection to page through, and Paginate, which walks
// any number of sorted sources (in-memory collections, database tables) as
// one ordered list. IntKey and TimeKey make keys that sort bytewise as
// numbers and times do, for providers that list database rows; LoadKeys
// reads the cursor keys replicas share from a file or the environment,
// and LoadCodec makes a Codec of them.
//
// A cursor records where a page ended: the source and the key of its last
// item. The next page continues after that key (keyset, never an offset),
// so items inserted or deleted between pages never shift others: a walk
// never skips or repeats an item that existed for all of it.
//
// A cursor is encrypted and authenticated with AES-256-GCM (format
// version 3), with a random nonce: it reveals nothing of the position it
// records (two cursors for one position differ) but, by its length, which
// bucket of 32 bytes the position's length falls in (see Codec.Encode),
// and which key made it, by an identifier derived from the key. It is
// bound to the list method it came from and, optionally, to a scope such
// as the caller's identity: a client cannot read one, forge one, alter
// one, or replay one against another method or scope. Every such cursor,
// as every cursor of another format version, decodes to an error
// matching ErrInvalid, and also, for the server's log, one saying why:
// ErrTampered, ErrUnknownKey, ErrOtherMethod, ErrOtherScope or
// ErrExpired. Keys can be rotated (see Options.Keys and LoadKeys).
//
// The package knows nothing of MCP.
package cursor

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// ErrInvalid is matched (errors.Is) by every error Decode returns: the
// cursor is malformed, truncated, altered, of another format version,
// made with an unknown key, expired, or issued for another method or
// scope. ErrTampered, ErrUnknownKey, ErrOtherMethod, ErrOtherScope and
// ErrExpired, which each wrap it, say which of the last five it is; a
// malformed cursor, or one of another format version, matches ErrInvalid
// only.
//
// Why a cursor was refused is for the server's log: a client is best
// told only that its cursor is invalid.
var ErrInvalid = errors.New("invalid cursor")

// The reasons Decode gives for refusing a well-formed cursor of the
// current format version. Each wraps ErrInvalid. A reason is a diagnosis,
// not a proof: a cursor altered in its key identifier, for one, reads as
// made with an unknown key.
var (
	// ErrTampered means the cursor names one of the codec's keys but
	// fails authentication under it: it was altered, or corrupted, after
	// it was issued (or forged).
	ErrTampered = fmt.Errorf("%w: tampered with", ErrInvalid)
	// ErrUnknownKey means the cursor was made with a key the codec does
	// not hold: by another server, or with a key since dropped from
	// Options.Keys (rotated out too early, or a replica configured with
	// other keys).
	ErrUnknownKey = fmt.Errorf("%w: made with an unknown key", ErrInvalid)
	// ErrOtherMethod means the cursor was issued for another list method
	// than the one it was sent to.
	ErrOtherMethod = fmt.Errorf("%w: issued for another method", ErrInvalid)
	// ErrOtherScope means the cursor was issued for the same method but
	// another scope, such as another caller.
	ErrOtherScope = fmt.Errorf("%w: issued for another scope", ErrInvalid)
	// ErrExpired means the cursor's time to live (Options.TTL) is over.
	ErrExpired = fmt.Errorf("%w: expired", ErrInvalid)
)

// MinKeyLength is the shortest key NewCodec accepts, in bytes.
const MinKeyLength = 16

// MaxLength is the longest cursor Decode looks at, in bytes; longer ones
// are invalid at once.
const MaxLength = 8 << 10

// A cursor (format version 3) is the unpadded base64url encoding of
//
//	version (1 byte, 3) | key id (idSize bytes) | nonce (nonceSize bytes, random)
//	| AES-256-GCM ciphertext of the plaintext, with its tag (tagSize bytes)
//
// where the plaintext is
//
//	flags (1 byte)
//	| expiry (signed varint, Unix milliseconds; if flags&flagExpiry)
//	| binding (bindingSize bytes) | method tag (methodTagSize bytes)
//	| len(Source) (uvarint) | len(Key) (uvarint) | Source | Key
//	| zero bytes, fewest that make the plaintext a multiple of padTo bytes
//
// and the additional data the tag covers is version | key id, so that the
// clear header cannot be altered either.
//
// The AES key is derived from a configured key with HKDF-SHA256 (no salt,
// info keyInfo), so that keys of any length work; the key id is the first
// idSize bytes of another HKDF-SHA256 output (info keyIDInfo), which
// tells Decode which key to try and reveals nothing of the key.
//
// The binding is the first bindingSize bytes of
//
//	SHA-256(bindingInfo | len(method) (uvarint) | method | len(scope) (uvarint) | scope)
//
// each length-prefixed so that no two bindings share an input: Decode
// accepts a cursor only if its binding is that of the method and scope it
// is given, a 128-bit check inside the authenticated plaintext. The
// method tag, the first methodTagSize bytes of SHA-256(methodInfo |
// method), only tells, when the binding differs, whether the method does
// (ErrOtherMethod) or only the scope (ErrOtherScope). Binding the cursor
// in the plaintext rather than in GCM's additional data is what lets
// Decode tell these apart from a cursor tampered with: the tag then fails
// only for the latter.
//
// Varints are minimal and the padding is checked, so that a plaintext has
// one spelling; with the strict base64, so has a cursor for a given nonce.
const (
	version       = 3
	idSize        = 4  // the key id
	nonceSize     = 12 // GCM's standard nonce: 96 random bits
	tagSize       = 16 // GCM's full tag
	nonceAt       = 1 + idSize
	headerSize    = nonceAt + nonceSize // version | key id | nonce
	overhead      = headerSize + tagSize
	adSize        = 1 + idSize // the additional data: version | key id
	bindingSize   = 16
	methodTagSize = 4
	padTo         = 32 // plaintexts are a multiple of this: the length bucket
	flagExpiry    = 1
	keyInfo       = "mcpres cursor v3"
	keyIDInfo     = "mcpres cursor v3 key id"
	bindingInfo   = "mcpres cursor v3 binding\x00"
	methodInfo    = "mcpres cursor v3 method\x00"
)

// A Position is where a page ended: the name of the source its last item
// came from and that item's key.
type Position struct {
	Source string
	Key    string
}

// Options configures a Codec.
type Options struct {
	// Keys encrypt and decrypt cursors (AES-256-GCM): the first encrypts;
	// Decode uses the one that made the cursor, which the cursor names
	// by an identifier derived from the key. A key is thus rotated in by
	// putting it first and out by dropping it once its cursors no longer
	// matter (see LoadKeys). Each must be at least MinKeyLength bytes: an
	// AES-256 key is derived from each with HKDF-SHA256, which does not
	// make a guessable key strong, so use random bytes (32 are best).
	// Empty means one random key made by NewCodec: cursors then stay
	// valid for the life of the Codec only, which is enough for a single
	// server process.
	Keys [][]byte
	// TTL, if positive, is how long a cursor stays valid after it is
	// issued (rounded up to the millisecond). A Codec with a TTL refuses
	// cursors issued without one.
	TTL time.Duration
	// Now returns the current time; nil means time.Now. Tests set it.
	Now func() time.Time
}

// A Codec turns positions into opaque cursors and back. Make one with
// NewCodec. It is safe for concurrent use.
type Codec struct {
	keys    []codecKey // one per configured key, in order
	ttl     time.Duration
	now     func() time.Time
	scratch sync.Pool // *scratch
	tags    sync.Map  // method → [methodTagSize]byte, see methodTag
	ntags   atomic.Int32
}

// A codecKey is a configured key, ready for use.
type codecKey struct {
	id   [idSize]byte
	aead cipher.AEAD // AES-256-GCM
}

// A scratch holds the buffers one Encode or Decode works in, so that
// neither allocates but its result. (The AEAD is an interface: whatever
// is passed to it escapes, so stack buffers would not do.)
type scratch struct {
	ad  [adSize]byte // additional data: version and key id
	h   []byte       // input to the binding's or method tag's hash
	pt  []byte       // plaintext
	raw []byte       // version | key id | nonce | ciphertext and tag
	txt []byte       // the cursor
}

// maxPooledBuf bounds the buffers a pooled scratch keeps.
const maxPooledBuf = 1 << 10

func (c *Codec) getScratch() *scratch {
	if st, ok := c.scratch.Get().(*scratch); ok {
		return st
	}
	return &scratch{
		h:   make([]byte, 0, 128),
		pt:  make([]byte, 0, 4*padTo),
		raw: make([]byte, 0, overhead+4*padTo),
		txt: make([]byte, 0, 256),
	}
}

func (c *Codec) putScratch(st *scratch) {
	for _, b := range [...]*[]byte{&st.h, &st.pt, &st.raw, &st.txt} {
		if cap(*b) > maxPooledBuf {
			*b = nil
		}
	}
	c.scratch.Put(st)
}

// makeKey returns AES-256-GCM under the key derived from key, with its id.
func makeKey(key []byte) (codecKey, error) {
	id, err := hkdf.Key(sha256.New, key, nil, keyIDInfo, idSize)
	if err != nil {
		return codecKey{}, err
	}
	k, err := hkdf.Key(sha256.New, key, nil, keyInfo, 32)
	if err != nil {
		return codecKey{}, err
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return codecKey{}, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return codecKey{}, err
	}
	return codecKey{id: [idSize]byte(id), aead: aead}, nil
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
		ck, err := makeKey(k) // k itself is not kept: the caller may reuse it
		if err != nil {
			return nil, fmt.Errorf("cursor: key %d: %v", i, err)
		}
		c.keys = append(c.keys, ck)
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
// in, not the length itself nor how it splits between Source and Key. A
// cursor is 87 characters for up to 9 bytes (3 with a TTL, whose expiry
// takes 6 bytes until 2039), 130 for up to 41 (35), 172 for up to 73
// (67), 215 for up to 105 (99): in general ⌈(132+128k)/3⌉ characters for
// up to 32k−23 bytes (32k−29), about 43 characters more for each 32 bytes
// more. (A Source or Key of 128 bytes or more moves the boundaries by a
// byte, for its longer length prefix.) Of a cursor's bytes, 33 are its
// version, key id, nonce and tag, and 23 of its plaintext are taken by
// flags, binding to method and scope, and lengths.
//
// Encode never fails, but Decode refuses a cursor longer than MaxLength:
// Source and Key together must stay under about 6,000 bytes. Up to 6,045
// always fit: MaxLength*3/4 bytes, less 33 of version, key id, nonce and
// tag, rounded down to a multiple of 32, less at most 35 of flags,
// expiry, binding, method tag and lengths.
func (c *Codec) Encode(method, scope string, p Position) string {
	return c.encode(method, scope, p, nil)
}

// encode is Encode with the given nonce; nil means a random one. Only
// tests give one.
func (c *Codec) encode(method, scope string, p Position, nonce []byte) string {
	st := c.getScratch()
	defer c.putScratch(st)
	k := &c.keys[0]

	// The most the plaintext (and so the cursor) takes: grow the buffers
	// once, if at all.
	n := 1 + 3*binary.MaxVarintLen64 + bindingSize + methodTagSize + len(p.Source) + len(p.Key)
	n += padding(n)
	pt := append(slices.Grow(st.pt[:0], n), 0)
	if c.ttl > 0 {
		pt[0] |= flagExpiry
		pt = binary.AppendVarint(pt, expiry(c.now(), c.ttl))
	}
	b := st.binding(method, scope)
	pt = append(pt, b[:]...)
	t := c.methodTag(st, method)
	pt = append(pt, t[:]...)
	pt = binary.AppendUvarint(pt, uint64(len(p.Source)))
	pt = binary.AppendUvarint(pt, uint64(len(p.Key)))
	pt = append(pt, p.Source...)
	pt = append(pt, p.Key...)
	pt = append(pt, zeros[:padding(len(pt))]...)
	st.pt = pt

	raw := append(slices.Grow(st.raw[:0], overhead+n), version)
	raw = append(raw, k.id[:]...)
	raw = append(raw, zeros[:nonceSize]...)
	if nonce == nil {
		rand.Read(raw[nonceAt:headerSize])
	} else {
		copy(raw[nonceAt:headerSize], nonce)
	}
	copy(st.ad[:], raw) // apart from raw, as Seal asks
	raw = k.aead.Seal(raw, raw[nonceAt:headerSize], pt, st.ad[:])
	st.raw = raw

	st.txt = encoding.AppendEncode(slices.Grow(st.txt[:0], encoding.EncodedLen(overhead+n)), raw)
	return string(st.txt)
}

// zeros pads plaintexts.
var zeros [padTo]byte

// padding returns how many zero bytes pad a plaintext of n bytes: the
// fewest that make it a multiple of padTo.
func padding(n int) int { return (padTo - n%padTo) % padTo }

// binding returns the binding of a cursor to method and scope.
func (st *scratch) binding(method, scope string) [bindingSize]byte {
	h := append(st.h[:0], bindingInfo...)
	h = binary.AppendUvarint(h, uint64(len(method)))
	h = append(h, method...)
	h = binary.AppendUvarint(h, uint64(len(scope)))
	h = append(h, scope...)
	st.h = h
	sum := sha256.Sum256(h)
	return [bindingSize]byte(sum[:])
}

// maxCachedTags bounds the method tags a Codec keeps: a server lists
// under a handful of methods.
const maxCachedTags = 16

// methodTag returns the method tag of a cursor for method, computed once
// for each of the first maxCachedTags methods: it depends on the method
// alone, and a list page would otherwise pay a SHA-256 sum for it.
func (c *Codec) methodTag(st *scratch, method string) [methodTagSize]byte {
	if t, ok := c.tags.Load(method); ok {
		return t.([methodTagSize]byte)
	}
	t := st.methodTag(method)
	if c.ntags.Add(1) <= maxCachedTags {
		c.tags.Store(method, t)
	}
	return t
}

// methodTag computes the method tag of a cursor for method.
func (st *scratch) methodTag(method string) [methodTagSize]byte {
	h := append(st.h[:0], methodInfo...)
	h = append(h, method...)
	st.h = h
	sum := sha256.Sum256(h)
	return [methodTagSize]byte(sum[:])
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

// Decode returns the position a cursor records. For any cursor that
// Encode did not produce with one of the Codec's keys, method and scope,
// or that has expired, it returns the zero Position and an error matching
// ErrInvalid, saying why. The error also matches
//
//   - ErrUnknownKey if the cursor names none of the Codec's keys;
//   - ErrTampered if it names one but fails authentication under it;
//   - ErrOtherMethod if it was issued for another method;
//   - ErrOtherScope if it was issued for this method but another scope;
//   - ErrExpired if its TTL is over (it was issued for this method and
//     scope).
//
// A cursor that is too long (see MaxLength), not unpadded base64url,
// empty, truncated or of another format version (such as versions 1 and
// 2, which earlier releases issued) matches ErrInvalid only, as does one
// without an expiry given to a Codec with a TTL (issued by a Codec with
// the same key but no TTL): it would never expire.
//
// Only the keys whose identifier the cursor holds are tried (two keys may
// share one by chance), so that rotation costs no more than one key.
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
	id, nonce, sealed := [idSize]byte(raw[1:nonceAt]), raw[nonceAt:headerSize], raw[headerSize:]
	copy(st.ad[:], raw)
	var pt []byte
	known, opened := false, false
	for i := range c.keys {
		k := &c.keys[i]
		if k.id != id {
			continue
		}
		known = true
		if pt, err = k.aead.Open(st.pt[:0], nonce, sealed, st.ad[:]); err == nil {
			opened = true
			break
		}
	}
	switch {
	case !known:
		return Position{}, fmt.Errorf("%w (key id %x): not issued by this server, or with a key it no longer holds", ErrUnknownKey, id)
	case !opened:
		return Position{}, fmt.Errorf("%w: fails authentication under key id %x", ErrTampered, id)
	}
	st.pt = pt[:0]
	return c.parse(st, pt, method, scope)
}

// parse returns the position a decrypted plaintext records, if it is
// bound to method and scope and has not expired. Only a key holder makes
// plaintexts, but their layout is checked all the same.
func (c *Codec) parse(st *scratch, pt []byte, method, scope string) (Position, error) {
	flags, rest := pt[0], pt[1:]
	if flags&^flagExpiry != 0 {
		return Position{}, fmt.Errorf("%w: unknown flags %#x", ErrInvalid, flags)
	}
	var exp int64
	if flags&flagExpiry != 0 {
		var n int
		if exp, n = varint(rest); n <= 0 {
			return Position{}, fmt.Errorf("%w: malformed expiry", ErrInvalid)
		}
		rest = rest[n:]
	}
	if len(rest) < bindingSize+methodTagSize { // not after a varint of at most 10 bytes, in 32
		return Position{}, fmt.Errorf("%w: malformed binding", ErrInvalid)
	}
	bind, tag, rest := rest[:bindingSize], rest[bindingSize:bindingSize+methodTagSize], rest[bindingSize+methodTagSize:]
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

	// Well formed: is it this request's, and still good?
	if want := st.binding(method, scope); subtle.ConstantTimeCompare(bind, want[:]) != 1 {
		if t := c.methodTag(st, method); !bytes.Equal(tag, t[:]) {
			return Position{}, fmt.Errorf("%w: not issued by this server for %s", ErrOtherMethod, method)
		}
		return Position{}, fmt.Errorf("%w: not issued by this server for this scope of %s", ErrOtherScope, method)
	}
	if flags&flagExpiry != 0 {
		if c.now().UnixMilli() >= exp {
			return Position{}, fmt.Errorf("%w at %s", ErrExpired, time.UnixMilli(exp).UTC().Format(time.RFC3339Nano))
		}
	} else if c.ttl > 0 {
		return Position{}, fmt.Errorf("%w: no expiry, but the codec has a TTL", ErrInvalid)
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
