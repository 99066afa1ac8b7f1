package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/qhronos/qhronos/internal/actions"
	"github.com/qhronos/qhronos/internal/auth"
	"github.com/qhronos/qhronos/internal/input"
	"github.com/qhronos/qhronos/internal/model"
	"github.com/qhronos/qhronos/internal/recurrence"
)

// errorBody is the JSON every error answer carries.
type errorBody struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
}

var (
	errForbidden = &input.Error{Status: http.StatusForbidden, Message: "insufficient access"}
)

// handler is a gin handler that returns its failure instead of writing it.
type handler func(c *gin.Context) error

// handle adapts a handler; the one place that turns errors into answers.
func (s *Server) handle(h handler) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := h(c); err != nil {
			s.writeError(c, err)
		}
	}
}

// writeError maps an error to its HTTP answer. 4xx are logged at debug (a
// client's mistake is not the operator's news), 5xx at error with the
// details only in the log.
func (s *Server) writeError(c *gin.Context, err error) {
	status, body := s.classify(err)
	if status == http.StatusServiceUnavailable && c.Writer.Header().Get("Retry-After") == "" {
		c.Header("Retry-After", strconv.Itoa(retryAfterUnavailable))
	}
	log := s.log.With(zap.String("request_id", requestID(c)), zap.Int("status", status),
		zap.String("route", c.FullPath()))
	if status >= 500 {
		log.Error("request failed", zap.Error(err))
	} else {
		log.Debug("request rejected", zap.String("reason", body.Error))
	}
	c.AbortWithStatusJSON(status, body)
}

func (s *Server) classify(err error) (int, errorBody) {
	var apiErr *input.Error
	var fieldErr *recurrence.FieldError
	var paramErr *actions.ParamError
	var maxBytes *http.MaxBytesError
	var authField *auth.FieldError
	switch {
	case errors.As(err, &apiErr):
		return apiErr.Status, errorBody{Error: apiErr.Message, Field: apiErr.Field}
	case errors.As(err, &fieldErr):
		return http.StatusBadRequest, errorBody{Error: fieldErr.Error(), Field: fieldErr.Field}
	case errors.As(err, &paramErr):
		return http.StatusBadRequest, errorBody{Error: paramErr.Error(), Field: "action.params." + paramErr.Param}
	case errors.As(err, &maxBytes):
		return http.StatusRequestEntityTooLarge, errorBody{Error: fmt.Sprintf("request body exceeds %d bytes", maxBytes.Limit)}
	case errors.Is(err, actions.ErrUnknownType):
		return http.StatusBadRequest, errorBody{Error: "action.type: unknown action type", Field: "action.type"}
	case errors.As(err, &authField):
		return http.StatusBadRequest, errorBody{Error: authField.Error(), Field: authField.Field}
	case errors.Is(err, auth.ErrForbidden):
		return http.StatusForbidden, errorBody{Error: err.Error()}
	case errors.Is(err, auth.ErrUnauthenticated):
		return http.StatusUnauthorized, errorBody{Error: err.Error()}
	case errors.Is(err, model.ErrNotFound):
		return http.StatusNotFound, errorBody{Error: "not found"}
	case errors.Is(err, model.ErrStaleVersion):
		return http.StatusPreconditionFailed, errorBody{Error: "the resource changed; fetch it again (version mismatch)"}
	case errors.Is(err, model.ErrConflict):
		return http.StatusConflict, errorBody{Error: "conflict"}
	case errors.Is(err, model.ErrStorageFull):
		return http.StatusServiceUnavailable, errorBody{Error: "storage is full: the database cannot write until space is freed; retry later"}
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled), isUnavailable(err):
		return http.StatusServiceUnavailable, errorBody{Error: "service temporarily unavailable"}
	default:
		return http.StatusInternalServerError, errorBody{Error: "internal error"}
	}
}

// retryAfterUnavailable is the Retry-After (seconds) of a 503: the database
// unreachable or its storage full.
const retryAfterUnavailable = 5
