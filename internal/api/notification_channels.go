package api

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/redact"
)

// NotificationChannels manages the operator channels stored through the
// API (notify.Admin): validation, sealed secrets, the test send.
type NotificationChannels interface {
	Create(ctx context.Context, by string, members map[string]json.RawMessage) (model.NotificationChannel, string, error)
	Get(ctx context.Context, id string) (model.NotificationChannel, error)
	List(ctx context.Context) ([]model.NotificationChannel, error)
	Update(ctx context.Context, id string, members map[string]json.RawMessage) (model.NotificationChannel, error)
	Delete(ctx context.Context, id string) error
	Test(ctx context.Context, id, by string) (sendErr error, err error)
	Notices(ctx context.Context, id string, before *model.PageCursor, limit int) ([]model.SentNotice, error)
}

// notificationChannelRoutes registers /notification-channels, admin only.
func (s *Server) notificationChannelRoutes(admin *gin.RouterGroup) {
	admin.POST("/notification-channels", s.handle(s.createNotificationChannel))
	admin.GET("/notification-channels", s.handle(s.listNotificationChannels))
	admin.GET("/notification-channels/:id", s.handle(s.getNotificationChannel))
	admin.PATCH("/notification-channels/:id", s.handle(s.updateNotificationChannel))
	admin.DELETE("/notification-channels/:id", s.handle(s.deleteNotificationChannel))
	admin.POST("/notification-channels/:id/test", s.handle(s.testNotificationChannel))
	admin.GET("/notification-channels/:id/notices", s.handle(s.notificationChannelNotices))
}

// notificationChannelJSON describes a channel; a webhook's secret appears
// only in the answer that creates it, and its url, often a credential
// itself (a Slack webhook's path), only as redact.SecretURL shows it.
type notificationChannelJSON struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Type      string    `json:"type"`
	URL       string    `json:"url,omitempty"`
	Secret    string    `json:"secret,omitempty"`
	SecretSet bool      `json:"secret_set"`
	To        []string  `json:"to"`
	Kinds     []string  `json:"kinds"`
	Tags      []string  `json:"tags"`
	CreatedBy string    `json:"created_by"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func toNotificationChannelJSON(r *redact.Redactor, c model.NotificationChannel) notificationChannelJSON {
	return notificationChannelJSON{ID: c.ID, Name: c.Name, Type: c.Type, URL: r.SecretURL(c.URL), SecretSet: len(c.Secret) > 0,
		To: c.To, Kinds: c.Kinds, Tags: nonNilTags(c.Tags), CreatedBy: c.CreatedBy, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

// nonNilTags answers an empty list rather than null.
func nonNilTags(tags []string) []string {
	if tags == nil {
		return []string{}
	}
	return tags
}

func (s *Server) createNotificationChannel(c *gin.Context) error {
	members, _, err := readObject(c)
	if err != nil {
		return err
	}
	ch, secret, err := s.Notifications.Create(c.Request.Context(), principal(c).Subject, members)
	if err != nil {
		return err
	}
	out := toNotificationChannelJSON(s.redact, ch)
	out.Secret = secret
	c.JSON(http.StatusCreated, out)
	return nil
}

func (s *Server) listNotificationChannels(c *gin.Context) error {
	list, err := s.Notifications.List(c.Request.Context())
	if err != nil {
		return err
	}
	out := make([]notificationChannelJSON, 0, len(list))
	for _, ch := range list {
		out = append(out, toNotificationChannelJSON(s.redact, ch))
	}
	c.JSON(http.StatusOK, out)
	return nil
}

func (s *Server) getNotificationChannel(c *gin.Context) error {
	ch, err := s.Notifications.Get(c.Request.Context(), c.Param("id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, toNotificationChannelJSON(s.redact, ch))
	return nil
}

func (s *Server) updateNotificationChannel(c *gin.Context) error {
	members, _, err := readObject(c)
	if err != nil {
		return err
	}
	ch, err := s.Notifications.Update(c.Request.Context(), c.Param("id"), members)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, toNotificationChannelJSON(s.redact, ch))
	return nil
}

func (s *Server) deleteNotificationChannel(c *gin.Context) error {
	if err := s.Notifications.Delete(c.Request.Context(), c.Param("id")); err != nil {
		return err
	}
	c.Status(http.StatusNoContent)
	return nil
}

// testResultJSON is the answer of a test send: whether the channel took the
// notice, and its failure otherwise.
type testResultJSON struct {
	Delivered bool   `json:"delivered"`
	Error     string `json:"error,omitempty"`
}

func (s *Server) testNotificationChannel(c *gin.Context) error {
	sendErr, err := s.Notifications.Test(c.Request.Context(), c.Param("id"), principal(c).Subject)
	if err != nil {
		return err
	}
	out := testResultJSON{Delivered: sendErr == nil}
	if sendErr != nil {
		out.Error = sendErr.Error()
	}
	c.JSON(http.StatusOK, out)
	return nil
}
