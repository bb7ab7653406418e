package serve

import (
	"testing"
)

// FuzzAppendJSONString: a URI is written in a notification as go-sdk's
// encoder writes it.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "docs://readme", "a?x=<b>&c", `q"uote\`, "é\u2028\x00\x7f", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("appendJSONString(%q) = %s, want x%s", s, got, want)
		}
	})
}
