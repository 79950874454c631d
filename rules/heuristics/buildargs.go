package heuristics

import "strings"

// Secrets baked into an image. A build argument is recorded in the image
// it builds (docker history shows it, and so does every layer that used
// it): docker build --build-arg AWS_SECRET_ACCESS_KEY="$AWS_SECRET_ACCESS_KEY"
// followed by a push hands the secret to whoever can pull the image.
// BuildKit's --secret mounts a value for one step and keeps none of it.
// A build that is not pushed from the same line stays on the machine and
// is left alone (NPM_TOKEN build arguments are common, if unwise).

// checkBuildArgSecrets judges the image builds of the line that are
// pushed from it.
func (s *scan) checkBuildArgSecrets(cs *cmdScan) {
	if !s.enabled(rExfilSecretVar) {
		return
	}
	pushed := false
	for i := range cs.views {
		v := &cs.views[i]
		if imageTool(v.prog) && (containsArg(v.args, "push") || hasLongFlag(v.args, "push")) {
			pushed = true
		}
	}
	if !pushed {
		return
	}
	for i := range cs.views {
		v := &cs.views[i]
		if !imageTool(v.prog) {
			continue
		}
		if name := secretBuildArg(v.args); name != "" {
			s.add(rExfilSecretVar, v.prog+" builds the secret "+name+" into an image that the line pushes: build arguments stay in the image's history for whoever pulls it; pass it with --secret id="+strings.ToLower(name)+" instead",
				v.prog+" "+evJoin(v.args))
			return
		}
	}
}

// imageTool reports a program that builds or pushes container images.
func imageTool(prog string) bool {
	switch prog {
	case "docker", "podman", "buildah", "nerdctl", "finch":
		return true
	}
	return false
}

// secretBuildArg returns the name of the first build argument of args
// that carries a secret: one named like a secret (--build-arg
// NPM_TOKEN=…, --build-arg GITHUB_TOKEN, taking the environment's
// value), or one set from a secret variable (--build-arg KEY=$API_KEY).
func secretBuildArg(args []string) string {
	name := ""
	flagValues(args, 0, "build-arg", func(val string) {
		if name != "" {
			return
		}
		key, value, _ := strings.Cut(val, "=")
		if isSecretVarName(key) {
			name = key
		} else if v := secretVariableIn(value); v != "" {
			name = v
		}
	})
	return name
}
