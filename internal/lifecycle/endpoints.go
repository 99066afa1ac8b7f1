package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/outbound"
	"github.com/qhronos/qhronos/internal/repository"
	"github.com/qhronos/qhronos/internal/secrets"
)

// EndpointCheck checks the stored endpoint before a change (the API's
// If-Match); nil means the change is unconditional.
type EndpointCheck = func(e *model.Endpoint) error

// Endpoint health is summarized from the newest attempts of the last hour.
const (
	EndpointStatsPeriod   = time.Hour
	EndpointStatsAttempts = 1000
)

var errEndpointConcurrent = &input.Error{Status: http.StatusConflict,
	Message: "the endpoint was changed concurrently; retry"}

// CreateEndpoint validates an endpoint body and stores it with a healthy
// state. It returns the signing secret in plaintext — the one sent, or a
// generated whsec_ one — which is never shown again. Endpoints are scoped
// by their tags exactly like events.
func (s *Service) CreateEndpoint(ctx context.Context, p auth.Principal, body map[string]json.RawMessage) (
	model.Endpoint, string, error) {
	var e model.Endpoint
	ch, err := s.applyEndpoint(body, &e, true, nil)
	if err != nil {
		return model.Endpoint{}, "", err
	}
	if err := mayTag(p, e.Tags); err != nil {
		return model.Endpoint{}, "", err
	}
	secret := ch.Secret
	if secret == "" {
		if secret, err = secrets.GenerateSecret(); err != nil {
			return model.Endpoint{}, "", err
		}
	}
	if e.Secret, err = s.secrets.Seal([]byte(secret)); err != nil {
		return model.Endpoint{}, "", err
	}
	if err := s.sealAuth(&e, ch); err != nil {
		return model.Endpoint{}, "", err
	}
	now := s.now().UTC().Truncate(time.Microsecond) // as stored
	e.ID, e.Version, e.CreatedBy, e.CreatedAt, e.UpdatedAt = model.NewID(), 1, p.Subject, now, now
	if err := s.store.CreateEndpoint(ctx, &e); err != nil {
		return model.Endpoint{}, "", err
	}
	return e, secret, nil
}

// sealAuth stores the auth's secret half sealed when the change set it.
func (s *Service) sealAuth(e *model.Endpoint, ch endpointChange) error {
	if !ch.AuthChanged {
		return nil
	}
	if ch.AuthSecrets == nil {
		e.AuthSecret = nil
		return nil
	}
	plain, err := json.Marshal(ch.AuthSecrets)
	if err != nil {
		return fmt.Errorf("encode endpoint auth secrets: %w", err)
	}
	e.AuthSecret, err = s.secrets.Seal(plain)
	return err
}

// openAuth opens an endpoint's stored auth secrets (nil without auth).
func (s *Service) openAuth(e *model.Endpoint) (*model.EndpointAuthSecrets, error) {
	if e.Auth == nil || len(e.AuthSecret) == 0 {
		return nil, nil
	}
	plain, err := s.secrets.Open(e.AuthSecret)
	if err != nil {
		return nil, fmt.Errorf("decrypt auth secrets of endpoint %s: %w", e.ID, err)
	}
	var out model.EndpointAuthSecrets
	if err := json.Unmarshal(plain, &out); err != nil {
		return nil, fmt.Errorf("decode auth secrets of endpoint %s: %w", e.ID, err)
	}
	return &out, nil
}

// GetEndpoint returns a live endpoint the principal may read; anything
// else is not found.
func (s *Service) GetEndpoint(ctx context.Context, p auth.Principal, id string) (model.Endpoint, error) {
	e, err := s.store.GetEndpoint(ctx, id)
	if err != nil {
		return model.Endpoint{}, err
	}
	if !p.CanRead(e.Tags) {
		return model.Endpoint{}, errNotFound
	}
	return e, nil
}

// ListEndpoints lists the endpoints the principal may read, newest first.
func (s *Service) ListEndpoints(ctx context.Context, p auth.Principal, f model.EndpointFilter) ([]model.Endpoint, error) {
	f.Scope, f.Unrestricted = p.ScopeFilter()
	return s.store.ListEndpoints(ctx, f)
}

