// Package contract holds the tests that hold the served OpenAPI documents (server and
// emulator) to what third-party tools expect: Redocly and Spectral lint them with no error,
// oapi-codegen generates a Go client that builds, and openapi-typescript generates types that
// a TypeScript file using openapi-fetch compiles against.
//
// The npm tools are pinned in package.json and installed with `npm ci --prefix
// internal/contract` (.ci/run does it); oapi-codegen is a `tool` of go.mod. Without them the
// tests skip, saying how to install them, unless AGENTPLANE_REQUIRE_CONTRACT_TOOLS is set
// (as .ci/run sets it), when they fail. Nothing is downloaded while the tests run.
package contract
