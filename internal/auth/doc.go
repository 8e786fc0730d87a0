// Package auth holds the pure building blocks of request authentication: API key generation,
// validation and hashing, scope checks, IP allowlists (including the client address behind
// trusted proxies) and allowed-origin rules. It does no I/O and touches no store, so the HTTP
// layer can compose these pieces and every rule can be tested on its own.
package auth
