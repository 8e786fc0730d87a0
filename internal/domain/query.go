package domain

// TotalCap bounds the count behind a list's total: counting stops past it, so a page costs
// the same however much history the workspace keeps (the count reads at most TotalCap + 1
// index entries; BenchmarkHistory's filtered lists). A total above TotalCap is a lower bound.
// It is 1,000 rather than 10,000: a filter matching a few thousand runs of a small history
// (one agent of four at 10 K runs) then costs what it costs over a long one.
const TotalCap = 1_000
