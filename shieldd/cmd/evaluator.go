package cmd

import (
	"log/slog"

	"github.com/urfave/cli/v2"
	"github.com/urfave/cli/v2/altsrc"

	"github.com/parapet-dev/parapet/llm"
	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/shieldd/evaluator"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
)

// evaluatorFlags configure the optional Tier 2 LLM evaluator.
func evaluatorFlags() []cli.Flag {
	return []cli.Flag{
		altsrc.NewStringFlag(&cli.StringFlag{Name: "evaluator-provider", Usage: "Tier 2 LLM evaluator: openai (any OpenAI-compatible endpoint) or anthropic; empty: none, tier 2 goes to a human", EnvVars: []string{"SHIELDD_EVALUATOR_PROVIDER"}}),
		altsrc.NewStringFlag(&cli.StringFlag{Name: "evaluator-base-url", Usage: "evaluator endpoint `URL` (default: the provider's, or $OPENAI_BASE_URL / $ANTHROPIC_BASE_URL)", EnvVars: []string{"SHIELDD_EVALUATOR_BASE_URL"}}),
		altsrc.NewStringFlag(&cli.StringFlag{Name: "evaluator-model", Usage: "evaluator `MODEL` name", EnvVars: []string{"SHIELDD_EVALUATOR_MODEL"}}),
		altsrc.NewStringFlag(&cli.StringFlag{Name: "evaluator-api-key-env", Usage: "environment `VARIABLE` holding the evaluator's API key (default OPENAI_API_KEY / ANTHROPIC_API_KEY)", EnvVars: []string{"SHIELDD_EVALUATOR_API_KEY_ENV"}}),
		altsrc.NewDurationFlag(&cli.DurationFlag{Name: "evaluator-timeout", Value: evaluator.DefaultTimeout, Usage: "bound on one evaluation's model call, retries included", EnvVars: []string{"SHIELDD_EVALUATOR_TIMEOUT"}}),
		altsrc.NewStringFlag(&cli.StringFlag{Name: "evaluator-on-unavailable", Value: "escalate", Usage: "decision when the model can't answer or the budget is spent: escalate, block or allow", EnvVars: []string{"SHIELDD_EVALUATOR_ON_UNAVAILABLE"}}),
		altsrc.NewIntFlag(&cli.IntFlag{Name: "evaluator-daily-budget", Value: 1000, Usage: "model calls per UTC day (0: unlimited)", EnvVars: []string{"SHIELDD_EVALUATOR_DAILY_BUDGET"}}),
		altsrc.NewStringFlag(&cli.StringFlag{Name: "evaluator-state-file", Usage: "`FILE` keeping today's call count across restarts (required with a budget)", EnvVars: []string{"SHIELDD_EVALUATOR_STATE_FILE"}}),
	}
}

// buildEvaluator reads the evaluator flags. With no provider it returns a
// nil Evaluator (not a typed nil), and the pipeline sends tier 2 to a human.
func buildEvaluator(c *cli.Context, log *slog.Logger) (pipeline.Evaluator, error) {
	if c.String("evaluator-provider") == "" {
		return nil, nil
	}
	on, err := evaluator.ParseOnUnavailable(c.String("evaluator-on-unavailable"))
	if err != nil {
		return nil, err
	}
	timeout := c.Duration("evaluator-timeout")
	if timeout <= 0 {
		timeout = evaluator.DefaultTimeout
	}
	ev, err := evaluator.New(evaluator.Config{
		LLM: llm.Config{
			Provider: c.String("evaluator-provider"), BaseURL: c.String("evaluator-base-url"),
			Model: c.String("evaluator-model"), APIKeyEnv: c.String("evaluator-api-key-env"),
		},
		Timeout: timeout, OnUnavailable: on,
		DailyBudget: c.Int("evaluator-daily-budget"), StateFile: c.String("evaluator-state-file"),
		Logger: log,
	})
	if err != nil {
		return nil, err
	}
	provider, model := ev.Describe()
	log.Info("tier 2 evaluator", "provider", provider, "model", model, "timeout", timeout,
		"on_unavailable", c.String("evaluator-on-unavailable"), "daily_budget", c.Int("evaluator-daily-budget"),
		"calls_today", ev.CallsToday())
	if on == pb.VerdictDecision_VERDICT_DECISION_ALLOW {
		log.Warn("tier 2: --evaluator-on-unavailable allow lets actions run unjudged whenever the model is down or the budget is spent")
	}
	return ev, nil
}
