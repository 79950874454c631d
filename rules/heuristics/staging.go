package heuristics

import (
	"path"
	"strings"
)

// Staging: what is gathered before it is taken. Three shapes generalise
// across the tools that make them:
//
//   - an archive, a dump or an encrypted blob written where nobody looks:
//     /dev/shm (memory, no trace on disk), or a hidden name in a
//     temporary or cache directory (/tmp/.x/c.sql.gz, ~/.cache/.fc-aa);
//   - data hidden inside an image (steghide embed, an archive appended to
//     a JPEG, exiftool writing a file into a tag);
//   - a database dumped from its server, not from this machine or a
//     container beside it (pg_dump -h prod-db.internal, mongodump --uri
//     mongodb+srv://…), or exported to a bucket (gcloud sql export).
//
// Archives of build output in the project or in /tmp under a plain name,
// dumps of a local database, and images written by image tools are
// everyday.

// checkStaging judges one command for the shapes above.
func (s *scan) checkStaging(cs *cmdScan, v *cmdView) {
	// A packer's output, or a redirection of what one pipes on.
	if v.fam&famStaging == 0 && (len(v.c.Redirects) == 0 || cs.fams&famStaging == 0) {
		return
	}
	if s.enabled(rCollectStaging) {
		if out := stagedOutput(cs, v); out != "" {
			where := ", a hidden name in a temporary or cache directory"
			if strings.HasPrefix(cs.resolveIn(v.c, out).Abs, "/dev/shm/") {
				where = " in /dev/shm, memory that leaves no trace on disk"
			}
			s.add(rCollectStaging, v.prog+" writes "+out+where+": that is how data is staged before it is taken; a human should approve it",
				v.prog+" "+evJoin(v.args))
		} else if what := hiddenInImage(cs, v); what != "" {
			s.add(rCollectStaging, what+": data hidden where nobody looks for it is data about to leave; a human should approve it",
				v.prog+" "+evJoin(v.args))
		}
	}
	if v.prog == "aws" || v.prog == "gsutil" {
		if what := bucketToBucket(v); what != "" && s.enabled(rExfilTransfer) {
			s.add(rExfilTransfer, v.prog+" copies the bucket "+what+": everything in it goes to whoever owns the other bucket; approve only if you know both",
				v.prog+" "+evJoin(v.args))
		}
	}
	if s.enabled(rCollectDatabaseDump) {
		if host := dumpedServer(v); host != "" {
			s.add(rCollectDatabaseDump, v.prog+" copies the database at "+host+" off its server: customer data does not belong on an agent's machine; a human should approve it",
				v.prog+" "+evJoin(v.args))
		}
	}
}

// stagedOutput returns the file v writes when v makes an archive, a
// dump or an encrypted or encoded blob (or writes what such a command
// pipes to it) into a staging spot, or "".
func stagedOutput(cs *cmdScan, v *cmdView) string {
	outs := packedOutputs(v)
	if len(outs) == 0 && len(v.c.Redirects) > 0 && (packer(v) || cs.packedBefore(v)) {
		outs = cs.writeTargets(v)
	}
	for _, out := range outs {
		if stagingSpot(cs.resolveIn(v.c, out).Abs, cs.home) {
			return out
		}
	}
	return ""
}

// packer reports a program whose output is an archive, a compressed or
// encrypted stream, an encoding or a database's contents.
func packer(v *cmdView) bool {
	switch v.prog {
	case "tar", "zip", "7z", "7za", "rar", "gzip", "pigz", "xz", "bzip2", "zstd", "lz4", "gpg", "gpg2", "age", "base64",
		"split", "cpio":
		return true
	case "openssl":
		return firstOperand(v.args) == "enc" || len(v.args) > 0 && strings.HasPrefix(v.args[0], "aes")
	}
	return databaseDump(v) != ""
}

// packedBefore reports a packer earlier in v's pipeline.
func (cs *cmdScan) packedBefore(v *cmdView) bool {
	for _, i := range cs.before(v) {
		if u := cs.view(i); u != nil && packer(u) {
			return true
		}
	}
	return false
}

