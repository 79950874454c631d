package host

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/parapet-dev/parapet/engine"
	"github.com/parapet-dev/parapet/llm"
)

// subAgentLLM is the LLM a sub-agent gets: the agent's. With the scripted
// provider each sub-agent replays its own file next to the agent's script:
// script.yaml → script.<name>.yaml.
func (h Config) subAgentLLM(name string) (engine.SubAgentLLM, error) {
	l := engine.SubAgentLLM{Provider: h.Provider, Model: h.Model, BaseURL: h.BaseURL, APIKeyEnv: h.APIKeyEnv}
	if h.Provider == llm.ProviderScripted {
		path := SubAgentScriptPath(h.ScriptPath, name)
		if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
			return l, fmt.Errorf("the scripted provider has no replies for sub-agent %q: write them to %s", name, path)
		}
		l.ScriptPath = path
	}
	return l, nil
}

// SubAgentScriptPath is the scripted replies file of sub-agent name.
func SubAgentScriptPath(agentScript, name string) string {
	ext := filepath.Ext(agentScript)
	return strings.TrimSuffix(agentScript, ext) + "." + name + ext
}

// spawnSubAgent starts one sandboxed sub-agent process (the engine's
// SpawnSubAgent): this binary as internal-subagent, with its connection
// to the engine and its token on inherited descriptors, the LLM flags it
// must prepare before sandboxing, and SIGKILL if the engine dies.
func (h *Host) spawnSubAgent(_ context.Context, spec engine.SubAgentSpec, stderr io.Writer) (func() error, func(), error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, fmt.Errorf("find own executable: %w", err)
	}
	args := []string{"internal-subagent", "--engine-fd", "3", "--name", spec.Name,
		"--workspace", h.cfg.Workspace, "--provider", spec.LLM.Provider, "--log-level", h.cfg.LogLevel}
	for _, f := range []struct{ flag, v string }{
		{"--model", spec.LLM.Model}, {"--base-url", spec.LLM.BaseURL}, {"--api-key-env", spec.LLM.APIKeyEnv},
		{"--script", spec.LLM.ScriptPath}, {"--canary-dir", h.cfg.canaryDir},
	} {
		if f.v != "" {
			args = append(args, f.flag, f.v)
		}
	}
	if h.cfg.AllowUnsandboxed {
		args = append(args, "--allow-unsandboxed")
	}
	cmd := exec.Command(self, args...)
	cmd.Dir = h.cfg.Workspace
	cmd.Env = childEnv(os.Environ())
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.ExtraFiles = []*os.File{spec.Conn} // descriptor 3
	release, err := PassToken(cmd, spec.Token)
	if err != nil {
		return nil, nil, err
	}
	err = cmd.Start()
	release()
	if err != nil {
		return nil, nil, err
	}
	h.log.Debug("sub-agent process started", "name", spec.Name, "pid", cmd.Process.Pid)
	var once sync.Once
	kill := func() { once.Do(func() { _ = cmd.Process.Kill() }) }
	return cmd.Wait, kill, nil
}
