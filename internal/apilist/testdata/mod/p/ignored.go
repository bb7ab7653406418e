//go:build ignore

package p

// Ignored is in a file no build includes: not listed.
func Ignored() {}
