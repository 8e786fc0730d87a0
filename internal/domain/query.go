package domain

// TotalCap bounds the count behind a list's total: counting stops past it, so a page costs
// the same however much history the workspace keeps. A total above TotalCap is a lower bound.
const TotalCap = 10_000
