package dynamotarget

import (
	"context"
	"errors"
	"net"

	"github.com/aws/smithy-go"

	"github.com/headroom-dev/headroom/internal/target"
)

// The error codes with which DynamoDB refuses a request for exceeding a
// table's provisioned throughput or an account's request rate.
var throttleCodes = map[string]bool{
	"ProvisionedThroughputExceededException": true,
	"ThrottlingException":                    true,
	"RequestLimitExceeded":                   true,
}

// The codes of a service that is there but cannot serve now.
var busyCodes = map[string]bool{
	"InternalServerError":    true,
	"ServiceUnavailable":     true,
	"LimitExceededException": true,
	"ResourceInUseException": true,
}

// apiCode is the service's error code in err ("" when it is not a service
// error).
func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// classify gives an SDK error its kind for the per-interval error counts
// (internal/target/kinds.go; "throttled" for a throughput refusal from the
// service itself). Context errors pass through.
func classify(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return err
	}
	code := apiCode(err)
	switch {
	case throttleCodes[code]:
		return &target.KindError{K: KindThrottled, Err: err}
	case busyCodes[code]:
		return &target.KindError{K: target.KindBusy, Err: err}
	case code != "":
		return err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &target.KindError{K: target.KindTimeout, Err: err}
	}
	if target.IsConnectionError(err) {
		return &target.KindError{K: target.KindConnection, Err: err}
	}
	return err
}
