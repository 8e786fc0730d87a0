package domain

// ScoreAgreement compares two score names given to the same executions, typically an
// automated judge's and a person's: how often they agree and how far beyond chance.
type ScoreAgreement struct {
	Judge          string   `json:"judge" doc:"The first score name (e.g. an LLM judge's)."`
	Human          string   `json:"human" doc:"The second score name (e.g. the reviewers')."`
	DataType       *string  `json:"data_type" doc:"The data type both names share; null when no execution has both."`
	Count          int      `json:"count" doc:"Executions that have a score of each name (the newest of each counts)."`
	ExactAgreement *float64 `json:"exact_agreement" doc:"The share of those executions whose two scores are equal (the same number, label or boolean); null when count is 0."`
	// Kappa is Cohen's kappa, for categorical and boolean scores.
	Kappa *float64 `json:"kappa" doc:"Categorical and boolean: Cohen's kappa, agreement beyond chance (1 perfect, 0 chance); null for numeric scores or when chance agreement is total."`
	// Pearson is the correlation of numeric scores.
	Pearson *float64 `json:"pearson" doc:"Numeric: Pearson's correlation of the two scores; null for other types, fewer than 2 executions, or a name whose scores never vary."`
	// MeanAbsoluteDifference is how far numeric scores are apart on average.
	MeanAbsoluteDifference *float64 `json:"mean_absolute_difference" doc:"Numeric: the mean of |judge - human|; null for other types."`
}
