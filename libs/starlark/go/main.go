//go:build js && wasm

// Command starlark is the Starlark interpreter of the platform, built to WebAssembly
// (GOOS=js GOARCH=wasm) by scripts/build-starlark.ts and run by libs/starlark in a worker thread.
//
// It exposes two synchronous functions on globalThis and then blocks forever:
//
//	starlarkCheck(source, filename, maxSteps) -> JSON {ok, value: {functions: [{name, params}]}} | {ok: false, error}
//	starlarkCall(source, filename, function, argsJson, maxSteps) -> JSON {ok, value: "<json text>"} | {ok: false, error}
//
// Hermetic by construction: the only predeclared names are Starlark's universe (no I/O, no
// clock, no randomness) plus `json` (encode, decode, indent). `load` has no loader, so it fails;
// `print` output is dropped. `while` and recursion stay disabled (the resolver's defaults), and
// every call runs on a fresh thread with a step limit, so a runaway loop stops inside the
// interpreter; the host's wall-time limit (it terminates the worker) covers the rest.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"syscall/js"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkjson"
	"go.starlark.net/syntax"
)

// failure is the error shape the TypeScript side reads (libs/starlark/src/starlark-error.ts).
type failure struct {
	Kind      string `json:"kind"`
	Message   string `json:"message"`
	Line      int32  `json:"line,omitempty"`
	Column    int32  `json:"column,omitempty"`
	Backtrace string `json:"backtrace,omitempty"`
}

type outcome struct {
	Ok    bool        `json:"ok"`
	Value interface{} `json:"value,omitempty"`
	Error *failure    `json:"error,omitempty"`
}

type function struct {
	Name   string `json:"name"`
	Params int    `json:"params"`
}

var predeclared = starlark.StringDict{"json": starlarkjson.Module}

func main() {
	// Stated rather than left to the library's defaults, so that a new default cannot loosen the
	// sandbox silently: no while loops or recursion, no top-level reassignment; sets are harmless.
	resolve.AllowRecursion = false
	resolve.AllowGlobalReassign = false
	resolve.AllowSet = true
	js.Global().Set("starlarkCheck", js.FuncOf(func(this js.Value, args []js.Value) interface{} {
		return encode(check(args[0].String(), args[1].String(), uint64(args[2].Int())))
	}))
	js.Global().Set("starlarkCall", js.FuncOf(func(this js.Value, args []js.Value) interface{} {
		return encode(call(args[0].String(), args[1].String(), args[2].String(), args[3].String(), uint64(args[4].Int())))
	}))
	js.Global().Call("starlarkReady")
	select {}
}

func newThread(maxSteps uint64) *starlark.Thread {
	thread := &starlark.Thread{Name: "skill", Print: func(*starlark.Thread, string) {}}
	thread.SetMaxExecutionSteps(maxSteps)
	return thread
}

// check runs the module's top level and lists its top-level functions.
func check(source, filename string, maxSteps uint64) outcome {
	thread := newThread(maxSteps)
	globals, err := starlark.ExecFile(thread, filename, source, predeclared)
	if err != nil {
		return fail(thread, maxSteps, err)
	}
	functions := []function{}
	for name, value := range globals {
		if fn, ok := value.(*starlark.Function); ok {
			params := fn.NumParams()
			if fn.HasVarargs() || fn.HasKwargs() {
				params = -1
			}
			functions = append(functions, function{Name: name, Params: params})
		}
	}
	sort.Slice(functions, func(i, j int) bool { return functions[i].Name < functions[j].Name })
	return outcome{Ok: true, Value: map[string]interface{}{"functions": functions}}
}

// call runs the module, then `fn(json.decode(argsJSON))`, and returns json.encode of the result.
func call(source, filename, fn, argsJSON string, maxSteps uint64) outcome {
	thread := newThread(maxSteps)
	globals, err := starlark.ExecFile(thread, filename, source, predeclared)
	if err != nil {
		return fail(thread, maxSteps, err)
	}
	callee, ok := globals[fn].(*starlark.Function)
	if !ok {
		return outcome{Error: &failure{Kind: "not_found", Message: fmt.Sprintf("%s defines no function %s", filename, fn)}}
	}
	args, err := starlark.Call(thread, starlarkjson.Module.Members["decode"], starlark.Tuple{starlark.String(argsJSON)}, nil)
	if err != nil {
		return outcome{Error: &failure{Kind: "bad_args", Message: "arguments are not valid JSON: " + err.Error()}}
	}
	result, err := starlark.Call(thread, callee, starlark.Tuple{args}, nil)
	if err != nil {
		return fail(thread, maxSteps, err)
	}
	text, err := starlark.Call(thread, starlarkjson.Module.Members["encode"], starlark.Tuple{result}, nil)
	if err != nil {
		return outcome{Error: &failure{Kind: "result", Message: fmt.Sprintf("%s returned a %s that has no JSON form: %s", fn, result.Type(), err.Error())}}
	}
	return outcome{Ok: true, Value: string(text.(starlark.String))}
}

func fail(thread *starlark.Thread, maxSteps uint64, err error) outcome {
	var syntaxErr syntax.Error
	var resolveErrs resolve.ErrorList
	var evalErr *starlark.EvalError
	switch {
	case errors.As(err, &syntaxErr):
		return outcome{Error: &failure{Kind: "syntax", Message: syntaxErr.Msg, Line: syntaxErr.Pos.Line, Column: syntaxErr.Pos.Col}}
	case errors.As(err, &resolveErrs):
		first := resolveErrs[0]
		return outcome{Error: &failure{Kind: "syntax", Message: first.Msg, Line: first.Pos.Line, Column: first.Pos.Col}}
	case maxSteps > 0 && thread.ExecutionSteps() >= maxSteps:
		return outcome{Error: &failure{Kind: "step_limit", Message: fmt.Sprintf("stopped after %d steps, the step limit", maxSteps), Line: line(evalErr, err)}}
	case errors.As(err, &evalErr):
		return outcome{Error: &failure{Kind: "runtime", Message: evalErr.Msg, Line: line(evalErr, err), Backtrace: evalErr.Backtrace()}}
	default:
		return outcome{Error: &failure{Kind: "runtime", Message: err.Error()}}
	}
}

// line is the innermost Starlark position of an evaluation error, or 0.
func line(evalErr *starlark.EvalError, err error) int32 {
	if evalErr == nil && !errors.As(err, &evalErr) {
		return 0
	}
	// Innermost first; a built-in's frame (fail, int, ...) has no line.
	for i := len(evalErr.CallStack) - 1; i >= 0; i-- {
		if line := evalErr.CallStack[i].Pos.Line; line > 0 {
			return line
		}
	}
	return 0
}

func encode(o outcome) string {
	text, err := json.Marshal(o)
	if err != nil {
		return `{"ok":false,"error":{"kind":"runtime","message":"unencodable outcome"}}`
	}
	return string(text)
}
