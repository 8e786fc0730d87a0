// Package openaichat calls the OpenAI Chat Completions protocol, spoken by OpenAI and by
// most OpenAI-compatible servers (DeepSeek, xAI, Mistral, Groq, Together, OpenRouter,
// Ollama, vLLM), through the official SDK, github.com/openai/openai-go/v3.
//
// Every call streams (with stream_options.include_usage), so that content reaches the
// caller as the model writes it; the reasoning that compatible servers add to the deltas
// (reasoning_content or reasoning, fields the SDK does not know) is read from the SDK's
// extra JSON fields.
package openaichat
