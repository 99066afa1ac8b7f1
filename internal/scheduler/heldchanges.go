package scheduler

import (
	"context"
	"time"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/repository"
	"go.uber.org/zap"
)

// heldMark is a mark of the notes of held changes (repository.ChangeMark)
// and when it was taken, by this process's monotonic clock: a mark serves
// for markServes, and the notes older marks see are pruned.
type heldMark struct {
	mark repository.ChangeMark
	at   time.Time
}

// markServes is how long a mark serves a recheck; an older one asks about
// every row again. changesPrunedAfter is how old a mark is before the
// notes it sees are deleted: far older than any mark still asked about,
// by any instance (both are spans of real time, whatever the clocks say).
const (
	markServes         = 10 * time.Second
	changesPrunedAfter = 30 * time.Second
)

// markChanges takes the mark of now; without one (the database failed)
// every held row is read again before it fires.
func (d *Dispatcher) markChanges(ctx context.Context) heldMark {
	m, err := d.store.MarkChanges(ctx)
	if err != nil {
		d.log.Debug("mark held changes", zap.Error(err))
		return heldMark{}
	}
	return heldMark{mark: m, at: time.Now()}
}

// serves reports whether m may be asked about.
func (m heldMark) serves() bool { return m.mark != "" && time.Since(m.at) < markServes }

// recheck is the read just before firing of a group of held jobs (sorted
// by instant, as preFire): it asks which of their buckets were changed
// since their read, by anyone but their owner's outcomes, and reads again
// (preFire) only the rows of those. The others fire on their read, fresh
// as of this answer: nothing that could stop or move them was committed
// in between. Under a steady load that is one probe of a small index per
// window instead of a read of each of its rows and events (#36: the
// largest lever on steady lateness measured).
func (d *Dispatcher) recheck(group []job, now time.Time) []job {
	if len(group) == 0 {
		return nil
	}
	base := group[0].mark
	buckets := make([]int, 0, len(group))
	seen := make(map[int]bool, len(group))
	for k := range group {
		if group[k].mark != base {
			return d.preFire(group, now) // read at different moments: rare
		}
		if b := model.BucketOf(group[k].occ.EventID); !seen[b] {
			seen[b] = true
			buckets = append(buckets, b)
		}
	}
	if !base.serves() {
		return d.preFire(group, now)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	asked := d.clock.Now()
	changed, next, err := d.store.ChangedSince(ctx, base.mark, buckets)
	if err != nil {
		d.log.Debug("read held changes", zap.Error(err))
		return d.preFire(group, now)
	}
	readAt := d.clock.Now()
	d.lead.observe(readAt.Sub(asked))
	freshUntil := readAt.Add(d.lead.freshFor())
	mark := heldMark{mark: next, at: time.Now()}
	var ask []job
	for k := range group {
		if changed[model.BucketOf(group[k].occ.EventID)] {
			ask = append(ask, group[k])
		}
	}
	kept := make(map[string]job, len(ask))
	for _, jb := range d.preFire(ask, now) { // read after mark: newer than it
		kept[jb.occ.ID] = jb
	}
	out := group[:0]
	for _, jb := range group {
		if changed[model.BucketOf(jb.occ.EventID)] {
			var ok bool
			if jb, ok = kept[jb.occ.ID]; !ok {
				continue // resolved by preFire
			}
		} else {
			jb.freshUntil = freshUntil
		}
		jb.mark = mark
		out = append(out, jb)
	}
	return out
}

// pruneChanges deletes, once last is changesPrunedAfter old, the notes of
// held changes it sees, and takes the next mark to prune by.
func (d *Dispatcher) pruneChanges(ctx context.Context, last *heldMark) {
	if last.mark != "" && time.Since(last.at) >= changesPrunedAfter {
		if _, err := d.store.PruneHeldChanges(ctx, last.mark); err != nil {
			d.log.Warn("prune held changes", zap.Error(err))
			return
		}
		*last = heldMark{}
	}
	if last.mark == "" {
		*last = d.markChanges(ctx)
	}
}
