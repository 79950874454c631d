package shell

// StartIn places the line in dir, the directory the caller says it runs
// in (a command tool's cwd argument): each command that runs in the
// starting directory now runs in dir, and a relative directory the line
// changed to is taken relative to dir. Absolute directories and
// UnknownDir stay as they are. dir may be relative (to the workspace) or
// start with ~; "" leaves the script unchanged.
func (s *Script) StartIn(dir string) {
	dir = cleanDir(dir)
	if dir == "" {
		return
	}
	for i := range s.Commands {
		c := &s.Commands[i]
		switch {
		case c.Dir == "":
			c.Dir = dir
		case !isRooted(c.Dir):
			c.Dir = joinDir(dir, c.Dir)
		}
	}
}
