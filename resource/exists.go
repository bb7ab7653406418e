package resource

import (
	"context"
	"errors"
)

// An ExistsFunc reports whether the instance of a template that vars
// names exists: the row with that id, the file at that path. It should
// cost less than a read: a key lookup, a stat. An error other than
// ErrNotFound (which means false) is a failure, logged, and answered
// with -32603. See WithExists.
type ExistsFunc = func(ctx context.Context, vars Vars) (bool, error)

// WithExists tells the registry how to tell whether an instance of the
// template exists, so that resources/subscribe (and a 2026-07-28 listen)
// refuses a URI the template matches but that names nothing, exactly as
// it refuses a URI no template matches: -32602 "no such resource". It is
// asked after the URI matched and the Authorizer allowed it, before the
// subscription is recorded; reads do not ask it (the read function
// answers ErrNotFound itself).
//
// A template without it accepts a subscription to every URI it matches
// (and the Authorizer allows): the registry cannot tell whether db://users/
// 12345 has a row without reading it. The subscriber then simply hears
// nothing until Changed is called for that URI.
//
// AddTemplate refuses a nil exists.
func WithExists(exists ExistsFunc) TemplateOption {
	return templateOption(func(e *entryConfig) error {
		if exists == nil {
			return errors.New("nil exists function")
		}
		e.exists = exists
		return nil
	})
}

// exists is the step of resources/subscribe that asks t's template, if it
// can tell, whether the instance t names exists: nil if it does (or the
// template cannot tell), not found if it does not.
func (r *Registry) exists(c *call, t target) error {
	if t.tmpl == nil || t.tmpl.exists == nil {
		return nil
	}
	ok, err := callUser("exists function", func() (bool, error) { return t.tmpl.exists(c.ctx, t.vars) })
	switch {
	case err != nil:
		return userError("resource exists check failed", err)
	case !ok:
		return errNotFound
	}
	return nil
}
