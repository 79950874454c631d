package policy

import (
	"strconv"
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/ext"

	"github.com/parapet-dev/parapet/rules/action"
)

// Limits on `when:` expressions. Policies are written by people, but a
// policy file is still untrusted input to the loader.
const (
	celMaxExpressionChars = 4096
	celMaxRecursion       = 64
	// celCostLimit bounds one evaluation; exceeding it is a runtime error,
	// which fails closed like any other.
	celCostLimit = 100_000
)

// celEnv is shared by every policy: building it is the expensive part.
var celEnv = sync.OnceValues(func() (*cel.Env, error) {
	strMap := cel.MapType(cel.StringType, cel.StringType)
	dynMap := cel.MapType(cel.StringType, cel.DynType)
	dynMaps := cel.ListType(dynMap)
	return cel.NewEnv(
		cel.CustomTypeAdapter(celAdapter{}),
		cel.Variable("action", dynMap),
		cel.Variable("args", dynMap),
		cel.Variable("caller", strMap),
		cel.Variable("paths", dynMaps),
		cel.Variable("commands", dynMaps),
		cel.Variable("urls", dynMaps),
		ext.Strings(),
		cel.OptionalTypes(),
		cel.CrossTypeNumericComparisons(true),
		cel.ParserExpressionSizeLimit(celMaxExpressionChars),
		cel.ParserRecursionLimit(celMaxRecursion),
		cel.Function("items",
			cel.Overload("items_dyn", []*cel.Type{cel.DynType}, cel.IntType,
				cel.UnaryBinding(celItems))),
	)
})

// celItems counts the entries of an argument that may be a list or a
// comma/semicolon separated string (e-mail recipients are sent both ways):
// a list's size, a string's non-empty parts, 0 for null, 1 otherwise.
func celItems(v ref.Val) ref.Val {
	switch x := v.(type) {
	case traits.Lister:
		return x.Size()
	case types.String:
		n := 0
		for _, part := range strings.FieldsFunc(string(x), func(r rune) bool { return r == ',' || r == ';' }) {
			if strings.TrimSpace(part) != "" {
				n++
			}
		}
		return types.Int(n)
	case types.Null:
		return types.Int(0)
	}
	return types.Int(1)
}

// celAdapter lets CEL read the decoded JSON tree in place, without a copy:
// action.Number becomes int or double on access, and nested maps and
// lists keep using this adapter.
type celAdapter struct{}

func (a celAdapter) NativeToValue(v any) ref.Val {
	switch x := v.(type) {
	case action.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return types.Int(n)
		}
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return types.NewErr("number %s is out of range", string(x))
		}
		return types.Double(f)
	case action.Object:
		return types.NewStringInterfaceMap(a, x.Map())
	case map[string]any:
		return types.NewStringInterfaceMap(a, x)
	case []any:
		return types.NewDynamicList(a, x)
	}
	return types.DefaultTypeAdapter.NativeToValue(v)
}
