package openclaude

import (
	"context"
	"errors"

	"github.com/parapet-dev/parapet/engine"
)

// nilEngine refuses everything; the fuzz targets never reach it.
type nilEngine struct{}

func (nilEngine) Submit(context.Context, engine.Message) (*engine.Turn, error) {
	return nil, errors.New("no engine")
}
func (nilEngine) ResolveApproval(string, string, bool, string) error { return errors.New("no engine") }
