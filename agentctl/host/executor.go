package host

import (
	"encoding/json"
	"log/slog"
	"os"

	"github.com/parapet-dev/parapet/sandbox"
)

// Executor statuses beyond the sandbox's own: the operator ran commands
// without the executor on a host that has none (--allow-unconfined).
const executorUnconfined = "unconfined"

// ExecutorSetup is what Start learns about the confined executor:
// the executor to give the tools (nil: none), whether commands may run
// unconfined, and the status and probe report for status and the run's
// sandbox event.
type ExecutorSetup struct {
	executor   *sandbox.Executor
	unconfined bool
	Status     string
	ReportJSON string
}

// setupExecutor starts the executor over this binary and proves it with
// its canary probes. Fail closed: commands run confined, or, only where
// the kernel has no Landlock or seccomp and the operator said
// --allow-unconfined, unconfined; a partial confinement is never used.
func setupExecutor(self string, allowUnconfined bool, log *slog.Logger) ExecutorSetup {
	x, err := sandbox.NewExecutor(self)
	if err != nil {
		rep := sandbox.Report{Status: sandbox.StatusUnavailable, Probes: []sandbox.ProbeResult{}, Error: err.Error()}
		if allowUnconfined {
			log.Warn("COMMANDS RUN UNCONFINED, with the engine's full rights: " + err.Error() + "; --allow-unconfined was given")
			return ExecutorSetup{unconfined: true, Status: executorUnconfined, ReportJSON: marshalReport(rep)}
		}
		log.Error("no confined executor on this host: commands (execute_command, git) will be refused; pass --allow-unconfined to run them unconfined", "error", err)
		return ExecutorSetup{Status: string(rep.Status), ReportJSON: marshalReport(rep)}
	}
	dir, err := os.MkdirTemp("", "parapet-exec-probe-")
	var rep sandbox.Report
	if err != nil {
		rep = sandbox.Report{Status: sandbox.StatusPartial, Probes: []sandbox.ProbeResult{}, Error: "probe dir: " + err.Error()}
	} else {
		rep = x.Probe(dir)
		os.RemoveAll(dir)
	}
	if rep.Status == sandbox.StatusUnavailable && allowUnconfined {
		// Landlock and seccomp are there, but not the namespaces the helper needs.
		x.Close()
		log.Warn("COMMANDS RUN UNCONFINED, with the engine's full rights: " + rep.Error + "; --allow-unconfined was given")
		return ExecutorSetup{unconfined: true, Status: executorUnconfined, ReportJSON: marshalReport(rep)}
	}
	if rep.Status != sandbox.StatusSandboxed {
		x.Close()
		log.Error("the confined executor's canary probes failed: commands (execute_command, git) will be refused", "status", rep.Status, "error", rep.Error)
		return ExecutorSetup{Status: string(rep.Status), ReportJSON: marshalReport(rep)}
	}
	return ExecutorSetup{executor: x, Status: string(rep.Status), ReportJSON: marshalReport(rep)}
}

func marshalReport(rep sandbox.Report) string {
	b, err := json.Marshal(rep)
	if err != nil {
		return `{"status":"partial","error":"report not encodable"}`
	}
	return string(b)
}

// ProbeExecutor proves the confined executor as Start does, without
// keeping it (doctor's check).
func ProbeExecutor(self string) sandbox.Report {
	x := setupExecutor(self, false, slog.New(slog.DiscardHandler))
	if x.executor != nil {
		x.executor.Close()
	}
	var rep sandbox.Report
	if err := json.Unmarshal([]byte(x.ReportJSON), &rep); err != nil {
		rep = sandbox.Report{Status: sandbox.StatusPartial, Error: err.Error()}
	}
	return rep
}
