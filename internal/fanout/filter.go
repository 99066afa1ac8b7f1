package fanout

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/types"

	"github.com/qhronos/qhronos/internal/input"
)

// Limits of a subscription's filter.
const (
	// MaxFilterLength bounds the expression's text.
	MaxFilterLength = 4096
	// MaxFilterCost bounds both the worst case the checker estimates at
	// create time and what one evaluation may spend (CEL cost units: about
	// one a step). A scan of a list of the payload is far below it; a loop
	// inside a loop over the payload is refused.
	MaxFilterCost = 10_000_000
	// sizeBound is what the estimate assumes of a list, map or string the
	// payload or metadata holds (a 1 MiB body cannot hold much more of
	// them); evaluation enforces MaxFilterCost on the real sizes.
	sizeBound = 1 << 16
)

// The variables a filter sees, as the docs list them.
var filterVars = []cel.EnvOption{
	cel.Variable("topic", cel.StringType),
	cel.Variable("name", cel.StringType),
	cel.Variable("tags", cel.ListType(cel.StringType)),
	cel.Variable("metadata", cel.DynType),
	cel.Variable("scheduled_at", cel.TimestampType),
	cel.Variable("payload", cel.MapType(cel.StringType, cel.DynType)),
}

// env is the CEL environment of every filter: built once, safe for
// concurrent use.
var env = func() *cel.Env {
	// JSON numbers are doubles: a filter compares them with 3 as well as 3.0.
	e, err := cel.NewEnv(append(filterVars, cel.CrossTypeNumericComparisons(true))...)
	if err != nil {
		panic(fmt.Sprintf("fanout: CEL environment: %v", err))
	}
	return e
}()

// Filter is a compiled subscription filter.
type Filter struct {
	source string
	prg    cel.Program
}

// Source is the expression as written.
func (f *Filter) Source() string { return f.source }

// CompileFilter compiles a subscription's filter: it must parse, type-check
// to a bool over the filter variables and stay within MaxFilterCost in the
// worst case; every refusal is a 400 naming field, with CEL's own message.
func CompileFilter(field, expr string) (*Filter, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, input.BadRequest(field, "must be a CEL expression (or absent for every firing)")
	}
	if len(expr) > MaxFilterLength {
		return nil, input.BadRequestf(field, "must be at most %d characters", MaxFilterLength)
	}
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, input.BadRequest(field, "does not compile: "+oneLine(iss.Err().Error()))
	}
	if ast.OutputType() != cel.BoolType && ast.OutputType() != cel.DynType {
		return nil, input.BadRequestf(field, "must be true or false, not %s", ast.OutputType())
	}
	est, err := env.EstimateCost(ast, sizes{})
	if err != nil {
		return nil, input.BadRequest(field, "cost cannot be estimated: "+oneLine(err.Error()))
	}
	if est.Max > MaxFilterCost {
		return nil, input.BadRequestf(field, "may cost up to %d, more than the limit of %d "+
			"(a loop inside a loop over the payload?)", est.Max, MaxFilterCost)
	}
	prg, err := env.Program(ast, cel.CostLimit(MaxFilterCost), cel.InterruptCheckFrequency(100))
	if err != nil {
		return nil, input.BadRequest(field, oneLine(err.Error()))
	}
	return &Filter{source: expr, prg: prg}, nil
}

// Firing is what a filter decides on: one occurrence of an event that
// targets a topic.
type Firing struct {
	Topic       string
	Name        string
	Tags        []string
	Metadata    any // the event's metadata, decoded (nil: none)
	ScheduledAt time.Time
	// Payload is the body delivered, decoded.
	Payload map[string]any
}

// Match evaluates the filter on a firing. An error (a missing key, a
// type mismatch at run time, the cost limit) is returned so the firing can
// be recorded as not delivered, with the reason.
func (f *Filter) Match(in Firing) (bool, error) {
	tags := in.Tags
	if tags == nil {
		tags = []string{}
	}
	payload := in.Payload
	if payload == nil {
		payload = map[string]any{}
	}
	out, _, err := f.prg.Eval(map[string]any{"topic": in.Topic, "name": in.Name, "tags": tags,
		"metadata": in.Metadata, "scheduled_at": in.ScheduledAt, "payload": payload})
	if err != nil {
		return false, fmt.Errorf("filter: %s", oneLine(err.Error()))
	}
	b, ok := out.(types.Bool)
	if !ok {
		return false, fmt.Errorf("filter: gave %s, not true or false", out.Type().TypeName())
	}
	return bool(b), nil
}

// sizes bounds, for the cost estimate, every list, map and string CEL
// cannot size itself (those of the payload and metadata).
type sizes struct{}

func (sizes) EstimateSize(checker.AstNode) *checker.SizeEstimate {
	return &checker.SizeEstimate{Min: 0, Max: sizeBound}
}

func (sizes) EstimateCallCost(string, string, *checker.AstNode, []checker.AstNode) *checker.CallEstimate {
	return nil
}

// oneLine keeps CEL's multi-line messages (with a caret under the column)
// to their first line and the position.
func oneLine(msg string) string {
	msg = strings.TrimPrefix(msg, "ERROR: ")
	msg = strings.Replace(msg, "<input>:", "at line:column ", 1)
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return strings.TrimSpace(msg)
}
