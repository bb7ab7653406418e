package apilist

// This file turns one file's declarations into API lines, and writes
// types on one line with parameter names left out, so that renaming a
// parameter is not an API change.

import (
	"bytes"
	"go/ast"
	"go/printer"
	"go/token"
	"strings"
)

// fileLines returns the API lines of f's exported names, each begun
// with prefix.
func fileLines(f *ast.File, prefix string) []string {
	var lines []string
	add := func(format ...string) {
		lines = append(lines, prefix+strings.Join(format, ""))
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil {
				add("func ", d.Name.Name, typeParams(d.Type.TypeParams), signature(d.Type))
				continue
			}
			recv := d.Recv.List[0].Type
			if !ast.IsExported(baseName(recv)) {
				continue
			}
			add("method (", typeString(recv), ") ", d.Name.Name, signature(d.Type))
		case *ast.GenDecl:
			switch d.Tok {
			case token.CONST:
				constLines(d, add)
			case token.VAR:
				varLines(d, add)
			case token.TYPE:
				for _, s := range d.Specs {
					typeLines(s.(*ast.TypeSpec), add)
				}
			}
		}
	}
	return lines
}

// constLines adds a line for each exported constant of d. A spec without
// values repeats the type and values of the one before it. A value is
// shown unless it depends on iota.
func constLines(d *ast.GenDecl, add func(...string)) {
	var typ ast.Expr
	var values []ast.Expr
	for _, s := range d.Specs {
		vs := s.(*ast.ValueSpec)
		if vs.Type != nil || vs.Values != nil {
			typ, values = vs.Type, vs.Values
		}
		for i, n := range vs.Names {
			if !n.IsExported() {
				continue
			}
			line := "const " + n.Name
			if typ != nil {
				line += " " + typeString(typ)
			}
			if i < len(values) && !usesIota(values[i]) {
				line += " = " + exprString(values[i])
			}
			add(line)
		}
	}
}

// usesIota reports whether e names iota.
func usesIota(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name == "iota" {
			found = true
		}
		return !found
	})
	return found
}

// varLines adds a line for each exported variable of d.
func varLines(d *ast.GenDecl, add func(...string)) {
	for _, s := range d.Specs {
		vs := s.(*ast.ValueSpec)
		for i, n := range vs.Names {
			if !n.IsExported() {
				continue
			}
			switch {
			case vs.Type != nil:
				add("var ", n.Name, " ", typeString(vs.Type))
			case i < len(vs.Values) && len(vs.Values) == len(vs.Names):
				add("var ", n.Name, valueType(vs.Values[i]))
			default:
				add("var ", n.Name)
			}
		}
	}
}

// valueType returns the type of v as " T" where the syntax says it, or
// else " = v".
func valueType(v ast.Expr) string {
	switch v := v.(type) {
	case *ast.CompositeLit:
		if v.Type != nil {
			return " " + typeString(v.Type)
		}
	case *ast.UnaryExpr:
		if c, ok := v.X.(*ast.CompositeLit); ok && v.Op == token.AND && c.Type != nil {
			return " *" + typeString(c.Type)
		}
	case *ast.CallExpr:
		switch exprString(v.Fun) {
		case "errors.New", "fmt.Errorf":
			return " error"
		}
	}
	return " = " + exprString(v)
}

// typeLines adds the lines of the type s declares, if it is exported:
// one for the type, and for a struct or interface one for each exported
// field or method.
func typeLines(s *ast.TypeSpec, add func(...string)) {
	if !s.Name.IsExported() {
		return
	}
	name := "type " + s.Name.Name + typeParams(s.TypeParams)
	if s.Assign.IsValid() {
		add(name, " = ", typeString(s.Type))
		return
	}
	switch t := s.Type.(type) {
	case *ast.StructType:
		name += " struct"
		add(name)
		for _, f := range t.Fields.List {
			if len(f.Names) == 0 {
				if ast.IsExported(baseName(f.Type)) {
					add(name, ", embedded ", typeString(f.Type))
				}
				continue
			}
			for _, n := range f.Names {
				if n.IsExported() {
					add(name, ", ", n.Name, " ", typeString(f.Type))
				}
			}
		}
	case *ast.InterfaceType:
		name += " interface"
		add(name)
		for _, m := range t.Methods.List {
			switch {
			case len(m.Names) == 0:
				add(name, ", embedded ", typeString(m.Type))
			case !m.Names[0].IsExported():
				add(name, ", unexported methods")
			default:
				add(name, ", ", m.Names[0].Name, signature(m.Type.(*ast.FuncType)))
			}
		}
	default:
		add(name, " ", typeString(s.Type))
	}
}

