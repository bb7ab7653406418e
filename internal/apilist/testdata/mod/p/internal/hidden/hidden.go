// Package hidden is internal: not listed.
package hidden

// Hidden is not listed.
func Hidden() {}
