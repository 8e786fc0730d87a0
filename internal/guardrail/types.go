package guardrail

// scannerTypes is the fixed catalog of scanner types, in the order GET /guardrails/scanners
// lists them. It is never modified after package initialisation.
var scannerTypes = []*ScannerType{
	{Type: "prompt_injection", Name: "Prompt injection", Redacts: true, Options: injectionOptions, build: buildInjection,
		Description: "Scores text for attempts to override the agent's instructions: \"ignore previous instructions\", requests for the system prompt, " +
			"jailbreak personas, fake chat-template delimiters. Heuristic phrase patterns with weights; fails at or above the threshold."},
	{Type: "pii", Name: "Personal data", Redacts: true, sensitive: true, Options: piiOptions, build: buildPII,
		Description: "Finds e-mail addresses, phone numbers, payment card numbers (Luhn-checked), US Social Security numbers, IBANs (mod-97 checked) " +
			"and IP addresses. Redaction replaces each with its kind, e.g. [EMAIL]."},
	{Type: "secrets", Name: "Secrets", Redacts: true, sensitive: true, Options: secretsOptions, build: buildSecrets,
		Description: "Finds API keys and tokens by their published formats (OpenAI, Anthropic, AWS, GitHub, Slack, Stripe, Google, JWTs, " +
			"private key blocks, password assignments) and long random-looking tokens by their entropy."},
	{Type: "toxicity", Name: "Toxicity", Redacts: true, sensitive: true, Options: toxicityOptions, build: buildToxicity,
		Description: "Finds profanity, insults, threats, encouragement of self-harm and dehumanising language from a graded word list " +
			"(low, medium, high); the score is the worst severity found."},
	{Type: "banned_topics", Name: "Banned topics", Redacts: true, Options: topicsOptions, build: buildTopics,
		Description: "Fails text that talks about topics the agent must stay out of, recognised by keyword lists: built-in ones " +
			"(politics, medical advice, gambling…) or your own."},
	{Type: "regex", Name: "Patterns", Redacts: true, sensitive: true, Options: regexOptions, build: buildRegex,
		Description: "Fails text matching any of your regular expressions (or, with must_match, matching none of them)."},
	{Type: "max_length", Name: "Maximum length", Redacts: true, Options: maxLengthOptions, build: buildMaxLength,
		Description: "Fails text longer than max_chars characters; redaction truncates it."},
	{Type: "json_schema", Name: "JSON schema", Redacts: false, Options: jsonSchemaOptions, build: buildJSONSchema,
		Description: "Fails text that is not JSON or does not satisfy a JSON Schema; for agents whose output feeds another program."},
}
