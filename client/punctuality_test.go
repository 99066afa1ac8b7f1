package client_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/qhronos/qhronos/client"
	"github.com/qhronos/qhronos/internal/qhronostest"
)

// Client.Punctuality reads the report of a delivered instant as typed
// values (the ratios as numbers, null ones as nil, the trend's step as the
// window decides) and a refused tolerance as an error naming the field.
func TestPunctualityAgainstServer(t *testing.T) {
	t.Parallel()
	onBackends(t, func(t *testing.T, srv *qhronostest.Server, c *client.Client) {
		ctx := qhronostest.Context(t, 2*time.Minute)
		rc := qhronostest.NewReceiver(t)
		tag := "punct-" + qhronostest.RandomHex(t, 4)
		_, err := c.Events.Create(ctx, client.EventInput{Name: client.Ptr("nightly export"),
			StartTime: client.Ptr(time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339)),
			Webhook:   client.Ptr(rc.URL), Tags: []string{tag}})
		require.NoError(t, err)

		// A minute's tolerance: a busy machine may deliver late by seconds.
		p := client.PunctualityParams{GroupBy: client.Ptr(client.GetStatsPunctualityParamsGroupByTag),
			Tag: []string{tag}, Tolerance: client.Ptr("1m"), From: client.Ptr("24 hours ago")}
		var rep *client.PunctualityReport
		qhronostest.Wait(t, time.Minute, "the delivery counted", func() bool {
			rep, err = c.Punctuality(ctx, p)
			require.NoError(t, err)
			return rep.Total.Completed == 1
		})
		require.Equal(t, client.PunctualityReportGroupByTag, rep.GroupBy)
		require.Equal(t, 60_000, rep.ToleranceMs)
		require.Equal(t, client.PunctualityReportTrendStepN1H, rep.TrendStep, "a 24-hour window has an hourly trend")
		require.Len(t, rep.Groups, 1)
		g := rep.Groups[0]
		require.Equal(t, tag, *g.Key)
		require.Equal(t, tag, g.Name)
		require.Equal(t, 1, g.Due)
		require.Equal(t, 1, g.OnTime)
		require.Equal(t, 1.0, *g.OnTimeRatio)
		require.Equal(t, 1.0, *g.SuccessRatio)
		require.Equal(t, 1, g.LatenessMs.Count)
		due := 0
		for _, pt := range rep.Trend {
			due += pt.Due
			if pt.Due == 0 {
				require.Nil(t, pt.SuccessRatio, "no outcome in %s: no ratio", pt.Start)
			}
		}
		require.Equal(t, 1, due, "the trend adds up to the total")

		week, err := c.Punctuality(ctx, client.PunctualityParams{Tag: []string{tag}})
		require.NoError(t, err)
		require.Equal(t, client.PunctualityReportTrendStepN1D, week.TrendStep, "the default 7 days: a daily trend")
		require.Equal(t, client.PunctualityReportGroupByEvent, week.GroupBy)
		require.Equal(t, 1, week.Total.Due)

		_, err = c.Punctuality(ctx, client.PunctualityParams{Tolerance: client.Ptr("soon")})
		var apiErr *client.APIError
		require.ErrorAs(t, err, &apiErr)
		require.ErrorIs(t, err, client.ErrBadRequest)
		require.Equal(t, "tolerance", apiErr.Field, "%+v", apiErr)
	})
}
