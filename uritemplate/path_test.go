package uritemplate_test

import (
	"errors"
	"testing"

	"github.com/mcpres/mcpres/uritemplate"
)

func TestCheckPath(t *testing.T) {
	for _, ok := range []string{"", "a", "a/b.txt", "notes/.hidden", "..hidden", "a..b/c", "a/b/", "~/x"} {
		if err := uritemplate.CheckPath(ok); err != nil {
			t.Errorf("CheckPath(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"..", "../x", "a/..", "a/../../x", "/etc/passwd", "/", "a\\..\\x", "a\\b", "a\x00b", "a//../b"} {
		if err := uritemplate.CheckPath(bad); !errors.Is(err, uritemplate.ErrUnsafePath) {
			t.Errorf("CheckPath(%q) = %v, want ErrUnsafePath", bad, err)
		}
	}
}
