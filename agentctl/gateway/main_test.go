package gateway_test

import (
	"testing"

	"github.com/parapet-dev/parapet/engine/doors/doorstest"
)

func TestMain(m *testing.M) { doorstest.Main(m) }
