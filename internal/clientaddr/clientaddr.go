// Package clientaddr carries a request's client address in its context,
// from the HTTP edge (package serve records it) to the registry (package
// resource names anonymous callers by it). The address is what the
// request itself carries, so it may travel in the context; neither
// package imports the other for it.
package clientaddr

import "context"

// key is the context key of an Address.
type key struct{}

// An Address is where a request came from: the client's address, and the
// network it is counted in, by which anonymous callers are told apart.
type Address struct {
	Client  string // the client's address, such as "192.0.2.7"
	Network string // its network, such as "192.0.2.0/24"; Client if not grouped
}

// With returns ctx carrying a.
func With(ctx context.Context, a Address) context.Context {
	return context.WithValue(ctx, key{}, a)
}

// From returns the Address With recorded in ctx, or the zero Address.
func From(ctx context.Context) Address {
	a, _ := ctx.Value(key{}).(Address)
	return a
}
