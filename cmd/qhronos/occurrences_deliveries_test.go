package main

import (
	"strings"
	"testing"

	"github.com/qhronos/qhronos/client"
)

// The LAST CODE/ERROR cell: the last attempt's HTTP status, else its error,
// else the delivery's (an attempt that got no answer, or none made), cut to
// a cell's width; "-" when there is nothing to say.
func TestLastResult(t *testing.T) {
	t.Parallel()
	long := "Post \"http://127.0.0.1:1/hooks\": dial tcp 127.0.0.1:1: connect: connection refused, and then some"
	for _, tc := range []struct {
		name string
		d    client.Delivery
		want string
	}{
		{"filtered", client.Delivery{Status: "filtered"}, "-"},
		{"the last attempt's code", client.Delivery{Attempts: []client.Attempt{
			{StatusCode: client.Ptr(503), Error: client.Ptr("receiver answered 503")},
			{StatusCode: client.Ptr(200)}}}, "200"},
		{"an error without a code", client.Delivery{Error: client.Ptr("gave up"), Attempts: []client.Attempt{
			{StatusCode: client.Ptr(503)}, {Error: client.Ptr("timeout")}}}, "timeout"},
		{"the delivery's error", client.Delivery{Error: client.Ptr("endpoint disabled"), Attempts: []client.Attempt{{}}},
			"endpoint disabled"},
		{"no attempt yet", client.Delivery{Error: client.Ptr("endpoint deleted")}, "endpoint deleted"},
		{"cut short", client.Delivery{Attempts: []client.Attempt{{Error: &long}}}, long[:59] + "…"},
	} {
		if got := lastResult(&tc.d); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// An occurrence's FAN-OUT line counts its deliveries, with the noun agreeing.
func TestFanoutSummary(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		f    client.FanoutSummary
		want string
	}{
		{client.FanoutSummary{Subscriptions: 3, Delivered: 1, Failed: 1, Filtered: 1}, "3 subscriptions: 1 delivered, 1 failed, 1 filtered, 0 pending"},
		{client.FanoutSummary{Subscriptions: 1, Pending: 1}, "1 subscription: 0 delivered, 0 failed, 0 filtered, 1 pending"},
		{client.FanoutSummary{}, "0 subscriptions: 0 delivered, 0 failed, 0 filtered, 0 pending"},
	} {
		if got := fanoutSummary(&tc.f); !strings.HasPrefix(got, tc.want) {
			t.Errorf("got %q, want it to start with %q", got, tc.want)
		}
	}
}
