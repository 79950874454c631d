// Package host is the engine host that agentctl's commands share: it reads
// the engine flags into a Config, opens the shield (remote shieldd or
// in-process), proves the confined executor, opens the session database,
// serves the engine on loopback, and supervises the sandboxed agent
// process; it also serves the web page and the other front doors. run,
// gateway and the internal-engine process (agentctl/child) each host one.
package host
