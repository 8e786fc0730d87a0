// Package gemini calls Google's Gemini API (generateContent, streamed) through the
// official SDK, google.golang.org/genai.
//
// The SDK is configured so that nothing in the environment can redirect it: the backend,
// base URL and API key are always explicit (an Endpoint without a key is refused before
// the SDK could fall back to GOOGLE_API_KEY or GEMINI_API_KEY), and its own retries and
// automatic stream continuation are off, because llm.Call decides about retries.
package gemini
