package reload

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultDebounce is how long a burst of file events must go quiet
// before a reload: an editor's save is several events (write a temporary
// file, rename it over, chmod), and a half-written file must not count.
const DefaultDebounce = 250 * time.Millisecond

// maxDelayFactor bounds how long a steady stream of events can postpone
// a reload, in debounce periods.
const maxDelayFactor = 8

// lostWatchRetry is how often a watch on a directory that was removed or
// moved away is tried again.
const lostWatchRetry = time.Second

// Watch reloads (as SIGHUP does, tokens aside) whenever the default policy
// file or a file in the tenant policy directory changes, until ctx ends.
// It watches directories, not files: editors save by renaming a new file
// over the old one, and Kubernetes updates a mounted ConfigMap by swapping
// a "..data" symlink, and either would end a watch on the file itself.
// An error means the watch could not be set up; nothing is watched then.
func (r *Reloader) Watch(ctx context.Context, debounce time.Duration) error {
	if debounce <= 0 {
		debounce = DefaultDebounce
	}
	dirs := r.watchDirs()
	if len(dirs) == 0 {
		return nil
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("policy watch: %w (turn it off with --watch-policy=false and reload with SIGHUP)", err)
	}
	for _, dir := range dirs {
		if err := w.Add(dir); err != nil {
			w.Close()
			return fmt.Errorf("policy watch on %s: %w (turn it off with --watch-policy=false and reload with SIGHUP)", dir, err)
		}
	}
	r.log.Info("policy watch", "dirs", dirs, "debounce", debounce)
	go r.watchLoop(ctx, w, dirs, debounce)
	return nil
}

// watchDirs are the directories to watch, without repeats.
func (r *Reloader) watchDirs() []string {
	var dirs []string
	if r.policyFile != "" {
		dirs = append(dirs, filepath.Dir(r.policyFile))
	}
	if r.tenantDir != "" && !slices.Contains(dirs, r.tenantDir) {
		dirs = append(dirs, r.tenantDir)
	}
	return dirs
}

// relevant reports whether a change to path can change a policy.
func (r *Reloader) relevant(path string) bool {
	dir, base := filepath.Dir(path), filepath.Base(path)
	// Kubernetes' atomic writer: "..data" and "..<timestamp>" entries.
	k8s := strings.HasPrefix(base, "..")
	if r.policyFile != "" && dir == filepath.Dir(r.policyFile) && (base == filepath.Base(r.policyFile) || k8s) {
		return true
	}
	if r.tenantDir != "" && dir == r.tenantDir {
		ext := filepath.Ext(base)
		return ext == ".yaml" || ext == ".yml" || k8s
	}
	return false
}

func (r *Reloader) watchLoop(ctx context.Context, w *fsnotify.Watcher, dirs []string, debounce time.Duration) {
	defer w.Close()
	timer := time.NewTimer(debounce)
	timer.Stop()
	defer timer.Stop()
	var firstPending time.Time // zero when no reload is pending
	schedule := func() {
		now := time.Now()
		if firstPending.IsZero() {
			firstPending = now
		}
		wait := min(debounce, max(firstPending.Add(maxDelayFactor*debounce).Sub(now), 0))
		timer.Reset(wait)
	}

	lost := map[string]bool{}
	var retry *time.Ticker
	var retryC <-chan time.Time
	defer func() {
		if retry != nil {
			retry.Stop()
		}
	}()

	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if slices.Contains(dirs, ev.Name) {
				// The directory itself: removed or moved away ends its watch.
				if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
					r.log.Error("policy watch: directory removed or moved; watching again once it is back (SIGHUP reloads meanwhile)", "dir", ev.Name)
					lost[ev.Name] = true
					if retry == nil {
						retry = time.NewTicker(lostWatchRetry)
						retryC = retry.C
					}
				}
				schedule()
				continue
			}
			if r.relevant(ev.Name) {
				schedule()
			}
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			// Typically an event queue overflow: changes may have been
			// missed, so reload to be sure.
			r.log.Error("policy watch", "err", err)
			schedule()
		case <-timer.C:
			firstPending = time.Time{}
			_ = r.Reload("file change") // logged and recorded
		case <-retryC:
			for dir := range lost {
				if err := w.Add(dir); err == nil {
					delete(lost, dir)
					r.log.Info("policy watch: watching again", "dir", dir)
					schedule()
				}
			}
			if len(lost) == 0 {
				retry.Stop()
				retry, retryC = nil, nil
			}
		}
	}
}
