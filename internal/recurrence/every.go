package recurrence

import (
	"math/big"
	"strconv"
	"strings"
	"time"
)

// everySource is cron's "@every d": start + k·d for k = 0, 1, … in elapsed
// time, so it ignores DST entirely, the event's DST policy included.
type everySource struct {
	start time.Time
	every time.Duration
}

// parseEvery reads the duration of "@every": Go syntax ("15m", "1h30m") plus
// a leading whole-day part ("1d", "2d12h").
func parseEvery(text string) (time.Duration, bool) {
	var days int64
	if i := strings.IndexByte(text, 'd'); i > 0 {
		n, err := strconv.ParseInt(text[:i], 10, 64)
		if err != nil || n < 0 || n > 100000 {
			return 0, false
		}
		days, text = n, text[i+1:]
		if text == "" {
			return time.Duration(days) * 24 * time.Hour, days > 0
		}
	}
	d, err := time.ParseDuration(text)
	if err != nil || d <= 0 {
		return 0, false
	}
	return time.Duration(days)*24*time.Hour + d, true
}

func (s everySource) expand(out *series, b *budget) error {
	b.field = "cron"
	k := big.NewInt(0)
	if out.from.After(s.start) {
		// k = ceil((from - start) / every), exact for any distance.
		diff := nanosBetween(s.start, out.from)
		d := big.NewInt(int64(s.every))
		k.Add(diff, new(big.Int).Sub(d, big.NewInt(1)))
		k.Quo(k, d)
	}
	step := new(big.Int).Mul(k, big.NewInt(int64(s.every)))
	for !out.full() {
		if err := b.spend(); err != nil {
			return err
		}
		t := ceilMicro(addNanos(s.start, step))
		if !t.Before(out.to) || t.Year() > 9999 {
			return nil
		}
		if !t.Before(out.from) && (out.n == 0 || t.After(out.last)) {
			out.push(t)
		}
		step.Add(step, big.NewInt(int64(s.every)))
	}
	return nil
}

func nanosBetween(a, b time.Time) *big.Int {
	n := big.NewInt(b.Unix() - a.Unix())
	n.Mul(n, big.NewInt(1e9))
	return n.Add(n, big.NewInt(int64(b.Nanosecond()-a.Nanosecond())))
}

func addNanos(t time.Time, n *big.Int) time.Time {
	sec, ns := new(big.Int).QuoRem(n, big.NewInt(1e9), new(big.Int))
	return time.Unix(t.Unix()+sec.Int64(), int64(t.Nanosecond())+ns.Int64()).UTC()
}