// EndpointStats summarizes an endpoint's recent attempts (the newest
// EndpointStatsAttempts of the last EndpointStatsPeriod) for its answer.
func (s *Service) EndpointStats(ctx context.Context, e *model.Endpoint) (model.EndpointStats, error) {
	since := s.now().UTC().Add(-EndpointStatsPeriod)
	return s.store.EndpointStats(ctx, e.ID, since, EndpointStatsAttempts)
}

// modifiableEndpoint loads an endpoint the principal may change: invisible
// is 404, visible but not fully inside the scope is 403; then check runs.
func (s *Service) modifiableEndpoint(ctx context.Context, p auth.Principal, id string, check EndpointCheck) (model.Endpoint, error) {
	e, err := s.GetEndpoint(ctx, p, id)
	if err != nil {
		return e, err
	}
	return changeable(p, e, e.Tags, check)
}

// UpdateEndpoint applies a PATCH body: absent members keep their value,
// null clears an optional one; write-only auth secrets omitted while the
// auth type stays keep their stored value.
func (s *Service) UpdateEndpoint(ctx context.Context, p auth.Principal, id string, body map[string]json.RawMessage,
	check EndpointCheck) (model.Endpoint, error) {
	e, err := s.modifiableEndpoint(ctx, p, id, check)
	if err != nil {
		return e, err
	}
	stored, err := s.openAuth(&e)
	if err != nil {
		return model.Endpoint{}, err
	}
	version, kind := e.Version, outbound.BrokerKind(e.URL)
	ch, err := s.applyEndpoint(body, &e, false, stored)
	if err != nil {
		return model.Endpoint{}, err
	}
	if _, ok := body["tags"]; ok {
		if err := mayTag(p, e.Tags); err != nil {
			return model.Endpoint{}, err
		}
	}
	if err := s.sealAuth(&e, ch); err != nil {
		return model.Endpoint{}, err
	}
	e.UpdatedAt = s.now().UTC().Truncate(time.Microsecond)
	// What names the endpoint was checked against its kind (a broker's, or
	// HTTP): a URL of another kind would fail all their deliveries.
	newKind := outbound.BrokerKind(e.URL)
	err = s.store.UpdateEndpoint(ctx, &e, version, newKind != kind)
	var inUse *repository.EndpointInUseError
	if errors.As(err, &inUse) {
		return model.Endpoint{}, &input.Error{Status: http.StatusConflict, Field: "url",
			Message: "url: " + kindChangeMessage(inUse, kind, newKind)}
	}
	if errors.Is(err, model.ErrStaleVersion) && check == nil {
		return model.Endpoint{}, errEndpointConcurrent
	}
	if err != nil {
		return model.Endpoint{}, err
	}
	return e, nil
}

// kindChangeMessage says why an endpoint's URL cannot change from one kind
// (a broker's action type, "" for HTTP) to another while e's users name it.
func kindChangeMessage(e *repository.EndpointInUseError, from, to string) string {
	name := func(kind string) string {
		if kind == "" {
			return "an HTTP URL"
		}
		return "a " + kind + " broker's URL"
	}
	return fmt.Sprintf("%s, which deliver to %s: %s would fail every delivery; create another endpoint for it",
		usedBy(e), name(from), name(to))
}

// DeleteEndpoint soft-deletes an endpoint no live event names; otherwise
// 409 saying how many do. With a precondition the delete is fenced by the
// version it checked.
func (s *Service) DeleteEndpoint(ctx context.Context, p auth.Principal, id string, check EndpointCheck) error {
	e, err := s.modifiableEndpoint(ctx, p, id, check)
	if err != nil {
		return err
	}
	var version int64
	if check != nil {
		version = e.Version
	}
	err = s.store.DeleteEndpoint(ctx, e.ID, version, s.now().UTC())
	var inUse *repository.EndpointInUseError
	if errors.As(err, &inUse) {
		return &input.Error{Status: http.StatusConflict, Message: inUseMessage(inUse)}
	}
	if errors.Is(err, model.ErrStaleVersion) && check == nil {
		return errEndpointConcurrent
	}
	return err
}

