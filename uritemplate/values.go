package uritemplate

// Kind says what a matched Value holds.
type Kind uint8

const (
	// String is a single value.
	String Kind = iota
	// List is a list of values. Expand takes one for any variable;
	// Match gives one only for an exploded variable ({x*}, {/x*}, …):
	// a variable not exploded matches scalars only (see the package doc,
	// Lists and scalars).
	List
	// Pairs is an associative array, flattened as key, value, key,
	// value, ... Match gives one only for an exploded variable.
	Pairs
)

func (k Kind) String() string {
	switch k {
	case String:
		return "String"
	case List:
		return "List"
	case Pairs:
		return "Pairs"
	}
	return "Kind(?)"
}

// A Value is one variable's value, as given to Expand or taken from a
// match.
type Value struct {
	Kind  Kind
	Items []string // String: exactly one; List: the items; Pairs: key, value, ...
}

// StringValue returns the String Value s.
func StringValue(s string) Value { return Value{Kind: String, Items: []string{s}} }

// ListValue returns the List Value of items.
func ListValue(items ...string) Value { return Value{Kind: List, Items: items} }

// PairsValue returns the Pairs Value of kv, flattened key, value, ...
func PairsValue(kv ...string) Value { return Value{Kind: Pairs, Items: kv} }

// Values are the variables a URI bound when it matched a template. A
// variable the URI left undefined (an absent query parameter, say) is
// absent. The zero Values holds nothing.
type Values struct {
	t    *Template
	vals []Value // parallel to t.names; Items == nil means unbound
}

// Template returns the template that was matched, or nil for the zero
// Values.
func (v Values) Template() *Template { return v.t }

// Lookup returns the named variable's value and whether the URI bound it.
// A variable the template never explodes is always a String, or unbound:
// a URI that would give it a list ("red,blue" for {team}) does not match.
// Only an exploded variable may be a List or Pairs.
func (v Values) Lookup(name string) (Value, bool) {
	if v.t == nil {
		return Value{}, false
	}
	for i, n := range v.t.names {
		if n == name {
			val := v.vals[i]
			return val, val.Items != nil
		}
	}
	return Value{}, false
}

// Get returns the named variable's value if it is a String, and "" if it
// is unbound, a List or Pairs. A variable the template never explodes is
// always a String or unbound, so Get gives its whole value: a URI with
// two values for it ("red,blue" for {team}) does not match at all.
func (v Values) Get(name string) string {
	if val, ok := v.Lookup(name); ok && val.Kind == String {
		return val.Items[0]
	}
	return ""
}

// List returns the named variable's items: a String as a list of one, a
// List's items, Pairs' flattened keys and values; nil if it is unbound. A
// variable the template never explodes is always a String or unbound: List
// gives it as one item, never split on ','.
func (v Values) List(name string) []string {
	val, _ := v.Lookup(name)
	return val.Items
}

// Has reports whether the URI bound the named variable.
func (v Values) Has(name string) bool {
	_, ok := v.Lookup(name)
	return ok
}

// Len returns the number of variables the URI bound.
func (v Values) Len() int {
	n := 0
	for _, val := range v.vals {
		if val.Items != nil {
			n++
		}
	}
	return n
}

// Map returns the bound variables as a map, as Expand takes them.
func (v Values) Map() map[string]Value {
	m := make(map[string]Value, len(v.vals))
	for i, val := range v.vals {
		if val.Items != nil {
			m[v.t.names[i]] = val
		}
	}
	return m
}
