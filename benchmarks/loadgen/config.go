package main

import (
	"errors"
	"fmt"
	"time"
)

// Modes.
const (
	ModeEvaluate = "evaluate"
	ModeHealth   = "health"
	// ModeBoth runs health, then evaluate, at the same concurrency and
	// duration, and compares them.
	ModeBoth = "both"
)

// Config is one load-generator run.
type Config struct {
	Addr        string
	Concurrency int
	// Conns is the number of gRPC connections the workers share.
	Conns    int
	Duration time.Duration
	Warmup   time.Duration
	Mode     string
	// Distinct makes the first Distinct evaluate requests (warm-up
	// included) unique, so the server's cache fills with that many verdicts.
	Distinct uint64
	// Unique makes every evaluate request unique: the uncached server path.
	Unique bool
	// MaxRequests bounds the measured requests of each phase (0: no bound).
	MaxRequests int64
	// MetricsURL is scraped after the run when set.
	MetricsURL string
}

func (c Config) validate() error {
	var errs []error
	switch c.Mode {
	case ModeEvaluate, ModeHealth, ModeBoth:
	default:
		errs = append(errs, fmt.Errorf("--mode must be evaluate, health or both, not %q", c.Mode))
	}
	if c.Addr == "" {
		errs = append(errs, errors.New("--addr is empty"))
	}
	if c.Concurrency < 1 {
		errs = append(errs, fmt.Errorf("--concurrency must be at least 1, got %d", c.Concurrency))
	}
	if c.Conns < 1 {
		errs = append(errs, fmt.Errorf("--conns must be at least 1, got %d", c.Conns))
	}
	if c.Duration <= 0 {
		errs = append(errs, fmt.Errorf("--duration must be positive, got %s", c.Duration))
	}
	if c.Warmup < 0 {
		errs = append(errs, fmt.Errorf("--warmup must not be negative, got %s", c.Warmup))
	}
	if c.MaxRequests < 0 {
		errs = append(errs, fmt.Errorf("--max-requests must not be negative, got %d", c.MaxRequests))
	}
	return errors.Join(errs...)
}
