package hook

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	pb "github.com/parapet-dev/parapet/proto/openparallax/v1"
	"github.com/parapet-dev/parapet/rules/policy"
	"github.com/parapet-dev/parapet/shieldd/audit"
	"github.com/parapet-dev/parapet/shieldd/client"
	"github.com/parapet-dev/parapet/shieldd/pipeline"
	"github.com/parapet-dev/parapet/shieldd/shield"
)

// Shield is all the hook needs of a shield: one verdict. Any error means
// the action does not run.
type Shield interface {
	Evaluate(ctx context.Context, req *pb.EvaluateRequest) (*pb.Verdict, error)
}

// ShieldConfig chooses the shield: a running shieldd at Addr, else the
// pipeline in this process on Policy.
type ShieldConfig struct {
	Addr  string
	Token string
	// Policy is an embedded policy name or an absolute file path.
	Policy string
	// AuditFile, for the in-process shield, is the audit log every
	// evaluation is appended to (absolute path; empty: none).
	AuditFile string
	Timeout   time.Duration
}

// OpenShield returns the configured shield and a function that releases it.
func OpenShield(cfg ShieldConfig) (Shield, func(), error) {
	if cfg.Addr != "" {
		c, err := client.Dial(cfg.Addr, client.Options{Token: cfg.Token, Timeout: cfg.Timeout})
		if err != nil {
			return nil, nil, err
		}
		return c, func() { c.Close() }, nil
	}
	l, err := NewLocal(cfg.Policy, cfg.AuditFile)
	if err != nil {
		return nil, nil, err
	}
	return l, func() {}, nil
}

// LoadPolicy loads an embedded policy by name or a policy file by absolute
// path. A relative path is refused: the hook runs in the agent's working
// directory, where the agent itself could have written a file of that name.
func LoadPolicy(ref string) (*policy.Policy, error) {
	if ref == "" {
		ref = "default"
	}
	if slices.Contains(policy.EmbeddedNames(), ref) {
		return policy.Embedded(ref)
	}
	if !filepath.IsAbs(ref) {
		return nil, fmt.Errorf("policy %q: give an embedded policy name (%v) or an absolute file path: the hook runs in the agent's working directory", ref, policy.EmbeddedNames())
	}
	return policy.LoadFile(ref)
}

// Local is the shield pipeline in this process, judged as shieldd judges
// (shieldd/shield: validation, decision guard, the audit record written
// before the verdict is returned).
type Local struct {
	pipeline  *pipeline.Pipeline
	auditFile string
}

// NewLocal builds the in-process shield on a policy; auditFile, when set,
// must be an absolute path.
func NewLocal(policyRef, auditFile string) (*Local, error) {
	pol, err := LoadPolicy(policyRef)
	if err != nil {
		return nil, err
	}
	if auditFile != "" && !filepath.IsAbs(auditFile) {
		return nil, fmt.Errorf("audit file %q must be an absolute path", auditFile)
	}
	// One evaluation per process: a verdict cache would never be read.
	p, err := pipeline.New(pipeline.Config{Policy: pol, CacheSize: -1})
	if err != nil {
		return nil, fmt.Errorf("shield: %w", err)
	}
	return &Local{pipeline: p, auditFile: auditFile}, nil
}

// Evaluate judges the request and, with an audit file, records it there
// before answering.
func (l *Local) Evaluate(ctx context.Context, req *pb.EvaluateRequest) (*pb.Verdict, error) {
	s := &shield.Shield{Pipeline: l.pipeline}
	if l.auditFile != "" {
		log, release, err := openAudit(l.auditFile)
		if err != nil {
			return nil, err
		}
		defer release()
		s.Audit = log
	}
	return shield.NewLocal(s).Evaluate(ctx, req)
}

// openAudit opens the audit log under an exclusive lock on a file beside
// it. Hook processes run concurrently (an agent may run tools in
// parallel), and each resumes the hash chain from the last line, so only
// one may append at a time.
func openAudit(path string) (*audit.Log, func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, nil, fmt.Errorf("audit log: %w", err)
	}
	lf, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("audit log lock: %w", err)
	}
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		lf.Close()
		return nil, nil, fmt.Errorf("audit log lock: %w", err)
	}
	log, err := audit.Open(audit.Config{Path: path})
	if err != nil {
		lf.Close() // closing drops the lock
		return nil, nil, fmt.Errorf("audit log: %w", err)
	}
	return log, func() {
		log.Close()
		lf.Close()
	}, nil
}
