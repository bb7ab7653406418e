package cursor

import (
	"fmt"
	"math"
	"time"
)

// IntKeyLength is the length of every key IntKey returns.
const IntKeyLength = 16

// TimeKeyLength is the length of every key TimeKey returns.
const TimeKeyLength = 24

// IntKey returns a key for n that sorts bytewise as n sorts numerically,
// negative numbers included: IntKey(a) < IntKey(b) exactly when a < b. A
// provider that lists rows by an integer id keys each row by IntKey(id)
// (decimal text does not sort so: "10" < "9"), and turns the after it is
// given back into an id with ParseIntKey.
//
// The key is IntKeyLength lowercase hexadecimal digits, those of n with
// its sign bit flipped. Being of fixed length, it can end or begin a
// longer key that sorts as the pair of its parts: see TimeKey.
func IntKey(n int64) string {
	var b [IntKeyLength]byte
	putHex(b[:], uint64(n)^1<<63)
	return string(b[:])
}

// ParseIntKey returns the number IntKey made key from.
//
// For "", the after of a list's first page, it returns math.MinInt64 and
// no error, so that a query for the ids after it (WHERE id > $after)
// lists from the first row. The one id this leaves out is math.MinInt64
// itself: do not use it as an id.
//
// For any other string that IntKey does not return, it returns 0 and an
// error.
func ParseIntKey(key string) (int64, error) {
	if key == "" {
		return math.MinInt64, nil
	}
	u, ok := parseHex(key, IntKeyLength)
	if !ok {
		return 0, fmt.Errorf("cursor: %q is not an IntKey: want %d lowercase hexadecimal digits", trim(key), IntKeyLength)
	}
	return int64(u ^ 1<<63), nil
}

// unixToInternal is the number of seconds from January 1, year 1 to
// January 1, 1970, UTC: what time.Time counts from, and Unix time.
const unixToInternal = 62_135_596_800

// TimeKey returns a key for t that sorts bytewise as times sort by
// instant, whatever their location or monotonic clock reading:
// TimeKey(a) < TimeKey(b) exactly when a.Before(b). It covers every time
// a time.Time can hold, from some 292 billion years before year 1 to as
// many after; ParseTimeKey turns it back into the time.
//
// The key is TimeKeyLength lowercase hexadecimal digits: 16 of the
// seconds since January 1, year 1, UTC (with the sign bit flipped, as
// IntKey's), then 8 of the nanoseconds within the second. Being of fixed
// length, it can begin a longer key that sorts as the pair of its parts.
// Rows listed by a timestamp that several may share are listed by the
// pair of it and a unique id: key each row by TimeKey(created)+IntKey(id)
// and, with t and id parsed from after's two parts (see ExampleTimeKey),
// query
//
//	SELECT … FROM t WHERE (created, id) > ($t, $id) ORDER BY created, id LIMIT $limit
//
// A database column may hold times at finer precision than nanoseconds,
// or coarser: keys sort as the times Go reads from it.
func TimeKey(t time.Time) string {
	var b [TimeKeyLength]byte
	// Seconds since year 1, which a time.Time holds as an int64: the
	// sum wraps around as the conversion in Unix did, exactly.
	putHex(b[:16], (uint64(t.Unix())+unixToInternal)^1<<63)
	putHex(b[16:], uint64(t.Nanosecond()))
	return string(b[:])
}

// ParseTimeKey returns the time TimeKey made key from, in UTC.
//
// For "", the after of a list's first page, it returns the zero Time,
// January 1, year 1, 00:00:00 UTC, and no error, so that a query for the
// times after it lists from the first row of a table with no time that
// early. (Earlier times, which TimeKey keys all the same, would be left
// out of a first page. The earliest time a time.Time holds is not used:
// some 292 billion years before year 1, databases refuse it, and it
// formats as a year far in the future, which a driver sending times as
// text would compare as such.)
//
// For any other string that TimeKey does not return, it returns the zero
// Time and an error.
func ParseTimeKey(key string) (time.Time, error) {
	if key == "" {
		return time.Time{}, nil
	}
	sec, ok1 := parseHex(key[:min(16, len(key))], 16)
	nsec, ok2 := parseHex(key[min(16, len(key)):], 8)
	if !ok1 || !ok2 || nsec >= 1e9 {
		return time.Time{}, fmt.Errorf("cursor: %q is not a TimeKey: want %d lowercase hexadecimal digits, the last 8 under 3b9aca00", trim(key), TimeKeyLength)
	}
	// time.Unix adds unixToInternal back, wrapping around as this
	// subtraction does.
	return time.Unix(int64(sec^1<<63-unixToInternal), int64(nsec)).UTC(), nil
}

const hexDigits = "0123456789abcdef"

// putHex writes u into dst as len(dst) hexadecimal digits, the last
// ones of u.
func putHex(dst []byte, u uint64) {
	for i := len(dst) - 1; i >= 0; i-- {
		dst[i] = hexDigits[u&0xf]
		u >>= 4
	}
}

// parseHex returns the number s spells in n lowercase hexadecimal
// digits (n at most 16), and whether it does.
func parseHex(s string, n int) (uint64, bool) {
	if len(s) != n {
		return 0, false
	}
	var u uint64
	for i := range len(s) {
		var d byte
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		default:
			return 0, false
		}
		u = u<<4 | uint64(d)
	}
	return u, true
}
