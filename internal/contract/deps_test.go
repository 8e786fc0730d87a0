package contract

// The generated Go client imports the oapi-codegen runtime: importing it here keeps it (and
// its go.sum lines) in the module, so the client builds offline from the module cache.
import _ "github.com/oapi-codegen/runtime"
