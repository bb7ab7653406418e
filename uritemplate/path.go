package uritemplate

import (
	"errors"
	"strings"
)

// ErrUnsafePath is wrapped by the error CheckPath returns.
var ErrUnsafePath = errors.New("unsafe path")

// CheckPath reports whether a decoded variable value is safe to join to a
// directory as a relative path: it returns an error wrapping ErrUnsafePath
// if v holds a NUL byte or a backslash, starts with '/', or has a ".."
// segment. "a/b.txt", "notes/.hidden" and "" pass; "../x", "a/../../x",
// "/etc/passwd", "a\\..\\x" and "a\x00b" do not.
//
// It looks at the text alone. Reading through os.Root is still needed to
// stop symbolic links that lead out of the directory.
func CheckPath(v string) error {
	switch {
	case strings.IndexByte(v, 0) >= 0:
		return errors.Join(ErrUnsafePath, errors.New("NUL byte"))
	case strings.IndexByte(v, '\\') >= 0:
		return errors.Join(ErrUnsafePath, errors.New("backslash"))
	case strings.HasPrefix(v, "/"):
		return errors.Join(ErrUnsafePath, errors.New("absolute path"))
	}
	for seg := range strings.SplitSeq(v, "/") {
		if seg == ".." {
			return errors.Join(ErrUnsafePath, errors.New(`".." segment`))
		}
	}
	return nil
}
