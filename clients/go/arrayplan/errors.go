package arrayplan

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	arrayplanv1 "github.com/arrayplan/arrayplan/clients/go/proto/arrayplan/v1"
)

// FieldViolation is one bad field of a request.
type FieldViolation struct {
	// Field is the field's path: in a request, e.g. plan.spec.workload.read_fraction; in a plan
	// file (PlanFromYAML), its path in the file, e.g. workload.read_fraction ("text" for the
	// document as a whole: the server's violation is of the request's text, and the client reads
	// the file's field and line out of its "line N: FIELD: reason" description).
	Field string
	// Description says what is wrong and what is allowed.
	Description string
	// Line is the plan file's line (PlanFromYAML), 0 when the violation has none.
	Line int
}

func (v FieldViolation) String() string {
	if v.Line > 0 {
		return fmt.Sprintf("line %d: %s: %s", v.Line, v.Field, v.Description)
	}
	return v.Field + ": " + v.Description
}

// InvalidArgumentError is the server's INVALID_ARGUMENT: the request (or plan file) is wrong, and
// each violation names its field. Retrying does not help. Find it with errors.As.
type InvalidArgumentError struct {
	// Message is the server's status message (the first violations, in words).
	Message string
	// Reason is the server's ErrorInfo reason, e.g. INVALID_ARGUMENT or UNKNOWN_NAME.
	Reason string
	// Violations are the bad fields, in the server's order.
	Violations []FieldViolation

	st *status.Status
}

func (e *InvalidArgumentError) Error() string {
	if len(e.Violations) == 0 {
		return "arrayplan: invalid argument: " + e.Message
	}
	parts := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		parts[i] = v.String()
	}
	return "arrayplan: invalid argument: " + strings.Join(parts, "; ")
}

// GRPCStatus keeps status.Code(err) and status.FromError(err) working on the typed error.
func (e *InvalidArgumentError) GRPCStatus() *status.Status { return e.st }

// Field returns the violation of the named field, if any.
func (e *InvalidArgumentError) Field(name string) (FieldViolation, bool) {
	for _, v := range e.Violations {
		if v.Field == name {
			return v, true
		}
	}
	return FieldViolation{}, false
}

// A plan-file problem (ParsePlanFile): a violation of the request's text described as
// "line N: FIELD: reason" (FIELD the file's path) or "line N: reason".
var (
	linePrefix  = regexp.MustCompile(`^line (\d+|\?): `)
	fieldPrefix = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*(?:\[\d+\]|\.[A-Za-z_][A-Za-z0-9_]*)*): `)
)

// typedError turns an INVALID_ARGUMENT status into an *InvalidArgumentError; other errors are
// returned as they are (their status.Code is the server's).
func typedError(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.InvalidArgument {
		return err
	}
	out := &InvalidArgumentError{Message: st.Message(), st: st}
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.BadRequest:
			for _, fv := range d.GetFieldViolations() {
				v := FieldViolation{Field: fv.GetField(), Description: fv.GetDescription()}
				if m := linePrefix.FindStringSubmatch(v.Description); m != nil && v.Field == "text" {
					v.Line, _ = strconv.Atoi(m[1])
					v.Description = v.Description[len(m[0]):]
					if f := fieldPrefix.FindStringSubmatch(v.Description); f != nil {
						v.Field, v.Description = f[1], v.Description[len(f[0]):]
					}
				}
				out.Violations = append(out.Violations, v)
			}
		case *errdetails.ErrorInfo:
			out.Reason = d.GetReason()
		}
	}
	return out
}

func typedErrorsUnary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	return typedError(invoker(ctx, method, req, reply, cc, opts...))
}

type typedStream struct{ grpc.ClientStream }

func (s typedStream) RecvMsg(m any) error { return typedError(s.ClientStream.RecvMsg(m)) }

func typedErrorsStream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string,
	streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	s, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		return nil, typedError(err)
	}
	return typedStream{s}, nil
}

// PlanError is a plan that ended without an answer: FAILED (ErrorReason says why, e.g.
// SERVER_RESTARTED) or CANCELLED.
type PlanError struct {
	// Plan is the plan in its terminal state.
	Plan *arrayplanv1.Plan
}

func (e *PlanError) Error() string {
	state := strings.TrimPrefix(e.Plan.GetState().String(), "STATE_")
	msg := fmt.Sprintf("arrayplan: plan %s %s", e.Plan.GetName(), strings.ToLower(state))
	if e.Plan.GetErrorReason() != "" {
		msg += " (" + e.Plan.GetErrorReason() + ")"
	}
	if e.Plan.GetErrorMessage() != "" {
		msg += ": " + e.Plan.GetErrorMessage()
	}
	return msg
}
