package repository

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/qhronos/qhronos/internal/model"
)

const endpointColumns = `id, name, description, url, secret, previous_secret, previous_secret_expires_at,
	headers_json, rate_per_second, rate_burst, max_concurrency, timeout_ms, auth_json, auth_secret, circuit_json,
	tags_json, version, created_by, created_at, updated_at, deleted_at`

// endpointRow is an endpoint joined with its health, as stored.
type endpointRow struct {
	ID                    string     `db:"id"`
	Name                  string     `db:"name"`
	Description           string     `db:"description"`
	URL                   string     `db:"url"`
	Secret                []byte     `db:"secret"`
	PreviousSecret        []byte     `db:"previous_secret"`
	PreviousSecretExpires *time.Time `db:"previous_secret_expires_at"`
	HeadersJSON           string     `db:"headers_json"`
	RatePerSecond         *float64   `db:"rate_per_second"`
	RateBurst             int        `db:"rate_burst"`
	MaxConcurrency        int        `db:"max_concurrency"`
	TimeoutMS             int64      `db:"timeout_ms"`
	AuthJSON              *string    `db:"auth_json"`
	AuthSecret            []byte     `db:"auth_secret"`
	CircuitJSON           *string    `db:"circuit_json"`
	TagsJSON              string     `db:"tags_json"`
	Version               int64      `db:"version"`
	CreatedBy             string     `db:"created_by"`
	CreatedAt             time.Time  `db:"created_at"`
	UpdatedAt             time.Time  `db:"updated_at"`
	DeletedAt             *time.Time `db:"deleted_at"`
	healthRow
}

// circuitDoc is model.Circuit as stored in circuit_json: durations in
// milliseconds, zero fields (the deployment's defaults) left out.
type circuitDoc struct {
	Failures       int     `json:"failures,omitempty"`
	FailureRatio   float64 `json:"failure_ratio,omitempty"`
	MinRequests    int     `json:"min_requests,omitempty"`
	WindowMS       int64   `json:"window_ms,omitempty"`
	CoolDownMS     int64   `json:"cool_down_ms,omitempty"`
	DisableAfterMS int64   `json:"disable_after_ms,omitempty"`
}