// baseName returns the name of the type t is or points to, without
// package or type arguments.
func baseName(t ast.Expr) string {
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.ParenExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.SelectorExpr:
			return x.Sel.Name
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// typeParams returns a type parameter list as "[K comparable, V any]",
// or "" for none.
func typeParams(l *ast.FieldList) string {
	if l == nil || len(l.List) == 0 {
		return ""
	}
	var parts []string
	for _, f := range l.List {
		var names []string
		for _, n := range f.Names {
			names = append(names, n.Name)
		}
		parts = append(parts, strings.Join(names, ", ")+" "+typeString(f.Type))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// signature returns the parameters and results of t without their
// names: "(string, ...int) (T, error)".
func signature(t *ast.FuncType) string {
	s := "(" + strings.Join(fieldTypes(t.Params), ", ") + ")"
	results := fieldTypes(t.Results)
	switch len(results) {
	case 0:
	case 1:
		s += " " + results[0]
	default:
		s += " (" + strings.Join(results, ", ") + ")"
	}
	return s
}

// fieldTypes returns the type of each field of l, once for each name.
func fieldTypes(l *ast.FieldList) []string {
	if l == nil {
		return nil
	}
	var out []string
	for _, f := range l.List {
		t := typeString(f.Type)
		for range max(len(f.Names), 1) {
			out = append(out, t)
		}
	}
	return out
}

// typeString returns t on one line, with the names of function
// parameters and results left out.
func typeString(t ast.Expr) string {
	switch x := t.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return typeString(x.X) + "." + x.Sel.Name
	case *ast.StarExpr:
		return "*" + typeString(x.X)
	case *ast.ParenExpr:
		return "(" + typeString(x.X) + ")"
	case *ast.Ellipsis:
		return "..." + typeString(x.Elt)
	case *ast.ArrayType:
		if x.Len == nil {
			return "[]" + typeString(x.Elt)
		}
		return "[" + exprString(x.Len) + "]" + typeString(x.Elt)
	case *ast.MapType:
		return "map[" + typeString(x.Key) + "]" + typeString(x.Value)
	case *ast.ChanType:
		switch x.Dir {
		case ast.SEND:
			return "chan<- " + typeString(x.Value)
		case ast.RECV:
			return "<-chan " + typeString(x.Value)
		}
		return "chan " + typeString(x.Value)
	case *ast.FuncType:
		return "func" + signature(x)
	case *ast.IndexExpr:
		return typeString(x.X) + "[" + typeString(x.Index) + "]"
	case *ast.IndexListExpr:
		var args []string
		for _, a := range x.Indices {
			args = append(args, typeString(a))
		}
		return typeString(x.X) + "[" + strings.Join(args, ", ") + "]"
	case *ast.StructType:
		var fields []string
		for _, f := range x.Fields.List {
			ft := typeString(f.Type)
			if len(f.Names) == 0 {
				fields = append(fields, ft)
			}
			for _, n := range f.Names {
				fields = append(fields, n.Name+" "+ft)
			}
		}
		return braced("struct", fields)
	case *ast.InterfaceType:
		var methods []string
		for _, m := range x.Methods.List {
			if len(m.Names) == 0 {
				methods = append(methods, typeString(m.Type))
				continue
			}
			methods = append(methods, m.Names[0].Name+signature(m.Type.(*ast.FuncType)))
		}
		return braced("interface", methods)
	}
	return exprString(t) // a constraint such as ~int | ~string
}

// braced returns "struct{}" or "struct{ A int; B string }".
func braced(keyword string, items []string) string {
	if len(items) == 0 {
		return keyword + "{}"
	}
	return keyword + "{ " + strings.Join(items, "; ") + " }"
}

// exprString returns e as go/printer writes it, on one line.
func exprString(e ast.Expr) string {
	var b bytes.Buffer
	printer.Fprint(&b, token.NewFileSet(), e)
	if !bytes.ContainsRune(b.Bytes(), '\n') {
		return b.String()
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
