package heuristics

import (
	"strings"
)

// Decode-and-execute: a payload hidden by an encoding and run, so that no
// reviewer (and no text rule) sees what it does.

// isDecoder reports whether v turns encoded text back into a program:
// base64 -d, openssl base64 -d, xxd -r, printf / echo -e with escapes, rev,
// tr rot13, or an interpreter one-liner that decodes.
func isDecoder(v *cmdView) bool {
	switch v.prog {
	case "base64", "base32", "basenc", "gbase64":
		return hasFlag(v.args, 'd', "decode") || hasShortFlag(v.args, 'D')
	case "openssl":
		return hasShortFlag(v.args, 'd') && (containsArg(v.args, "base64") || containsArg(v.args, "-a") || containsArg(v.args, "-A") || containsArg(v.args, "enc"))
	case "xxd":
		return hasShortFlag(v.args, 'r')
	case "uudecode", "rev":
		return true
	case "printf":
		return len(v.args) > 0 && hasEscapes(strings.Join(v.args, " "))
	case "echo":
		return hasShortFlag(v.args, 'e') && hasEscapes(strings.Join(v.args, " "))
	case "tr":
		ops := v.plainOperands()
		return len(ops) == 2 && isRot13Set(ops[0], ops[1])
	}
	return v.codeAny(traitDecode)
}

func containsArg(args []string, w string) bool {
	for _, a := range args {
		if a == w {
			return true
		}
	}
	return false
}

// hasEscapes reports \xNN, \NNN (octal) or \uNNNN escapes in s.
func hasEscapes(s string) bool {
	for i := 0; i+2 < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		switch c := s[i+1]; {
		case c == 'x' || c == 'u' || c == 'U':
			if isHexByte(s[i+2]) {
				return true
			}
		case c >= '0' && c <= '7':
			if s[i+2] >= '0' && s[i+2] <= '7' {
				return true
			}
		}
	}
	return false
}

func isHexByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isRot13Set(a, b string) bool {
	return (strings.Contains(a, "A-Z") || strings.Contains(a, "a-z")) && (strings.Contains(b, "N-Z") || strings.Contains(b, "n-z"))
}

var decodeMarkers = []string{
	"b64decode", "decodebytes", "a85decode", "b32decode", "fromhex", "unhexlify", "codecs.decode", // python
	"decode_base64", "unpack(", // perl
	"base64_decode", "hex2bin", "str_rot13", "gzinflate", // php
	"atob(", "'base64')", "\"base64\")", // node Buffer.from(x, 'base64')
	"unpack1(", "decode64", // ruby
	"frombase64string", // powershell
}

func codeDecodes(code string) bool { return decodeSet.in(code) }

// mentionsDecoder reports whether substituted text decodes something.
func mentionsDecoder(s string) bool {
	switch {
	case (containsWord(s, "base64") || containsWord(s, "base32") || containsWord(s, "basenc")) &&
		(strings.Contains(s, "-d") || strings.Contains(s, "--decode") || strings.Contains(s, "-D")):
		return true
	case containsWord(s, "xxd") && strings.Contains(s, "-r"):
		return true
	case containsWord(s, "rev") || containsWord(s, "uudecode"):
		return true
	case containsWord(s, "printf") && hasEscapes(s):
		return true
	case containsWord(s, "echo") && strings.Contains(s, " -e") && hasEscapes(s):
		return true
	case containsWord(s, "tr") && (strings.Contains(s, "N-Z") || strings.Contains(s, "n-z")):
		return true
	}
	return codeDecodes(s)
}

func (s *scan) checkDecodeExec(cs *cmdScan) {
	if !s.enabled(rDecodeExec) {
		return
	}
	for i := range cs.views {
		v := &cs.views[i]
		if v.kind == "powershell" {
			for _, a := range v.args {
				if l := strings.ToLower(a); l == "-encodedcommand" || l == "-enc" || l == "-ec" || l == "-e" || l == "-en" || l == "-encoded" {
					s.add(rDecodeExec, "runs a base64-encoded PowerShell command ("+a+"): decode it separately, read what it does, and run the plain command if it is safe", evJoin(v.args))
					return
				}
			}
		}
		if isDecoder(v) {
			if runner := cs.stdinRunnerAfter(v); runner != nil {
				s.add(rDecodeExec, "decodes hidden text with "+v.prog+" and pipes it into "+runner.prog+
					": decode it separately, read what it does, and run the plain command if it is safe", v.c.Name+" … | "+runner.prog)
				return
			}
		}
		if code, ok := executedText(v); ok && (hasSubstitution(code) && mentionsDecoder(code) || runsDecodedWord(cs, code)) {
			s.add(rDecodeExec, "runs decoded hidden text as code ("+progLabel(v)+
				"): decode it separately, read what it does, and run the plain command if it is safe", code)
			return
		}
		if v.codeAll(traitDecode | traitExec) {
			s.add(rDecodeExec, "a "+v.prog+" one-liner decodes a hidden payload and executes it: decode it separately and review it", v.code)
			return
		}
	}
}

// runsDecodedWord reports code that holds text the shell parser decoded
// from a literal ($(echo … | base64 -d) worked out before the line runs).
func runsDecodedWord(cs *cmdScan, code string) bool {
	for _, e := range cs.script.Evasions {
		if e.Kind == "decoded-word" && e.Evidence != "" && strings.Contains(code, e.Evidence) {
			return true
		}
	}
	return false
}

// checkDecodedLayers parses each decoded layer of the command that looks
// like shell and judges it with the command rules: a BLOCK there means the
// encoding hides a dangerous command.
func (s *scan) checkDecodedLayers() {
	if !s.enabled(rDecodeLayer) {
		return
	}
	for i := range s.act.Strings {
		str := &s.act.Strings[i]
		if str.Layer == 0 {
			continue
		}
		if s.expired() {
			return
		}
		if f, bad := s.judgeShell(str.Value); bad {
			s.add(rDecodeLayer, "a "+str.Encoding+"-encoded part of the command decodes to something dangerous ("+
				f.Message+"): refuse it, the encoding only hides it", str.Value)
			return
		}
	}
}

// looksLikeShell is a cheap filter so that decoded identifiers and data
// are not parsed as commands.
func looksLikeShell(s string) bool {
	if len(s) < 4 {
		return false
	}
	return strings.ContainsAny(s, " |;&<>$")
}
