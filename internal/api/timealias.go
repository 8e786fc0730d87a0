package api

import "time"

type stdTime = time.Time