// packedOutputs returns the files a packer names as its output (tar -f,
// zip's and 7z's archive, gpg -o, openssl -out, split's prefix, a dump's
// -f / --file / --archive / --out) and where a bucket or another host's
// files are copied down to.
func packedOutputs(v *cmdView) []string {
	var outs []string
	add := func(o string) { outs = append(outs, o) }
	switch v.prog {
	case "tar":
		if len(v.args) > 0 && !strings.HasPrefix(v.args[0], "-") && strings.Contains(v.args[0], "c") && strings.HasSuffix(v.args[0], "f") {
			if len(v.args) > 1 {
				add(v.args[1]) // tar czf OUT …
			}
		} else if hasShortFlag(v.args, 'c') || hasLongFlag(v.args, "create") {
			flagValues(v.args, 'f', "file", add)
		}
	case "zip":
		if ops := operands(v.args, "btxinP", nil); len(ops) > 0 {
			add(ops[0])
		}
	case "7z", "7za", "rar":
		if ops := v.plainOperands(); len(ops) > 1 && ops[0] == "a" {
			add(ops[1])
		}
	case "gpg", "gpg2", "age":
		flagValues(v.args, 'o', "output", add)
	case "openssl":
		for i, a := range v.args {
			if a == "-out" && i+1 < len(v.args) {
				add(v.args[i+1])
			}
		}
	case "split":
		if ops := operands(v.args, "abCln", []string{"--bytes", "--lines", "--line-bytes", "--number", "--suffix-length", "--additional-suffix"}); len(ops) >= 2 {
			add(ops[len(ops)-1])
		}
	case "pg_dump", "pg_dumpall", "mysqldump", "mariadb-dump":
		flagValues(v.args, 'f', "file", add)
		flagValues(v.args, 0, "result-file", add)
	case "mongodump", "mongoexport":
		flagValues(v.args, 0, "archive", add)
		flagValues(v.args, 'o', "out", add)
	case "aws", "gsutil", "rclone":
		// A bucket copied down: its last operand, when the source is a
		// bucket or a remote.
		if src, dst, ok := bucketCopy(v); ok && remoteStore(src) && !remoteStore(dst) {
			add(dst)
		}
	case "scp", "rsync":
		// Another host's files copied here.
		if ops := copyOperands(v); len(ops) >= 2 && remoteHost(ops[0]) != "" && remoteHost(ops[len(ops)-1]) == "" {
			add(ops[len(ops)-1])
		}
	}
	return outs
}

// bucketCopy returns the first source and the destination of a cloud
// storage copy (storageCopy) or of rclone's (rcloneCopy).
func bucketCopy(v *cmdView) (src, dst string, ok bool) {
	var files []string
	if v.prog == "rclone" {
		_, files, ok = rcloneCopy(v)
	} else {
		files, ok = storageCopy(v, infraOperands(v))
	}
	if !ok {
		return "", "", false
	}
	return files[0], files[len(files)-1], true
}

// remoteStore reports a bucket URL (s3://, gs://) or an rclone remote
// (name:path): a name before the first colon, with no slash in it.
func remoteStore(p string) bool {
	return remoteName(p) != ""
}

// remoteName returns the remote a path names: "backup" for backup:dir,
// ":sftp,host=h" for rclone's remote made on the spot (:sftp,host=h:dir,
// :s3:bucket), or "".
func remoteName(p string) string {
	if rest, ok := strings.CutPrefix(p, ":"); ok {
		end := strings.IndexAny(rest, ",:")
		if end <= 0 || strings.IndexFunc(rest[:end], func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') }) >= 0 {
			return ""
		}
		if j := strings.IndexByte(rest, ':'); j > 0 {
			return p[:j+1]
		}
		return ""
	}
	i := strings.IndexByte(p, ':')
	if i > 0 && !strings.ContainsAny(p[:i], "/\\") {
		return p[:i]
	}
	return ""
}

// bucketToBucket says which bucket v copies into another bucket, or "":
// aws s3 sync s3://acme-hr s3://ext-archive copies everything across
// accounts without a byte passing through this machine.
func bucketToBucket(v *cmdView) string {
	src, dst, ok := bucketCopy(v)
	if !ok || v.prog == "rclone" || !remoteStore(src) || !remoteStore(dst) {
		return ""
	}
	if bucketName(src) == bucketName(dst) {
		return "" // a copy inside one bucket
	}
	return src + " into " + dst
}

// bucketName is the bucket of an s3:// or gs:// URL.
func bucketName(u string) string {
	_, rest, _ := strings.Cut(u, "://")
	name, _, _ := strings.Cut(rest, "/")
	return name
}

