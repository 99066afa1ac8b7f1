package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// TokensService is /tokens (admin).
type TokensService struct{ c *Client }

// Create mints a JWT (POST /tokens); the token is in the answer only.
func (s *TokensService) Create(ctx context.Context, in TokenRequest) (*Token, error) {
	r := newRequest(http.MethodPost, "/tokens", nil)
	r.body = in
	var out Token
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// List lists tokens, without the JWTs (GET /tokens).
func (s *TokensService) List(ctx context.Context) ([]Token, error) {
	var out []Token
	if _, err := s.c.do(ctx, newRequest(http.MethodGet, "/tokens", nil), &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Revoke revokes a token on every instance (DELETE /tokens/{id}).
func (s *TokensService) Revoke(ctx context.Context, id string) error {
	_, err := s.c.do(ctx, newRequest(http.MethodDelete, "/tokens/"+pathID(id), nil), nil)
	return err
}

// ListNewest lists at most limit tokens, newest first, without the JWTs
// (GET /tokens?limit=).
func (s *TokensService) ListNewest(ctx context.Context, limit int) ([]Token, error) {
	r := newRequest(http.MethodGet, "/tokens", nil)
	r.query = url.Values{"limit": {strconv.Itoa(limit)}}
	var out []Token
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return out, nil
}
