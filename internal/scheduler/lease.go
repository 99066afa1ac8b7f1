package scheduler

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/repository"
)

// heldLeases is every row this dispatcher holds, by claim token, from the
// claim until its outcome is written or it is released or given up. The
// heartbeat renews them all in one statement; a row the database no longer
// shows under its token is marked lost and is neither fired nor recorded.
type heldLeases struct {
	mu     sync.Mutex
	tokens map[string]*claimLease
}

// claimLease is the rows of one claim and how long their lease lasts, as far
// as this process knows (the expiry of the last claim or renewal that
// succeeded).
type claimLease struct {
	until time.Time
	rows  map[string]*heldRow
}

// heldRow is what this process knows of one held row.
type heldRow struct {
	// lost: the heartbeat found the row no longer held by its token.
	lost bool
	// recording: its outcome is queued for the recorder. It stays renewed
	// (the recorder may retry while the database is away), but a renewal
	// that misses it is no news: the outcome may just have been written.
	recording bool
}

func newHeldLeases() *heldLeases { return &heldLeases{tokens: map[string]*claimLease{}} }

func (h *heldLeases) add(token string, until time.Time, ids []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := &claimLease{until: until, rows: make(map[string]*heldRow, len(ids))}
	for _, id := range ids {
		c.rows[id] = &heldRow{}
	}
	h.tokens[token] = c
}

func (h *heldLeases) remove(token string, ids ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.tokens[token]
	if !ok {
		return
	}
	for _, id := range ids {
		delete(c.rows, id)
	}
	if len(c.rows) == 0 {
		delete(h.tokens, token)
	}
}

// snapshot returns the tokens held now and, for each, its rows.
func (h *heldLeases) snapshot() map[string][]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string][]string, len(h.tokens))
	for token, c := range h.tokens {
		for id, r := range c.rows {
			if !r.lost {
				out[token] = append(out[token], id)
			}
		}
	}
	return out
}

// renewed applies a heartbeat's answer: the rows of the snapshot the
// database renewed get the new expiry; the others are lost. It returns the
// lost rows that this process still tracks.
func (h *heldLeases) renewed(snap map[string][]string, got []repository.LeaseKey, until time.Time) []string {
	ok := make(map[repository.LeaseKey]bool, len(got))
	for _, k := range got {
		ok[k] = true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var lost []string
	for token, ids := range snap {
		c, tracked := h.tokens[token]
		if !tracked {
			continue
		}
		renewedAny := false
		for _, id := range ids {
			r, still := c.rows[id]
			if !still || r.recording {
				continue // settled or being recorded meanwhile, not lost
			}
			if ok[repository.LeaseKey{ID: id, Token: token}] {
				renewedAny = true
				continue
			}
			r.lost = true
			lost = append(lost, id)
		}
		if renewedAny && until.After(c.until) {
			c.until = until
		}
	}
	return lost
}

// usable reports whether a row may still be fired: not lost, and its lease
// not past by this process's last successful renewal (if renewals fail, the
// rescuer of another instance may already be handing the row out again).
func (h *heldLeases) usable(token, id string, now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.tokens[token]
	if !ok {
		return false
	}
	r, ok := c.rows[id]
	return ok && !r.lost && now.Before(c.until)
}

// lost reports whether the heartbeat found the row taken from its token.
func (h *heldLeases) lost(token, id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.tokens[token]
	if !ok {
		return false
	}
	r, ok := c.rows[id]
	return ok && r.lost
}

// recording marks a row whose outcome goes to the recorder.
func (h *heldLeases) recording(token, id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c, ok := h.tokens[token]; ok {
		if r, ok := c.rows[id]; ok {
			r.recording = true
		}
	}
}

// RenewLeases is one heartbeat: it extends the lease of every row this
// dispatcher holds to now+lease in one statement and marks the rows whose
// lease was lost meanwhile (rescued after a stall, revoked by a pause or an
// edit) so they are neither fired nor recorded. It returns how many rows
// were renewed and how many were found lost.
func (d *Dispatcher) RenewLeases(ctx context.Context) (renewed, lost int, err error) {
	snap := d.leases.snapshot()
	if len(snap) == 0 {
		return 0, 0, nil
	}
	var keys []repository.LeaseKey
	for token, ids := range snap {
		for _, id := range ids {
			keys = append(keys, repository.LeaseKey{ID: id, Token: token})
		}
	}
	until := d.clock.Now().Add(d.cfg.Lease)
	got, err := d.store.RenewLeases(ctx, keys, until)
	if err != nil {
		return 0, 0, err
	}
	gone := d.leases.renewed(snap, got, until)
	if len(gone) > 0 {
		d.log.Warn("lease lost: rows will not be fired or recorded", zap.Int("occurrences", len(gone)),
			zap.Strings("occurrence_ids", gone[:min(len(gone), 10)]))
	}
	return len(got), len(gone), nil
}

// heartbeat renews held leases every renewal interval until stop closes.
// It runs on the local timer, like the other loops: only durations matter
// here, and each renewal reads the deployment clock for the new expiry.
func (d *Dispatcher) heartbeat() {
	defer close(d.heartbeatDone)
	t := time.NewTicker(d.cfg.LeaseRenewInterval)
	defer t.Stop()
	for {
		select {
		case <-d.heartbeatStop:
			return
		case <-t.C:
		}
		// A renewal that outlives the lease is worthless; bound it.
		ctx, cancel := context.WithTimeout(context.Background(), d.cfg.Lease)
		_, _, err := d.RenewLeases(ctx)
		cancel()
		if err != nil {
			d.log.Warn("renew leases", zap.Error(err))
		}
	}
}
