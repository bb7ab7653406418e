package pgbus

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A message cut into chunks joins back whole, whatever its characters,
// and every chunk fits a NOTIFY payload.
func TestChunkJoin(t *testing.T) {
	t.Parallel()
	for _, msg := range []string{
		strings.Repeat("a", MaxPayload+1),
		strings.Repeat("é", 20_000),
		strings.Repeat("x€😀", 30_000),
	} {
		chunks := chunk("abc", 7, []byte(msg))
		require.Greater(t, len(chunks), 1)
		var j joiner
		var got []byte
		for k, c := range chunks {
			assert.LessOrEqual(t, len(c), MaxPayload)
			h, part, err := parseChunk(c)
			require.NoError(t, err)
			assert.Equal(t, chunkHeader{from: "abc", seq: 7, i: k + 1, n: len(chunks)}, h)
			got, err = j.add(h, part)
			require.NoError(t, err)
			if k < len(chunks)-1 {
				assert.Nil(t, got)
			}
		}
		assert.Equal(t, msg, string(got))
		assert.Empty(t, j.partial, "nothing left behind")
	}
}

// Chunks of several messages may interleave; a missing or repeated part
// drops its message, and unfinished ones are bounded.
func TestJoinerBounds(t *testing.T) {
	t.Parallel()
	a := chunk("a", 1, bytes.Repeat([]byte("a"), 3*MaxPayload))
	b := chunk("b", 1, bytes.Repeat([]byte("b"), 3*MaxPayload))
	var j joiner
	add := func(c []byte) ([]byte, error) {
		h, part, err := parseChunk(c)
		require.NoError(t, err)
		return j.add(h, part)
	}
	for k := range a {
		ma, err := add(a[k])
		require.NoError(t, err)
		mb, err := add(b[k])
		require.NoError(t, err)
		if k == len(a)-1 {
			assert.Len(t, ma, 3*MaxPayload)
			assert.Len(t, mb, 3*MaxPayload)
		}
	}
	_, err := add(a[1])
	assert.Error(t, err, "a part without its first")
	_, err = add(a[0])
	require.NoError(t, err)
	_, err = add(a[0])
	assert.Error(t, err, "a repeated part drops the message")
	assert.Empty(t, j.partial)
	for seq := range 20 {
		_, err := add(chunk("c", uint64(seq), bytes.Repeat([]byte("c"), 2*MaxPayload))[0])
		require.NoError(t, err)
	}
	assert.Len(t, j.partial, maxPartial)

	for _, bad := range []string{"#", "#a:1:1/2", "#a:x:1/2:", "#a:1:0/2:", "#a:1:3/2:", "#a:1:1/1:", "#a:1:1/999999:", "{}"} {
		_, _, err := parseChunk([]byte(bad))
		assert.Error(t, err, bad)
	}
}

// FuzzPayload feeds payloads to a listener's parsing: it never panics,
// and holds what it keeps within bounds.
func FuzzPayload(f *testing.F) {
	f.Add([]byte(`{"changes":[{"uri":"x://a"}]}`))
	f.Add([]byte("#a:1:1/2:{\"chan"))
	f.Add([]byte("#a:1:2/2:ges\":[]}"))
	f.Add([]byte("#a:1:1/3:"))
	var j joiner
	f.Fuzz(func(t *testing.T, p []byte) {
		if h, part, err := parseChunk(p); err == nil {
			j.add(h, part)
		}
		if len(j.partial) > maxPartial {
			t.Fatalf("%d unfinished messages held", len(j.partial))
		}
		for _, m := range j.partial {
			if m.size > maxChunked {
				t.Fatalf("%d bytes held for one message", m.size)
			}
		}
	})
}
