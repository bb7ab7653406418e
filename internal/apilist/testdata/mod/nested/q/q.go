// Package q is in a nested module.
package q

// Q is listed under the nested module's path.
type Q int
