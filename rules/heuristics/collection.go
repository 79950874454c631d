package heuristics

import "strings"

// Collection: capturing what the user sees, types, copies or says, what
// crosses the network, or what other processes hold in memory. No coding
// task needs a screenshot of the desktop, the clipboard, the microphone or
// a live packet capture taken behind the user's back. Working with files
// of those kinds (converting a recording, reading a saved capture) is
// everyday.

// captureDevices are the device names an ffmpeg-like -f option reads
// live from: the screen, a camera or a microphone.
var captureDevices = wordSet("x11grab", "gdigrab", "kmsgrab", "fbdev", "avfoundation", "dshow", "v4l2", "video4linux2",
	"alsa", "pulse", "oss", "jack", "openal", "sndio", "android_camera", "decklink")

// checkCollection judges one command for capture and memory dumps.
func (s *scan) checkCollection(cs *cmdScan, v *cmdView) {
	s.checkDeviceReads(cs, v)
	if v.fam&famCapture == 0 {
		return
	}
	ev := func() string { return v.prog + " " + evJoin(v.args) }
	what := ""
	switch v.prog {
	case "scrot", "gnome-screenshot", "spectacle", "flameshot", "grim", "maim", "screencapture", "xfce4-screenshooter",
		"ksnip", "shutter", "import", "xwd":
		if !hasLongFlag(v.args, "help") && !hasLongFlag(v.args, "version") {
			what = "takes a screenshot"
		}
	case "xclip":
		// xclip's options are single-dash words (-selection, -out).
		if containsArg(v.args, "-o") || containsArg(v.args, "-out") || containsArg(v.args, "-output") {
			what = "reads the clipboard"
		}
	case "xsel":
		if hasShortFlag(v.args, 'o') || hasLongFlag(v.args, "output") {
			what = "reads the clipboard"
		}
	case "pbpaste", "wl-paste", "termux-clipboard-get":
		what = "reads the clipboard"
	case "arecord", "parecord", "parec", "pw-record", "rec", "fswebcam", "streamer", "imagesnap", "termux-microphone-record":
		if !hasFlag(v.args, 'l', "list-devices") && !hasFlag(v.args, 'L', "list-pcms") && !hasLongFlag(v.args, "help") {
			what = "records the microphone or camera"
		}
	case "ffmpeg", "avconv":
		flagValues(v.args, 'f', "", func(f string) {
			if captureDevices[f] {
				what = "records the screen, camera or microphone (-f " + f + ")"
			}
		})
	case "logkeys", "showkey", "evtest":
		what = "records the keyboard"
	case "xinput":
		if ops := v.plainOperands(); len(ops) > 0 && strings.HasPrefix(ops[0], "test") {
			what = "records the keyboard"
		}
	case "tcpdump", "tshark", "dumpcap", "tcpflow", "ngrep", "ettercap", "bettercap", "dsniff", "urlsnarf", "arpspoof", "responder":
		// Reading a saved capture (-r, ngrep -I) or listing interfaces
		// captures nothing.
		if !hasShortFlag(v.args, 'r') && !hasShortFlag(v.args, 'D') && !hasLongFlag(v.args, "list-interfaces") &&
			!(v.prog == "ngrep" && hasShortFlag(v.args, 'I')) && !hasLongFlag(v.args, "help") && !hasLongFlag(v.args, "version") {
			what = "captures network traffic (passwords, cookies and tokens in it)"
		}
	case "gcore", "procdump", "mimipenguin":
		s.add(rCredProcessMemory, v.prog+" dumps a process's memory, where the keys, passwords and tokens it uses sit in the clear; refuse it", ev())
	case "gdb":
		for _, a := range v.args {
			if strings.Contains(a, "generate-core-file") || strings.Contains(a, "dump memory") || strings.HasPrefix(a, "gcore") {
				s.add(rCredProcessMemory, "gdb dumps a process's memory, where the keys, passwords and tokens it uses sit in the clear; refuse it", ev())
				break
			}
		}
		if call := debuggerCall(v.args); call != "" && s.enabled(rPrivProcessInjection) {
			s.add(rPrivProcessInjection, "gdb attaches to a running process and makes it call "+call+": the process runs it with its own privileges, outside any sandbox; refuse it", ev())
		}
	}
	if what != "" {
		s.add(rCollectCapture, v.prog+" "+what+": nothing in a coding task needs it, and it may hold the user's private data; a human should approve it", ev())
	}
}

