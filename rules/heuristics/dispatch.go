package heuristics

import (
	"strings"
	"sync"
)

// checkCommandAction judges an execute_command action through its parsed
// script. A command without a parse is never judged safe.
func (s *scan) checkCommandAction() {
	act := s.act
	if act.Script == nil {
		if hasCode(act.Command) {
			s.collectOnly = true // fail closed whatever the configuration
			s.add(rEvUnanalysable, "the command was not parsed and could not be analysed: refuse it and report the bug", act.Command)
		}
		return
	}
	buf := getViews()
	defer putViews(buf)
	cs := newCmdScan(act.Script, act, buf)
	s.commandRules(&cs, act.Command)
	s.checkUnanalysable(&cs)
	if s.expired() {
		return
	}
	s.checkDecodedLayers()
	s.checkCommandSecrets(&cs)
}

// scanBufs recycles the scratch of command scans. The rules pass views
// to functions that escape analysis cannot follow, so a stack buffer
// would be moved to the heap: over a kilobyte per decision.
var scanBufs = sync.Pool{New: func() any { return new(scanBuf) }}

func getViews() *scanBuf { return scanBufs.Get().(*scanBuf) }

// putViews clears buf, so the pool keeps no script alive, and returns it.
func putViews(buf *scanBuf) {
	clear(buf.views[:buf.nviews]) // only those used: clearing pointers costs write barriers
	buf.nviews = 0
	clear(buf.targets[:buf.ntargets])
	buf.ntargets = 0
	buf.resolved.reset()
	scanBufs.Put(buf)
}

// commandRules runs every rule that judges a parsed command line. It is
// also run on decoded layers of a command.
func (s *scan) commandRules(cs *cmdScan, src string) {
	s.checkRCE(cs)
	s.checkDecodeExec(cs)
	s.checkReverseShell(cs, src)
	s.checkDestructive(cs, src)
	s.checkIndirectErases(cs)
	s.checkDiscovery(cs)
	if s.expired() {
		return
	}
	s.checkPrivilege(cs)
	s.checkCredentialCommands(cs)
	s.checkExfilCommands(cs)
	if s.expired() {
		return
	}
	if cs.fams&famGit != 0 {
		s.checkGitExfil(cs)
		s.checkSecretCommits(cs)
	}
	s.checkInlineExfil(cs)
	s.checkBuildArgSecrets(cs)
	if cs.fams&famPkgScript != 0 {
		s.checkPackageScriptCommands(cs)
	}
	if cs.fams&famPkgInstall != 0 {
		s.checkPackageFromURL(cs)
	}
	if cs.fams&famDeps != 0 {
		s.checkLookalikeInstalls(cs)
	}
	s.checkFamilies(cs)
	for i := range cs.views {
		if v := &cs.views[i]; v.prog == "claude" || v.hasCode || len(cs.writeTargets(v)) > 0 {
			s.checkAgentConfig(cs, v)
		}
	}
	if strings.Contains(src, "system:masters") {
		s.checkMastersGroup(cs)
	}
	s.checkMiners(cs, src)
	s.checkRewrittenScript(cs)
	s.checkEncryptImpact(cs)
	s.checkInterpreterCode(cs)
	s.checkPlantedCode(cs)
	s.checkPathHijack(cs)
}

// checkCommandSecrets scans the command's strings for secret material
// when the command line talks to the network.
func (s *scan) checkCommandSecrets(cs *cmdScan) {
	d, outbound := cs.commandDestination()
	if !outbound {
		return
	}
	for i := range s.act.Strings {
		s.scanSecrets(s.act.Strings[i].Value, &d)
	}
}

// checkFilePaths judges the paths of non-command actions by what the tool
// does to them. A path an unknown tool names may be read or written, so
// both checks apply (fail closed).
func (s *scan) checkFilePaths() {
	act := s.act
	if act.Type == "execute_command" {
		return // judged through the parsed command
	}
	listing := isListingType(act.Type)
	for i := range act.Paths {
		p := &act.Paths[i]
		switch p.Access {
		case actionRead:
			if !listing {
				s.checkPathRead(p)
			}
		case actionWrite:
			s.checkPathWrite(p)
			if isDiskDevice(p.Abs) {
				s.add(rDiskWipe, "writes straight onto the disk device "+p.Abs+": this destroys its file systems; refuse it", p.Raw)
			}
		case actionDelete:
			if why := criticalDir(*p, act.Caller.WorkspaceRoot, act.Caller.Home); why != "" {
				s.add(rDelRecursive, "deletes "+why+": nothing could be recovered; delete only the specific file or subdirectory you mean", p.Raw)
			}
		default:
			s.checkPathRead(p)
			s.checkPathWrite(p)
		}
	}
}

// checkEnvAssignments catches LD_PRELOAD and friends passed as structured
// environment arguments (spawn tools, MCP calls): {"env": {"LD_PRELOAD": …}}.
func (s *scan) checkEnvAssignments() {
	if !s.enabled(rPersistLDPreload) {
		return
	}
	for i := range s.act.Strings {
		str := &s.act.Strings[i]
		if str.Layer != 0 || str.Value == "" {
			continue
		}
		f := str.Field
		if j := strings.LastIndexByte(f, '.'); j >= 0 {
			f = f[j+1:]
		}
		switch f {
		case "LD_PRELOAD", "LD_AUDIT", "DYLD_INSERT_LIBRARIES":
			s.add(rPersistLDPreload, "sets "+f+": the library is injected into every program started; refuse unless you built it yourself for debugging", f+"="+str.Value)
		}
	}
}
