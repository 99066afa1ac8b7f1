package client

// types.gen.go is generated from the server's OpenAPI document (3.0.3) with a
// pinned oapi-codegen; TestTypesMatchDocument and TestEveryOperationIsCovered
// fail when the document and this package disagree. After changing
// internal/api/openapi.json run:
//
//	go generate ./client
//
//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2 -config oapi-codegen.yaml ../internal/api/openapi.json