// stagingSpot reports a place data is staged in: anywhere in /dev/shm,
// or a hidden name (or a name under a hidden directory that is not the
// home's own) in /tmp, /var/tmp or the home's caches and data.
func stagingSpot(abs, home string) bool {
	if strings.HasPrefix(abs, "/dev/shm/") {
		return true
	}
	var rest string
	switch {
	case strings.HasPrefix(abs, "/tmp/"):
		rest = abs[len("/tmp/"):]
	case strings.HasPrefix(abs, "/var/tmp/"):
		rest = abs[len("/var/tmp/"):]
	default:
		r, _, ok := homeRel(abs, home)
		if !ok || !strings.HasPrefix(r, ".cache/") && !strings.HasPrefix(r, ".local/share/") {
			return false
		}
		rest = r[strings.IndexByte(r, '/')+1:]
		if strings.HasPrefix(r, ".local/share/") {
			rest = r[len(".local/share/"):]
		}
	}
	for _, part := range strings.Split(rest, "/") {
		if hiddenName(part) {
			return true
		}
	}
	return false
}

// imageExts are the extensions of pictures data is hidden in.
var imageExts = map[string]bool{".jpg": true, ".jpeg": true, ".png": true, ".gif": true, ".bmp": true, ".webp": true, ".ico": true}

func isImageName(p string) bool { return imageExts[strings.ToLower(path.Ext(p))] }

// hiddenInImage says how v hides data in a picture: steghide or outguess
// embedding, exiftool writing a file's contents into a tag, cat of a
// picture and another file into a picture; "".
func hiddenInImage(cs *cmdScan, v *cmdView) string {
	switch v.prog {
	case "steghide", "outguess", "stegify", "openstego", "stegosuite":
		if ops := v.plainOperands(); len(ops) > 0 && (ops[0] == "embed" || ops[0] == "encode") || v.prog == "outguess" && hasShortFlag(v.args, 'd') {
			return v.prog + " hides a file inside a picture"
		}
	case "exiftool":
		for _, a := range v.args {
			if strings.HasPrefix(a, "-") && strings.Contains(a, "<=") {
				return "exiftool writes a file's contents into a picture's metadata (" + a + ")"
			}
		}
	case "cat":
		ops := v.plainOperands()
		if len(ops) < 2 || !isImageName(ops[0]) {
			return ""
		}
		for _, t := range cs.writeTargets(v) {
			if !isImageName(t) {
				continue
			}
			for _, op := range ops[1:] {
				if !isImageName(op) {
					return "cat appends " + op + " to the picture " + ops[0] + " and saves it as " + t
				}
			}
		}
	}
	return ""
}

// dumpedServer returns the server a dump or export copies a database
// from when it is neither this machine nor a container's name beside it
// (a single-label host such as db), or "". A connection string only named
// by a variable counts when the variable's name says production.
func dumpedServer(v *cmdView) string {
	switch v.prog {
	case "pg_dump", "pg_dumpall", "mysqldump", "mariadb-dump", "mongodump", "mongoexport":
	case "psql":
		if !copiesOut(v) {
			return ""
		}
	case "gcloud":
		if ops := v.plainOperands(); len(ops) >= 4 && ops[0] == "sql" && ops[1] == "export" {
			return "the Cloud SQL instance " + ops[3] + " (exported to " + ops[len(ops)-1] + ")"
		}
		return ""
	default:
		return ""
	}
	host := ""
	see := func(h string) {
		if host == "" && serverHost(h) {
			host = h
		}
	}
	flagValues(v.args, 'h', "host", see)
	for _, a := range v.args {
		val := a
		if strings.HasPrefix(a, "--") {
			_, val, _ = strings.Cut(a, "=")
		}
		switch {
		case strings.Contains(val, "://"):
			see(urlHost(val)) // past any user:password@
		case strings.HasPrefix(val, "$") && strings.Contains(strings.ToUpper(val), "PROD"):
			if host == "" {
				host = val
			}
		}
	}
	return host
}

// serverHost reports a host that is another machine: an address that is
// not loopback, or a dotted name.
func serverHost(h string) bool {
	h = strings.Trim(h, "[]\"'")
	if h == "" || isLoopbackHost(h) || strings.ContainsAny(h, "$`") {
		return false
	}
	return strings.ContainsAny(h, ".:")
}

// copiesOut reports psql told to copy a query's rows out: \copy … TO, or
// COPY … TO STDOUT.
func copiesOut(v *cmdView) bool {
	for _, a := range v.args {
		l := strings.ToLower(a)
		if (strings.Contains(l, `\copy`) || strings.Contains(l, "copy ")) && strings.Contains(l, " to ") {
			return true
		}
	}
	return false
}