// checkDeviceReads reports reads of keyboard and mouse devices and of
// another process's memory, by whatever program: cat /dev/input/event0,
// dd if=/proc/PID/mem.
func (s *scan) checkDeviceReads(cs *cmdScan, v *cmdView) {
	inject := func(raw, p string) {
		if strings.HasPrefix(p, "/proc/") && strings.HasSuffix(p, "/mem") && s.enabled(rPrivProcessInjection) {
			s.add(rPrivProcessInjection, "writes into another process's memory ("+p+"): the process runs what is written, with its own privileges and outside any sandbox; refuse it", raw)
		}
	}
	// Writes first: printf, a non-reader, can write into memory too.
	for _, r := range v.c.Redirects {
		switch r.Op {
		case ">", ">>", ">|", "<>":
			inject(r.Op+" "+r.Target, r.Target)
		}
	}
	if isNonReader(v.prog) { // ls -l /dev/video0
		return
	}
	judge := func(raw string) {
		p := raw
		if strings.HasPrefix(p, "if=") {
			p = p[3:]
		}
		if len(p) < 6 || p[0] != '/' || (p[1] != 'd' && p[1] != 'p') {
			return // only absolute /dev and /proc paths
		}
		if what := captureDevice(p); what != "" {
			s.add(rCollectCapture, "reads "+what+" "+p+": nothing in a coding task needs it, and it records the user; a human should approve it", raw)
			return
		}
		switch {
		case strings.HasPrefix(p, "/proc/") && strings.HasSuffix(p, "/mem"):
			s.add(rCredProcessMemory, "reads process memory ("+p+"), where the keys, passwords and tokens a program uses sit in the clear; refuse it", raw)
		}
	}
	for _, a := range v.args {
		if strings.HasPrefix(a, "of=") {
			inject(a, a[3:])
			continue
		}
		if v.prog == "tee" && !strings.HasPrefix(a, "-") {
			inject(a, a)
			continue
		}
		judge(a)
	}
	for _, r := range v.c.Redirects {
		if r.Op == "<" {
			judge(r.Target)
		}
	}
}

// captureDevice names the device of p when it records the user (the
// keyboard and mouse under /dev/input, a camera), or "".
func captureDevice(p string) string {
	switch {
	case strings.HasPrefix(p, "/dev/input/"):
		return "the keyboard and mouse device"
	case strings.HasPrefix(p, "/dev/video"):
		return "the camera"
	}
	return ""
}

// debuggerCall returns the function call a gdb command line makes in
// the process it attaches to (-p PID, --pid, attach PID), from its -ex
// commands: "call (int)system(…)", "print dlopen(…)"; or "".
func debuggerCall(args []string) string {
	attached := false
	for i, a := range args {
		attached = attached || a == "-p" || a == "--pid" || strings.HasPrefix(a, "--pid=") || strings.HasPrefix(a, "attach ") ||
			i > 0 && (args[i-1] == "-ex" || args[i-1] == "--eval-command") && strings.HasPrefix(a, "attach")
	}
	if !attached {
		return ""
	}
	for i, a := range args {
		cmd := a
		if strings.HasPrefix(a, "--eval-command=") {
			cmd = a[len("--eval-command="):]
		} else if i == 0 || args[i-1] != "-ex" && args[i-1] != "--eval-command" {
			continue
		}
		verb, rest, _ := strings.Cut(strings.TrimSpace(cmd), " ")
		switch verb {
		case "call", "print", "p", "set":
			if strings.Contains(rest, "(") {
				return strings.TrimSpace(rest)
			}
		}
	}
	return ""
}
