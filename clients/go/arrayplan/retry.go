package arrayplan

import (
	"context"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// RetryEvent describes one wait before a call is tried again (WithRetryObserver).
type RetryEvent struct {
	// Method is the full gRPC method, e.g. /arrayplan.v1.PlannerService/CreatePlan.
	Method string
	// Attempt is the attempt that failed (1 = the first).
	Attempt int
	// Err is its error.
	Err error
	// Delay is the wait before the next attempt.
	Delay time.Duration
	// FromServer is true when Delay is the server's RetryInfo delay (capped by WithMaxRetryDelay).
	FromServer bool
}

// retryDelay says whether err is worth another attempt and after how long: RESOURCE_EXHAUSTED
// only with a RetryInfo (the server's admission: try later), UNAVAILABLE always (with the
// server's RetryInfo when it sent one, else exponential backoff).
func (c *config) retryDelay(err error, attempt int) (time.Duration, bool, bool) {
	st, ok := status.FromError(err)
	if !ok {
		return 0, false, false
	}
	var info *errdetails.RetryInfo
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			info = ri
		}
	}
	switch st.Code() {
	case codes.ResourceExhausted:
		if info == nil {
			return 0, false, false
		}
	case codes.Unavailable:
	default:
		return 0, false, false
	}
	if info != nil && info.GetRetryDelay() != nil {
		return min(info.GetRetryDelay().AsDuration(), c.maxRetryDelay), true, true
	}
	d := c.baseRetryDelay << min(attempt-1, 16)
	return min(d, c.maxRetryDelay), false, true
}

// retryUnary tries a unary call again after the server's RetryInfo delay, while the context's
// deadline leaves room for the wait.
func (c *config) retryUnary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	for attempt := 1; ; attempt++ {
		err := invoker(ctx, method, req, reply, cc, opts...)
		if err == nil || attempt > c.maxRetries {
			return err
		}
		delay, fromServer, retry := c.retryDelay(err, attempt)
		if !retry {
			return err
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < delay {
			return err // the wait would outlast the call's deadline: the caller gets the server's answer
		}
		if c.retryObserver != nil {
			c.retryObserver(RetryEvent{Method: method, Attempt: attempt, Err: err, Delay: delay, FromServer: fromServer})
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return status.FromContextError(ctx.Err()).Err()
		case <-t.C:
		}
	}
}

// deadlineUnary gives a unary call without a deadline the client's default one.
func (c *config) deadlineUnary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if _, ok := ctx.Deadline(); !ok && c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	return invoker(ctx, method, req, reply, cc, opts...)
}