// inUseMessage says what still delivers to an endpoint being deleted.
func inUseMessage(e *repository.EndpointInUseError) string {
	them := "them"
	if e.Events+e.Subscriptions == 1 {
		them = "it"
	}
	return fmt.Sprintf("%s; point %s elsewhere or delete %s first", usedBy(e), them, them)
}

// usedBy says what names an endpoint: "endpoint is used by 2 events and 1
// subscription".
func usedBy(e *repository.EndpointInUseError) string {
	var users []string
	for _, u := range []struct {
		n    int
		what string
	}{{e.Events, "event"}, {e.Subscriptions, "subscription"}} {
		switch {
		case u.n == 1:
			users = append(users, "1 "+u.what)
		case u.n > 1:
			users = append(users, fmt.Sprintf("%d %ss", u.n, u.what))
		}
	}
	return "endpoint is used by " + strings.Join(users, " and ")
}

// DisableEndpoint disables an endpoint by hand: its due occurrences fail
// with reason endpoint_disabled until it is enabled.
func (s *Service) DisableEndpoint(ctx context.Context, p auth.Principal, id string) (model.Endpoint, error) {
	e, err := s.modifiableEndpoint(ctx, p, id, nil)
	if err != nil {
		return e, err
	}
	if err := s.store.DisableEndpoint(ctx, e.ID, s.now().UTC().Truncate(time.Microsecond), p.Subject, p.Via()); err != nil {
		return model.Endpoint{}, err
	}
	return s.store.GetEndpoint(ctx, e.ID)
}

// EnableEndpoint makes an endpoint healthy again and resumes the
// occurrences that failed while it was disabled, within the catch-up
// window and as each event's catch_up says; it returns how many resumed
// and wakes the dispatchers for them.
func (s *Service) EnableEndpoint(ctx context.Context, p auth.Principal, id string) (model.Endpoint, int, error) {
	e, err := s.modifiableEndpoint(ctx, p, id, nil)
	if err != nil {
		return e, 0, err
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	resumed, err := s.store.EnableEndpoint(ctx, e.ID, s.opts.Window.CatchUp, now, p.Subject, p.Via())
	if err != nil {
		return model.Endpoint{}, 0, err
	}
	if resumed > 0 {
		s.wake(ctx, &now)
	}
	e, err = s.store.GetEndpoint(ctx, e.ID)
	return e, resumed, err
}

// CircuitHistory returns a page of an endpoint's circuit transitions,
// newest first, when the principal may read the endpoint; anything else is
// not found.
func (s *Service) CircuitHistory(ctx context.Context, p auth.Principal, id string, before *model.PageCursor,
	limit int) ([]model.CircuitEntry, error) {
	e, err := s.GetEndpoint(ctx, p, id)
	if err != nil {
		return nil, err
	}
	return s.store.ListCircuitHistory(ctx, e.ID, before, limit)
}

// RotateEndpointSecret issues a new signing secret, returned once in
// plaintext; the previous one keeps signing beside it until grace ends.
func (s *Service) RotateEndpointSecret(ctx context.Context, p auth.Principal, id string, grace time.Duration) (
	string, model.Endpoint, error) {
	e, err := s.modifiableEndpoint(ctx, p, id, nil)
	if err != nil {
		return "", e, err
	}
	secret, err := secrets.GenerateSecret()
	if err != nil {
		return "", model.Endpoint{}, err
	}
	sealed, err := s.secrets.Seal([]byte(secret))
	if err != nil {
		return "", model.Endpoint{}, err
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	next := secrets.Sealed{Current: e.Secret}.Rotate(sealed, now, grace)
	e.Secret, e.PreviousSecret, e.PreviousSecretExpires, e.UpdatedAt = next.Current, next.Previous, next.PreviousUntil, now
	if err := s.store.RotateEndpointSecret(ctx, &e, e.Version); err != nil {
		if errors.Is(err, model.ErrStaleVersion) {
			return "", model.Endpoint{}, errEndpointConcurrent
		}
		return "", model.Endpoint{}, err
	}
	return secret, e, nil
}