func (r *endpointRow) endpoint() (model.Endpoint, error) {
	e := model.Endpoint{ID: r.ID, Name: r.Name, Description: r.Description, URL: r.URL, Secret: r.Secret,
		PreviousSecret: r.PreviousSecret, PreviousSecretExpires: utcp(r.PreviousSecretExpires),
		MaxConcurrency: r.MaxConcurrency, TimeoutMS: r.TimeoutMS, AuthSecret: r.AuthSecret, Version: r.Version,
		CreatedBy: r.CreatedBy, CreatedAt: utc(r.CreatedAt), UpdatedAt: utc(r.UpdatedAt), DeletedAt: utcp(r.DeletedAt),
		Headers: map[string]string{}, Tags: []string{}, Health: r.health()}
	if r.RatePerSecond != nil {
		e.RateLimit = &model.RateLimit{PerSecond: *r.RatePerSecond, Burst: r.RateBurst}
	}
	if err := json.Unmarshal([]byte(r.HeadersJSON), &e.Headers); err != nil {
		return model.Endpoint{}, fmt.Errorf("decode headers of endpoint %s: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(r.TagsJSON), &e.Tags); err != nil {
		return model.Endpoint{}, fmt.Errorf("decode tags of endpoint %s: %w", r.ID, err)
	}
	if e.Headers == nil {
		e.Headers = map[string]string{}
	}
	if e.Tags == nil {
		e.Tags = []string{}
	}
	if r.AuthJSON != nil {
		e.Auth = new(model.EndpointAuth)
		if err := json.Unmarshal([]byte(*r.AuthJSON), e.Auth); err != nil {
			return model.Endpoint{}, fmt.Errorf("decode auth of endpoint %s: %w", r.ID, err)
		}
	}
	if r.CircuitJSON != nil {
		var d circuitDoc
		if err := json.Unmarshal([]byte(*r.CircuitJSON), &d); err != nil {
			return model.Endpoint{}, fmt.Errorf("decode circuit of endpoint %s: %w", r.ID, err)
		}
		e.Circuit = &model.Circuit{Failures: d.Failures, FailureRatio: d.FailureRatio, MinRequests: d.MinRequests,
			Window: time.Duration(d.WindowMS) * time.Millisecond, CoolDown: time.Duration(d.CoolDownMS) * time.Millisecond,
			DisableAfter: time.Duration(d.DisableAfterMS) * time.Millisecond}
	}
	return e, nil
}

// endpointConfig encodes the configuration columns the API may change.
func endpointConfig(e *model.Endpoint) (headers string, rate *float64, burst int, auth, circuit *string) {
	h := e.Headers
	if h == nil {
		h = map[string]string{}
	}
	b, _ := json.Marshal(h) // a map of strings always encodes
	headers = string(b)
	if e.RateLimit != nil {
		rate, burst = &e.RateLimit.PerSecond, e.RateLimit.Burst
	}
	if e.Auth != nil {
		b, _ := json.Marshal(e.Auth)
		text := string(b)
		auth = &text
	}
	if c := e.Circuit; c != nil {
		b, _ := json.Marshal(circuitDoc{Failures: c.Failures, FailureRatio: c.FailureRatio, MinRequests: c.MinRequests,
			WindowMS: c.Window.Milliseconds(), CoolDownMS: c.CoolDown.Milliseconds(),
			DisableAfterMS: c.DisableAfter.Milliseconds()})
		text := string(b)
		circuit = &text
	}
	return headers, rate, burst, auth, circuit
}

// CreateEndpoint inserts e and its health row (healthy since e.CreatedAt)
// in one transaction; id, version and timestamps are set by the caller.
func (s *Store) CreateEndpoint(ctx context.Context, e *model.Endpoint) error {
	headers, rate, burst, auth, circuit := endpointConfig(e)
	e.Health = model.EndpointHealth{State: model.EndpointHealthy, StateChangedAt: e.CreatedAt}
	return s.WithTx(ctx, func(tx *Store) error {
		_, err := tx.exec(ctx, `INSERT INTO endpoints (`+endpointColumns+`) VALUES
			(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			e.ID, e.Name, e.Description, e.URL, e.Secret, e.PreviousSecret, tx.tsp(e.PreviousSecretExpires),
			headers, rate, burst, e.MaxConcurrency, e.TimeoutMS, auth, e.AuthSecret, circuit, tagsJSON(e.Tags),
			e.Version, e.CreatedBy, tx.ts(e.CreatedAt), tx.ts(e.UpdatedAt), tx.tsp(e.DeletedAt))
		if err != nil {
			return fmt.Errorf("insert endpoint: %w", err)
		}
		_, err = tx.exec(ctx, `INSERT INTO endpoint_health (endpoint_id, state, state_changed_at, updated_at)
			VALUES (?, ?, ?, ?)`, e.ID, string(model.EndpointHealthy), tx.ts(e.CreatedAt), tx.ts(e.CreatedAt))
		if err != nil {
			return fmt.Errorf("insert endpoint health: %w", err)
		}
		return nil
	})
}

// endpointSelect reads endpoints joined with their health.
var endpointSelect = `SELECT ` + prefixed("e.", endpointColumns) + `, ` + prefixed("h.", endpointHealthColumns) +
	` FROM endpoints e JOIN endpoint_health h ON h.endpoint_id = e.id`

// GetEndpoint returns a live endpoint with its health; ErrNotFound when it
// does not exist or was deleted.
func (s *Store) GetEndpoint(ctx context.Context, id string) (model.Endpoint, error) {
	if uuid.Validate(id) != nil {
		return model.Endpoint{}, fmt.Errorf("get endpoint: %w", model.ErrNotFound)
	}
	var r endpointRow
	if err := s.get(ctx, &r, endpointSelect+` WHERE e.id = ? AND e.deleted_at IS NULL`, id); err != nil {
		return model.Endpoint{}, fmt.Errorf("get endpoint: %w", err)
	}
	return r.endpoint()
}

// ListEndpoints returns live endpoints newest first; scope and tag filters
// read the endpoint's own tags, as for calendars.
func (s *Store) ListEndpoints(ctx context.Context, f model.EndpointFilter) ([]model.Endpoint, error) {
	tagWhere, args, ok := s.jsonTagWhere("e.tags_json", f.Scope, f.Unrestricted, f.AnyTags, f.AllTags)
	if !ok {
		return []model.Endpoint{}, nil
	}
	where := append([]string{`e.deleted_at IS NULL`}, tagWhere...)
	if f.State != "" {
		where = append(where, `h.state = ?`)
		args = append(args, string(f.State))
	}
	if f.After != nil {
		where = append(where, `(e.created_at < ? OR (e.created_at = ? AND e.id < ?))`)
		args = append(args, s.ts(f.After.CreatedAt), s.ts(f.After.CreatedAt), f.After.ID)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	q := endpointSelect + ` WHERE ` + strings.Join(where, " AND ") + ` ORDER BY e.created_at DESC, e.id DESC LIMIT ?`
	var rows []endpointRow
	if err := s.selectAll(ctx, &rows, q, append(args, limit)...); err != nil {
		return nil, fmt.Errorf("list endpoints: %w", err)
	}
	return decodeRows(rows, (*endpointRow).endpoint)
}

// UpdateEndpoint writes e's configuration (not its signing secrets: see
// RotateEndpointSecret) when the stored version equals expectedVersion, then
// bumps e.Version. ErrStaleVersion when it moved on, ErrNotFound when the
// endpoint is gone. With unused set (a URL of another kind: what names the
// endpoint delivers to that kind only) it is EndpointInUseError while live
// events or subscriptions name the endpoint, checked under its lock.
func (s *Store) UpdateEndpoint(ctx context.Context, e *model.Endpoint, expectedVersion int64, unused bool) error {
	if unused {
		return s.WithTx(ctx, func(tx *Store) error {
			if err := tx.lockUnusedEndpoint(ctx, e.ID); err != nil {
				return err
			}
			return tx.UpdateEndpoint(ctx, e, expectedVersion, false)
		})
	}
	headers, rate, burst, auth, circuit := endpointConfig(e)
	res, err := s.exec(ctx, `UPDATE endpoints SET name = ?, description = ?, url = ?, headers_json = ?,
		rate_per_second = ?, rate_burst = ?, max_concurrency = ?, timeout_ms = ?, auth_json = ?, auth_secret = ?,
		circuit_json = ?, tags_json = ?, updated_at = ?, version = version + 1
		WHERE id = ? AND version = ? AND deleted_at IS NULL`,
		e.Name, e.Description, e.URL, headers, rate, burst, e.MaxConcurrency, e.TimeoutMS, auth, e.AuthSecret,
		circuit, tagsJSON(e.Tags), s.ts(e.UpdatedAt), e.ID, expectedVersion)
	if err != nil {
		return fmt.Errorf("update endpoint: %w", err)
	}
	if err := s.checkEndpointVersioned(ctx, res, e.ID); err != nil {
		return err
	}
	e.Version = expectedVersion + 1
	return nil
}

// RotateEndpointSecret writes e's signing secrets (current, previous and
// the previous one's expiry) when the stored version equals
// expectedVersion, then bumps e.Version.
func (s *Store) RotateEndpointSecret(ctx context.Context, e *model.Endpoint, expectedVersion int64) error {
	res, err := s.exec(ctx, `UPDATE endpoints SET secret = ?, previous_secret = ?, previous_secret_expires_at = ?,
		updated_at = ?, version = version + 1 WHERE id = ? AND version = ? AND deleted_at IS NULL`,
		e.Secret, e.PreviousSecret, s.tsp(e.PreviousSecretExpires), s.ts(e.UpdatedAt), e.ID, expectedVersion)
	if err != nil {
		return fmt.Errorf("rotate endpoint secret: %w", err)
	}
	if err := s.checkEndpointVersioned(ctx, res, e.ID); err != nil {
		return err
	}
	e.Version = expectedVersion + 1
	return nil
}

// checkEndpointVersioned turns "no row changed" into ErrNotFound or
// ErrStaleVersion.
func (s *Store) checkEndpointVersioned(ctx context.Context, res interface{ RowsAffected() (int64, error) }, id string) error {
	if affected(res) == 1 {
		return nil
	}
	var n int
	if err := s.get(ctx, &n, `SELECT COUNT(*) FROM endpoints WHERE id = ? AND deleted_at IS NULL`, id); err != nil {
		return fmt.Errorf("check endpoint version: %w", err)
	}
	if n == 0 {
		return model.ErrNotFound
	}
	return model.ErrStaleVersion
}

// EndpointInUseError refuses to delete an endpoint that live events or
// subscriptions name; it is a model.ErrConflict.
type EndpointInUseError struct {
	EndpointID    string
	Events        int
	Subscriptions int
}

func (e *EndpointInUseError) Error() string {
	return fmt.Sprintf("endpoint %s is used by %d events and %d subscriptions", e.EndpointID, e.Events,
		e.Subscriptions)
}

func (e *EndpointInUseError) Unwrap() error { return model.ErrConflict }

// DeleteEndpoint soft-deletes an endpoint no live event or subscription
// names; otherwise
// *EndpointInUseError. expectedVersion 0 skips the version check. The
// count and the delete share a transaction that first takes the row's
// lock (LockEndpoint), so an event saved concurrently, which takes the same
// lock, either sees the endpoint deleted or is counted.
func (s *Store) DeleteEndpoint(ctx context.Context, id string, expectedVersion int64, now time.Time) error {
	return s.WithTx(ctx, func(tx *Store) error {
		if err := tx.lockUnusedEndpoint(ctx, id); err != nil {
			return err
		}
		q, args := `UPDATE endpoints SET deleted_at = ?, updated_at = ?, version = version + 1
			WHERE id = ? AND deleted_at IS NULL`, []any{tx.ts(now), tx.ts(now), id}
		if expectedVersion != 0 {
			q, args = q+` AND version = ?`, append(args, expectedVersion)
		}
		res, err := tx.exec(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("delete endpoint: %w", err)
		}
		return tx.checkEndpointVersioned(ctx, res, id)
	})
}

// lockUnusedEndpoint locks a live endpoint's row (LockEndpoint) and returns
// EndpointInUseError while live events or subscriptions name it.
func (s *Store) lockUnusedEndpoint(ctx context.Context, id string) error {
	if _, err := s.LockEndpoint(ctx, id); err != nil {
		return err
	}
	n, err := s.EventsUsingEndpoint(ctx, id)
	if err != nil {
		return err
	}
	subs, err := s.SubscriptionsUsingEndpoint(ctx, id)
	if err != nil {
		return err
	}
	if n > 0 || subs > 0 {
		return &EndpointInUseError{EndpointID: id, Events: n, Subscriptions: subs}
	}
	return nil
}

// LockEndpoint holds a live endpoint's row until the transaction ends: an
// event or subscription that names it, the endpoint's deletion and a change
// of its URL's kind take it in turn. It returns the endpoint's URL as
// locked, so the caller checks the kind it delivers to under the lock.
// ErrNotFound when it does not exist or was deleted.
func (s *Store) LockEndpoint(ctx context.Context, id string) (string, error) {
	if uuid.Validate(id) != nil {
		return "", fmt.Errorf("lock endpoint: %w", model.ErrNotFound)
	}
	var urls []string
	if err := s.selectAll(ctx, &urls, `SELECT url FROM endpoints WHERE id = ? AND deleted_at IS NULL`+s.d.forUpdate,
		id); err != nil {
		return "", fmt.Errorf("lock endpoint: %w", err)
	}
	if len(urls) == 0 {
		return "", fmt.Errorf("lock endpoint: %w", model.ErrNotFound)
	}
	return urls[0], nil
}

// lockEndpointChecked locks a live endpoint's row (LockEndpoint) and, when
// check is set, hands it the URL as locked.
func (s *Store) lockEndpointChecked(ctx context.Context, id string, check func(url string) error) error {
	url, err := s.LockEndpoint(ctx, id)
	if err != nil || check == nil {
		return err
	}
	return check(url)
}

// EventsUsingEndpoint counts the live (not deleted) events that name an
// endpoint.
func (s *Store) EventsUsingEndpoint(ctx context.Context, id string) (int, error) {
	var n int
	err := s.get(ctx, &n, `SELECT COUNT(*) FROM events WHERE endpoint_id = ? AND deleted_at IS NULL`, id)
	if err != nil {
		return 0, fmt.Errorf("count events using endpoint: %w", err)
	}
	return n, nil
}

// DisableEndpoint disables an endpoint by hand: its due occurrences fail
// with reason endpoint_disabled until it is enabled. subject and channel
// (who, through what) go to the circuit history with the change.
// ErrNotFound when it does not exist or was deleted.
func (s *Store) DisableEndpoint(ctx context.Context, id string, now time.Time, subject, channel string) error {
	if uuid.Validate(id) != nil {
		return fmt.Errorf("disable endpoint: %w", model.ErrNotFound)
	}
	return s.WithTx(ctx, func(tx *Store) error {
		before, err := tx.lockLiveHealth(ctx, id)
		if err != nil {
			return fmt.Errorf("disable endpoint: %w", err)
		}
		if _, err := tx.exec(ctx, `UPDATE endpoint_health SET state = ?, disabled_reason = ?, state_changed_at = ?,
			updated_at = ? WHERE endpoint_id = ?`,
			string(model.EndpointDisabled), model.DisabledManual, tx.ts(now), tx.ts(now), id); err != nil {
			return fmt.Errorf("disable endpoint: %w", err)
		}
		if before.State == model.EndpointDisabled {
			return nil // no transition: already disabled (now by hand)
		}
		return tx.appendCircuitEntry(ctx, model.CircuitEntry{EndpointID: id, At: now, Change: model.CircuitDisabled,
			From: before.State, To: model.EndpointDisabled, Reason: model.DisabledManual,
			ConsecutiveFailures: before.ConsecutiveFailures, Subject: subject, Channel: channel})
	})
}

// lockLiveHealth reads a live endpoint's health under a lock held until
// the transaction ends; ErrNotFound when the endpoint does not exist or was
// deleted.
func (s *Store) lockLiveHealth(ctx context.Context, id string) (model.EndpointHealth, error) {
	var rows []healthRow
	err := s.selectAll(ctx, &rows, `SELECT `+endpointHealthColumns+` FROM endpoint_health WHERE endpoint_id = ?
		AND endpoint_id IN (SELECT id FROM endpoints WHERE deleted_at IS NULL)`+s.d.forUpdate, id)
	if err != nil {
		return model.EndpointHealth{}, err
	}
	if len(rows) == 0 {
		return model.EndpointHealth{}, model.ErrNotFound
	}
	return rows[0].health(), nil
}

// EnableEndpoint makes an endpoint healthy again — its circuit closed, its
// counters reset — and, in the same transaction, resumes the occurrences
// that failed because it was disabled: those of its live active (or
// ended) events scheduled within window before now, all of them or — for
// catch_up "latest" — only a row that is its event's newest due instant
// (none for "none"), so enabling twice never resumes an older one. Resumed
// rows are pending at now with their attempt count kept. subject and
// channel (who, through what) go to the circuit history with the change.
// It returns how many it resumed.
func (s *Store) EnableEndpoint(ctx context.Context, id string, window time.Duration, now time.Time,
	subject, channel string) (int, error) {
	if uuid.Validate(id) != nil {
		return 0, fmt.Errorf("enable endpoint: %w", model.ErrNotFound)
	}
	var resumed int
	err := s.WithTx(ctx, func(tx *Store) error {
		before, err := tx.lockLiveHealth(ctx, id)
		if err != nil {
			return err
		}
		_, err = tx.exec(ctx, `UPDATE endpoint_health SET state = ?, disabled_reason = '', state_changed_at = ?,
			opened_at = NULL, cool_down_until = NULL, trial_token = NULL, trial_until = NULL,
			consecutive_failures = 0, window_start = NULL, window_total = 0, window_failures = 0, updated_at = ?
			WHERE endpoint_id = ?`, string(model.EndpointHealthy), tx.ts(now), tx.ts(now), id)
		if err != nil {
			return fmt.Errorf("enable endpoint: %w", err)
		}
		if before.State != model.EndpointHealthy {
			if err := tx.appendCircuitEntry(ctx, model.CircuitEntry{EndpointID: id, At: now,
				Change: model.CircuitEnabled, From: before.State, To: model.EndpointHealthy,
				Subject: subject, Channel: channel}); err != nil {
				return err
			}
		}
		from := tx.ts(now.Add(-window))
		failed, reason := string(model.OccurrenceFailed), model.ReasonEndpointDisabled
		// An ended series (a one-time event whose only instant failed here
		// is inactive) resumes too: its row fires like a replay.
		// The resumed rows leave failed: the statistics uncount them.
		rows, err := tx.updateOccurrences(ctx, `status = ?, next_attempt_at = ?, reason = NULL,
			error_message = NULL, completed_at = NULL, updated_at = ?`,
			[]any{string(model.OccurrencePending), tx.ts(now), tx.ts(now)},
			`status = ? AND reason = ? AND scheduled_at >= ? AND event_id IN
				(SELECT ev.id FROM events ev WHERE ev.endpoint_id = ? AND ev.deleted_at IS NULL AND ev.status IN (?, ?)
				 AND ev.catch_up IN (?, ?))
			AND ((SELECT ev.catch_up FROM events ev WHERE ev.id = occurrences.event_id) = ?
				OR scheduled_at = (SELECT MAX(o2.scheduled_at) FROM occurrences o2 WHERE o2.event_id = occurrences.event_id
					AND o2.scheduled_at <= ?))`,
			[]any{failed, reason, from, id, string(model.EventActive), string(model.EventInactive), "all", "latest",
				"all", tx.ts(now)})
		if err != nil {
			return fmt.Errorf("resume occurrences of endpoint: %w", err)
		}
		resumed = len(rows)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return resumed, nil
}

// EndpointStats summarizes the newest limit attempts sent to an endpoint
// since since: how many succeeded (completed or awaiting an ack) and the
// latency percentiles, computed here so both stores agree.
func (s *Store) EndpointStats(ctx context.Context, id string, since time.Time, limit int) (model.EndpointStats, error) {
	out := model.EndpointStats{Since: since.UTC()}
	if uuid.Validate(id) != nil {
		return out, nil
	}
	var rows []struct {
		Outcome    string `db:"outcome"`
		DurationMS int64  `db:"duration_ms"`
	}
	err := s.selectAll(ctx, &rows, `SELECT outcome, duration_ms FROM attempts WHERE endpoint_id = ? AND started_at >= ?
		ORDER BY started_at DESC LIMIT ?`, id, s.ts(since), limit)
	if err != nil {
		return out, fmt.Errorf("endpoint stats: %w", err)
	}
	out.Attempts = len(rows)
	if len(rows) == 0 {
		return out, nil
	}
	durations := make([]int64, 0, len(rows))
	for _, r := range rows {
		if r.Outcome == string(model.OccurrenceCompleted) || r.Outcome == string(model.OccurrenceAwaitingAck) ||
			r.Outcome == string(model.OccurrenceRunning) {
			out.Succeeded++
		}
		durations = append(durations, r.DurationMS)
	}
	ratio := float64(out.Succeeded) / float64(out.Attempts)
	out.SuccessRatio = &ratio
	slices.Sort(durations)
	out.LatencyP50MS, out.LatencyP90MS, out.LatencyP99MS = nearestRank(durations, 50), nearestRank(durations, 90),
		nearestRank(durations, 99)
	return out, nil
}

// nearestRank is the p-th percentile of sorted values by nearest rank
// (ceil(p × n / 100)), the definition /stats uses.
func nearestRank(sorted []int64, p int) *int64 {
	rank := (p*len(sorted) + 99) / 100
	v := sorted[max(rank, 1)-1]
	return &v
}
