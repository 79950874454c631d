package shell

import "strings"

// Data a pipeline hands to xargs becomes arguments: echo ~ | xargs rm -rf
// runs rm -rf /home/…. When the producer's output is in the line (echo,
// printf, cat of a here-document), xargs's command is added once more with
// the items in place, Via "xargs", so it is judged with them.

// maxXargsItems bounds the items followed into xargs's command.
const maxXargsItems = 16

// pipeData follows known text from a pipeline element into an xargs
// that reads it. members are the pipeline's commands, left to right.
func (w *walker) pipeData(members []int, fr frame) {
	for k := 0; k+1 < len(members); k++ {
		prod, cons := members[k], members[k+1]
		if w.s.Commands[cons].Program != "xargs" {
			continue
		}
		text, ok := producedText(&w.s.Commands[prod])
		if !ok {
			continue
		}
		items := strings.Fields(text)
		if len(items) == 0 || len(items) > maxXargsItems {
			continue
		}
		args := w.s.Commands[cons].Args
		fs := make([]field, len(args))
		for i, a := range args {
			fs[i] = field{text: a, raw: a}
		}
		start, _, ok := wrappers["xargs"].commandStart(fs)
		if !ok || fr.wrap >= maxWrapChain {
			continue
		}
		inner := fr
		inner.via = "xargs"
		inner.wrap++
		if repl, ok := xargsReplace(args[:start]); ok {
			for _, it := range items {
				run := make([]field, len(fs)-start)
				for i, f := range fs[start:] {
					f.text = strings.ReplaceAll(f.text, repl, it)
					run[i] = f
				}
				w.emitCall(run, nil, nil, inner)
			}
			continue
		}
		run := append(append([]field(nil), fs[start:]...), make([]field, 0, len(items))...)
		for _, it := range items {
			run = append(run, field{text: it, raw: it})
		}
		w.emitCall(run, nil, nil, inner)
	}
}

// producedText returns what a command writes when the line shows it:
// echo's and printf's arguments, cat of a here-document or here-string.
func producedText(c *Command) (string, bool) {
	args := c.Args
	switch c.Program {
	case "echo":
		for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' && strings.Trim(args[0][1:], "neE") == "" {
			args = args[1:]
		}
		return strings.Join(args, " "), true
	case "printf":
		if len(args) == 0 {
			return "", false
		}
		text := strings.NewReplacer(`\n`, "\n", `\t`, "\t", "%s", " ").Replace(args[0])
		return text + " " + strings.Join(args[1:], " "), true
	case "cat":
		if len(args) > 0 {
			return "", false
		}
		for _, r := range c.Redirects {
			if text, ok := r.Input(); ok {
				return text, true
			}
		}
	}
	return "", false
}

// xargsReplace returns the replace string of -I R, -iR, -i or
// --replace[=R].
func xargsReplace(opts []string) (string, bool) {
	for i, o := range opts {
		switch {
		case o == "-I" && i+1 < len(opts):
			return opts[i+1], true
		case strings.HasPrefix(o, "-I") && len(o) > 2:
			return o[2:], true
		case o == "-i" || o == "--replace":
			return "{}", true
		case strings.HasPrefix(o, "-i") && len(o) > 2:
			return o[2:], true
		case strings.HasPrefix(o, "--replace="):
			return o[len("--replace="):], true
		}
	}
	return "", false
}
