package api

import (
	_ "embed"
	"net/http"

	"github.com/gin-gonic/gin"
)

// OpenAPIDocument describes every route; a test validates real responses of
// the test suite against it so it stays true.
//
//go:embed openapi.json
var OpenAPIDocument []byte

func (s *Server) openAPI(c *gin.Context) {
	c.Data(http.StatusOK, "application/json", OpenAPIDocument)
}
