package recurrence

import (
	"testing"
	"time"
)

// The integer calendar arithmetic agrees with package time on the first,
// second and last day of every month of years 1 to 9999 and on every day
// of 1895–2105, month and day overflow included.
func TestCivilDays(t *testing.T) {
	t.Parallel()
	for d := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() < 10000; d = d.AddDate(0, 0, 1) {
		if (d.Year() < 1895 || d.Year() > 2105) && d.Day() > 2 {
			d = time.Date(d.Year(), d.Month()+1, 0, 0, 0, 0, 0, time.UTC) // the month's last day
		}
		want := d.Unix() / 86400
		if got := dayOfDate(d.Year(), d.Month(), d.Day()); got != want {
			t.Fatalf("dayOfDate(%s) = %d, want %d", d.Format(time.DateOnly), got, want)
		}
		if y, m, dd := dateOfDay(want); y != d.Year() || m != d.Month() || dd != d.Day() {
			t.Fatalf("dateOfDay(%d) = %d-%d-%d, want %s", want, y, m, dd, d.Format(time.DateOnly))
		}
		if d.Day() == 1 {
			if got, want := dayOfDate(d.Year(), d.Month()+1, 0), d.AddDate(0, 1, -1).Unix()/86400; got != want {
				t.Fatalf("dayOfDate(%d, %d, 0) = %d, want %d", d.Year(), d.Month()+1, got, want)
			}
			if weekdayOf(want) != (int(d.Weekday())+6)%7 {
				t.Fatalf("weekdayOf(%s) wrong", d.Format(time.DateOnly))
			}
		}
	}
}
