package heuristics

import "strings"

// checkFamilies runs the per-command analyses of the rule families added
// with issue 12: defense impairment, system disruption, account changes,
// trust-store changes, tunnels, file transfer, cloud and cluster secrets.
// Each judges the program with its options and operands, and the paths
// it writes resolved against the caller's directories.
func (s *scan) checkFamilies(cs *cmdScan) {
	// Chromium's option, which any Electron app takes as well: one look
	// at the line before any program is asked.
	debugAddr := strings.Contains(cs.act.Command, "remote-debugging-address")
	for i := range cs.views {
		if i&63 == 63 && s.expired() {
			return
		}
		v := &cs.views[i]
		if v.prog == "" && len(v.c.Assigns) == 0 {
			continue
		}
		fam := v.fam
		s.checkDefense(cs, v)
		s.checkDisruption(cs, v)
		if fam&famAccounts != 0 {
			s.checkAccounts(v)
		}
		s.checkTrustStore(cs, v)
		if fam&famTunnel != 0 {
			s.checkTunnels(v)
		}
		if fam&famTransfer != 0 {
			s.checkTransfer(cs, v)
		}
		if fam&famExpose != 0 {
			s.checkExposure(cs, v)
		} else if debugAddr && v.prog != "" {
			if what := remoteDebugExposure(v.prog, v.args); what != "" && s.enabled(rNetExposedShell) {
				s.add(rNetExposedShell, what+": whoever reaches this machine drives the app, its sessions and its code; refuse it, or keep it on 127.0.0.1", v.prog+" "+evJoin(v.args))
			}
		}
		s.checkMetadataHosts(v)
		if fam&famCluster != 0 {
			s.checkClusterSecrets(cs, v)
		}
		s.checkSystemTamper(cs, v)
		s.checkAttackTool(v)
		s.checkInfrastructure(cs, v)
		s.checkListedDeletes(cs, v)
		s.checkCollection(cs, v)
		s.checkStaging(cs, v)
		s.checkSources(cs, v)
		s.checkLookalikeOwners(v)
		if v.prog == "sed" || v.prog == "gsed" || v.prog == "perl" {
			s.checkSourceSwaps(v)
			s.checkLookalikeEdits(v)
			s.checkWeakeningEdits(v)
		}
		s.checkGuards(cs, v)
		s.checkTamper(cs, v)
		s.checkCIRunner(v)
		s.checkReviewBypass(v)
		if v.prog == "npm" || v.prog == "pnpm" || v.prog == "yarn" {
			s.checkPackageSet(v)
		}
		if v.prog == "rm" || v.prog == "git" || v.prog == "find" || v.prog == "unlink" {
			s.checkTestRemoval(v)
		}
		s.checkWeakeningDeploy(v)
		if len(v.c.Assigns) > 0 && (v.prog == "git" || v.prog == "pre-commit") {
			s.checkSkippedChecks(v)
		}
		if v.prog == "pre-commit" && firstOperand(v.args) == "uninstall" && s.enabled(rDefWeakeningEdit) {
			s.add(rDefWeakeningEdit, "pre-commit uninstall removes the git hooks that run the project's checks on every commit: leave them in place, or ask the user", "pre-commit "+evJoin(v.args))
		}
		switch v.prog {
		case "ed", "red", "ex", "vi", "vim", "nvim", "awk", "gawk", "mawk":
			s.checkOtherEdits(cs, v)
		default:
			if v.hasCode || v.kind == "python" || v.kind == "node" {
				s.checkOtherEdits(cs, v)
			}
		}
	}
}
