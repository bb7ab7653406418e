// Package clientaddr carries a request's client address in its context,
// from the HTTP edge (package serve records it) to the registry (package
// resource names anonymous callers by it). The address is what the
// request itself carries, so it may travel in the context; neither
// package imports the other for it.
package clientaddr

import "context"

// key is the context key of the address.
type key struct{}

// With returns ctx carrying addr.
func With(ctx context.Context, addr string) context.Context {
	return context.WithValue(ctx, key{}, addr)
}

// From returns the address With recorded in ctx, or "" if there is none.
func From(ctx context.Context) string {
	addr, _ := ctx.Value(key{}).(string)
	return addr
}
