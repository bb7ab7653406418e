package resource

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"slices"
)

// A list cursor is opaque to clients. It records the key of the last entry
// of the page it follows (keyset, never an offset, so entries added or
// removed between pages neither shift nor repeat others) and the list it
// belongs to, so that a resources/list cursor is refused by
// resources/templates/list. It carries a truncated HMAC-SHA256 under a
// per-registry random key, so a forged or altered cursor is refused. The
// cursor package (issue [3]) will replace this encoding with versioned,
// rotatable, expiring keys.

const cursorVersion = '1'

// Cursor kinds: which list a cursor belongs to.
const (
	kindResources byte = 'r'
	kindTemplates byte = 't'
)

const macSize = 16

// cursorKey authenticates the cursors of one registry.
type cursorKey [32]byte

func newCursorKey() (k cursorKey) {
	rand.Read(k[:])
	return k
}

func (k *cursorKey) sum(payload []byte) []byte {
	m := hmac.New(sha256.New, k[:])
	m.Write(payload)
	return m.Sum(nil)[:macSize]
}

func (k *cursorKey) encode(kind byte, lastKey string) string {
	buf := make([]byte, 0, 2+len(lastKey)+macSize)
	buf = append(buf, kind, cursorVersion)
	buf = append(buf, lastKey...)
	buf = append(buf, k.sum(buf)...)
	return base64.RawURLEncoding.EncodeToString(buf)
}

// decode returns the key a cursor of the given kind continues after. The
// empty cursor means the start of the list.
func (k *cursorKey) decode(kind byte, cursor string) (after string, ok bool) {
	if cursor == "" {
		return "", true
	}
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(raw) < 2+macSize || raw[0] != kind || raw[1] != cursorVersion {
		return "", false
	}
	payload, mac := raw[:len(raw)-macSize], raw[len(raw)-macSize:]
	if !hmac.Equal(mac, k.sum(payload)) {
		return "", false
	}
	return string(payload[2:]), true
}

// pageOf returns the bounds of the page of sorted keys that follows the
// cursor, at most size long, and the cursor of the next page ("" at the
// end). It returns ok == false for a cursor that is not a valid cursor of
// this kind.
func (k *cursorKey) page(kind byte, sorted []string, cursor string, size int) (start, end int, next string, ok bool) {
	after, ok := k.decode(kind, cursor)
	if !ok {
		return 0, 0, "", false
	}
	if cursor != "" {
		i, found := slices.BinarySearch(sorted, after)
		if found {
			i++
		}
		start = i
	}
	end = min(start+size, len(sorted))
	if end < len(sorted) {
		next = k.encode(kind, sorted[end-1])
	}
	return start, end, next, true
}
