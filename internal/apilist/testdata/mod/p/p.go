// Package p declares one of every kind of exported name.
package p

import (
	"context"
	"errors"
	"io"
)

// Consts.
const (
	Untyped         = 100
	Typed      Kind = "k"
	unexported      = 1
)

// A Code is an enumeration.
type Code int

// Codes.
const (
	First Code = iota
	Second
)

// Vars.
var (
	ErrX     = errors.New("x")
	Default  = &Options{Size: 1}
	Plain    Options
	Computed = len("abc")
	private  = 1
)

// Kind is a string.
type Kind string

// Options is a struct.
type Options struct {
	Size    int
	Hook    func(ctx context.Context, name string) (n int, err error)
	Nested  struct{ A, B int }
	private int
	io.Reader
	embedded
}

type embedded struct{}

// Alias is an alias.
type Alias = Options

// Doer is an interface.
type Doer interface {
	io.Closer
	Do(ctx context.Context, args ...string) error
	done()
}

// Set is generic.
type Set[T comparable] struct{ m map[T]struct{} }

// Add is a method of a generic type.
func (s *Set[T]) Add(v T) {}

// New returns a Set.
func New[T comparable](vs ...T) *Set[T] { return nil }

// Run takes and returns several things.
func Run(a, b int, ch <-chan string, m map[string][]byte) (Kind, error) { return "", nil }

// Close is a method of an exported type.
func (o Options) Close() error { return nil }

func (embedded) Hidden() {}

func unexportedFunc() {}
