package client

import (
	"context"
	"net/http"
)

// PortalLinksService is /portal-links: one-time links to the portal, a
// reduced console limited to some tags where your customer manages their
// own endpoints and subscriptions.
type PortalLinksService struct{ c *Client }

// Create makes a portal link (POST /portal-links): in.Tags (required, each
// inside the token's scope), in.ExpiresIn ("1h" by default, at most "24h")
// and in.ReturnURL (the portal's Back link). Open the answer's URL once,
// before its ExpiresAt; a token that may not create what carries the tags
// gets ErrForbidden.
func (s *PortalLinksService) Create(ctx context.Context, in PortalLinkRequest) (*PortalLink, error) {
	r := newRequest(http.MethodPost, "/portal-links", nil)
	r.body = in
	var out PortalLink
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Redeem uses a portal link's code, once (POST /portal-links/redeem; no
// token needed): the answer's Token is the portal session's, limited to
// the link's tags. What the console does when the link is opened; a used,
// expired or unknown code is ErrNotFound.
func (s *PortalLinksService) Redeem(ctx context.Context, code string) (*PortalSession, error) {
	r := newRequest(http.MethodPost, "/portal-links/redeem", nil)
	r.body = PortalRedeemRequest{Code: code}
	var out PortalSession
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
