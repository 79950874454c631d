package heuristics

import (
	"slices"
	"strconv"
	"strings"

	"github.com/parapet-dev/parapet/rules/shell"
)

// Cryptominers take the machine's processors (or a cloud account's) for
// someone else. A miner is known by what it cannot do without, wherever
// that shows in the line: its name (program, container image, package,
// package script), the pool it works for (a stratum URL, a pool's host),
// the options only miners take (--donate-level, -a rx/0, a wallet address
// as the user) and its configuration (xmrig's "pools" list, an
// in-browser miner's script). Text that only talks about mining (prose,
// searches, echo to the terminal) runs no miner and is left alone.

// minerMarkers prefilter a line: every miner signal below holds one of
// them, or a mining port (miningPortSet) after an -o.
var minerMarkers = newFoldSet(append(append([]string{
	"xmr", "mine", "stratum", "kdevtmpfsi", "kinsing", "coinhive", "coin-hive", "cryptoloot", "crypto-loot", "crlt.", "coinimp",
	"webmine", "jsecoin", "ppoi.org", "wildrig", "t-rex", "donate-level", "cpu-max-threads", "randomx", "rx/", "cn/", "cn-heavy",
	"cn-lite", "cn-pico", "cryptonight", "kawpow", "ethash", "etchash", "autolykos", "ghostrider", "argon2/", "astrobwt",
	"kheavyhash", "--coin", "nicehash", "rig-id", "pools",
}, minerPools...), browserMiners...)...)

// miningPortSet finds the mining ports as they follow a host (:3333).
// Kept apart from minerMarkers: digits after a colon are everywhere, and
// a port says "pool" only as a miner's -o URL.
var miningPortSet = newFoldSet(miningPortMarkers()...)

// mayMine is the prefilter of a line or a text: a marker, a Monero
// address, or a mining port after an -o.
func mayMine(text string) bool {
	return minerMarkers.in(text) || hasMoneroAddress(text) || strings.Contains(text, "-o") && miningPortSet.in(text)
}

// miningPorts are the ports pools customarily listen on.
var miningPorts = []string{"1111", "2222", "3032", "3333", "4444", "5555", "6666", "7777", "8888", "9999", "10001", "10128",
	"10300", "13333", "14433", "14444", "17777", "19999", "20128", "45560", "45700"}

// miningPortMarkers are the mining ports as they follow a host (:3333).
func miningPortMarkers() []string {
	out := make([]string, len(miningPorts))
	for i, p := range miningPorts {
		out[i] = ":" + p
	}
	return out
}

// minerPools are the hosts of mining pools: their only business is
// paying miners.
var minerPools = []string{
	"moneroocean.stream", "supportxmr.com", "hashvault.pro", "nanopool.org", "minexmr.com", "2miners.com", "f2pool.com",
	"herominers.com", "c3pool.com", "unmineable.com", "ethermine.org", "xmrpool.eu", "xmrpool.net", "minergate.com",
	"monerohash.com", "p2pool.io", "hiveon.net", "flexpool.io", "woolypooly.com", "kryptex.network", "zpool.ca",
	"zergpool.com", "viabtc.com", "antpool.com", "poolin.com", "nicehash.com", "miningpoolhub.com", "prohashing.com",
	"mining-dutch.nl", "dxpool.com", "ezil.me", "xmrfast.com", "crypto-pool.fr", "dwarfpool.com", "luckpool.net",
	"rplant.xyz", "skypool.org", "solopool.org", "moneropool.com",
}

// browserMiners are in-browser miners' hosts and script names: a page
// that loads one mines with its visitors' processors.
var browserMiners = []string{
	"coinhive.com", "coin-hive.com", "coinhive.min.js", "authedmine.com", "crypto-loot.com", "cryptoloot.pro", "webminepool.com",
	"coinimp.com", "jsecoin.com", "minero.cc", "ppoi.org", "monerominer.rocks", "webmine.cz", "coinhave.com", "cryptonoter.com",
	"minemytraffic.com", "coinhive.anonymous", "coinhive.user", "crlt.anonymous", "coinimp.anonymous", "deepminer.anonymous",
	"wmp.anonymous",
}

// checkMiners reports cryptocurrency miners in a command line. src is the
// line the commands come from: most lines hold no marker, and one search
// of it skips the scan of every argument.
func (s *scan) checkMiners(cs *cmdScan, src string) {
	if !s.enabled(rDisruptMiner) {
		return
	}
	if cs.fams&famMiner == 0 && !mayMine(src) {
		return
	}
	for i := range cs.views {
		v := &cs.views[i]
		if what := minerCommand(cs, v); what != "" {
			s.add(rDisruptMiner, what+": it takes the machine's CPU for someone else; refuse it", v.prog+" "+evJoin(v.args))
			return
		}
	}
}

// checkMinerFile reports a file written with a miner's configuration, a
// pool's address, a miner image or an in-browser miner.
func (s *scan) checkMinerFile(abs, content string) {
	if !s.enabled(rDisruptMiner) || !minerFileName(abs) || !mayMine(content) {
		return
	}
	if why := minerText(content); why != "" {
		s.add(rDisruptMiner, "writes "+baseName(abs)+", which "+why+": it takes the machine's CPU, or its visitors', for someone else; refuse it", abs)
	}
}

// minerFileName reports the files a miner's setup is written into: its
// configuration, a script or unit that starts it, a manifest that runs
// its image, a web page or script that runs it in visitors' browsers.
// Source code that starts one is judged by the commands it runs.
func minerFileName(abs string) bool {
	base := baseName(abs)
	dot := strings.LastIndexByte(base, '.')
	if dot <= 0 {
		return true // no extension: a script, a config, a binary's name
	}
	switch base[dot+1:] {
	case "json", "yml", "yaml", "conf", "cfg", "toml", "ini", "txt", "sh", "bash", "service", "timer", "plist", "desktop",
		"html", "htm", "js", "mjs", "cjs", "jsx", "ts", "tsx", "vue", "svelte", "php", "ejs", "hbs", "erb", "tpl", "env":
		return true
	}
	return false
}

// minerCommand says how v runs or sets up a miner, or "". Programs that
// print, test or search their words run none.
func minerCommand(cs *cmdScan, v *cmdView) string {
	if v.prog == "" || printsOrTests(v.prog) || searchesText(v.prog) {
		return ""
	}
	if minerName(v.prog) {
		return v.prog + " is a cryptocurrency miner"
	}
	for _, ref := range minerImages(v) {
		if minerName(ref) {
			return v.prog + " runs the miner image " + ref
		}
	}
	for _, p := range packagesNamed(v) {
		if minerName(p) {
			return v.prog + " fetches or runs " + p + ", named after a miner"
		}
	}
	if why := minerOptions(v.args); why != "" {
		return v.prog + " " + why
	}
	for _, a := range v.args {
		if why := minerText(a); why != "" {
			return v.prog + " " + why
		}
	}
	if v.prog == "kubectl" || v.prog == "oc" {
		if text, ok := cs.stdinText(v); ok { // kubectl apply -f - <<EOF … image: …
			if why := minerText(text); why != "" {
				return v.prog + " " + why
			}
		}
	}
	return ""
}

// minerWords are names only miners, and the malware that drops them, go
// by.
var minerWords = map[string]bool{
	"xmrig": true, "xmr": true, "xmrigdaemon": true, "cpuminer": true, "minerd": true, "ccminer": true, "cgminer": true,
	"bfgminer": true, "sgminer": true, "ethminer": true, "nbminer": true, "lolminer": true, "phoenixminer": true, "gminer": true,
	"nanominer": true, "srbminer": true, "teamredminer": true, "wildrig": true, "nheqminer": true, "kdevtmpfsi": true,
	"kinsing": true, "coinhive": true, "cryptoloot": true, "coinimp": true, "moneroocean": true,
}

// coinWords make a "miner", "mining" or "mine" word a cryptominer's:
// monero-miner, coin-mining, cpuminer, gpu-mine.
var coinWords = map[string]bool{
	"monero": true, "xmr": true, "crypto": true, "coin": true, "bitcoin": true, "btc": true, "eth": true, "ethereum": true,
	"ravencoin": true, "rvn": true, "litecoin": true, "ltc": true, "doge": true, "dogecoin": true, "zcash": true, "zec": true,
	"ergo": true, "kaspa": true, "cpu": true, "gpu": true, "hash": true,
}

// minerName reports a program, image or package name that is a miner's:
// one of minerWords among its words (letters between other characters:
// xmrig-6.21, docker.io/xmrig/xmrig, xmr-stak), or a mining word with a
// coin word (monero-miner, coinminer). xml2js, minecraft and
// data-mining are not.
func minerName(name string) bool {
	if !minerMarkers.in(name) {
		return false
	}
	name = strings.ToLower(name)
	if strings.Contains(name, "t-rex") {
		return true
	}
	mine, coin := false, false
	start := -1
	for i := 0; i <= len(name); i++ {
		if i < len(name) && name[i] >= 'a' && name[i] <= 'z' {
			if start < 0 {
				start = i
			}
			continue
		}
		if start < 0 {
			continue
		}
		t := name[start:i]
		start = -1
		switch {
		case minerWords[t]:
			return true
		case len(t) > 5 && strings.HasSuffix(t, "miner") && coinWords[t[:len(t)-5]]:
			return true
		case t == "miner" || t == "miners" || t == "mining" || t == "mine":
			mine = true
		case coinWords[t]:
			coin = true
		}
	}
	return mine && coin
}

// minerImages returns the container images v runs, beyond imagesOf:
// kubectl set image's CONTAINER=IMAGE and helm's --set image…=IMAGE.
func minerImages(v *cmdView) []string {
	refs := imagesOf(v)
	switch v.prog {
	case "kubectl", "oc":
		if ops := infraOperands(v); len(ops) > 2 && ops[0] == "set" && ops[1] == "image" {
			for _, op := range ops[2:] {
				if _, ref, ok := strings.Cut(op, "="); ok {
					refs = append(refs, ref)
				}
			}
		}
	case "helm":
		for _, n := range []string{"set", "set-string"} {
			flagValues(v.args, 0, n, func(kv string) {
				for part := range strings.SplitSeq(kv, ",") {
					if k, ref, ok := strings.Cut(part, "="); ok && strings.Contains(strings.ToLower(k), "image") {
						refs = append(refs, ref)
					}
				}
			})
		}
	}
	return refs
}

// packagesNamed returns the packages or package scripts v fetches or
// runs: npx P, npm install P…, npm run S, yarn S, pip install P.
func packagesNamed(v *cmdView) []string {
	if p, _, ok := packageRun(v); ok {
		return []string{p}
	}
	ops := v.plainOperands()
	if len(ops) == 0 {
		return nil
	}
	switch v.prog {
	case "npm", "pnpm", "yarn", "bun", "cnpm":
		switch ops[0] {
		case "install", "i", "add", "exec", "x", "create", "ci":
			return ops[1:]
		case "run", "run-script", "start", "test":
			return ops[1:min(2, len(ops))]
		}
		if v.prog == "yarn" || v.prog == "pnpm" {
			return ops[:1] // yarn SCRIPT
		}
	case "pip", "pip3", "pipx":
		if ops[0] == "install" || ops[0] == "run" {
			return ops[1:]
		}
	}
	return nil
}

// minerOptions says which options in args are a miner's, or "": an
// option only xmrig and its forks take, a mining algorithm, a Monero
// wallet as the user, or a pool endpoint (-o HOST:PORT) with what a
// miner gives alongside (a wallet, a coin, a mining port with a user,
// keepalive or the customary password x).
func minerOptions(args []string) string {
	for _, a := range args {
		name, _, _ := strings.Cut(a, "=")
		switch name {
		case "--donate-level", "--cpu-max-threads-hint", "--randomx-1gb-pages", "--randomx-mode", "--randomx-no-numa",
			"--randomx-wrmsr", "--nicehash", "--rig-id", "--max-cpu-usage", "--cpu-no-yield":
			return "takes a miner's option " + name
		}
	}
	algo := ""
	flagValues(args, 'a', "algo", func(x string) {
		if minerAlgorithm(x) {
			algo = x
		}
	})
	if algo != "" {
		return "mines with the algorithm " + algo
	}
	wallet, monero := "", false
	for _, n := range []string{"user", "wallet"} {
		flagValues(args, 'u', n, func(u string) {
			if m, ok := walletAddress(u); ok {
				wallet, monero = u, monero || m
			}
		})
	}
	if monero {
		return "mines for the Monero wallet " + textcutShort(wallet)
	}
	endpoint := ""
	flagValues(args, 'o', "url", func(u string) {
		if poolEndpoint(u) {
			endpoint = u
		}
	})
	if endpoint == "" {
		return ""
	}
	passX := false
	flagValues(args, 'p', "pass", func(p string) { passX = passX || p == "x" })
	if wallet != "" || hasLongFlag(args, "coin") ||
		miningPort(endpoint) && (hasFlag(args, 'u', "user") || hasFlag(args, 'k', "keepalive") || passX) {
		return "points a miner at the pool " + endpoint
	}
	return ""
}

// textcutShort shortens a wallet address for a message.
func textcutShort(s string) string {
	if len(s) > 16 {
		return s[:12] + "…"
	}
	return s
}

// minerAlgorithm reports the proof-of-work algorithms miners are told
// to use (-a rx/0, --algo cn/r, kawpow, ethash, …).
func minerAlgorithm(a string) bool {
	a = strings.ToLower(a)
	for _, p := range []string{"rx/", "cn/", "cn-heavy", "cn-lite", "cn-pico", "argon2/", "astrobwt", "cryptonight", "randomx",
		"kawpow", "ghostrider", "ethash", "etchash", "autolykos", "kheavyhash", "equihash", "beamhash", "cuckatoo", "cuckaroo",
		"firopow", "progpow", "verushash", "x16r", "x25x", "lyra2", "yescrypt", "zelhash", "nexapow"} {
		if strings.HasPrefix(a, p) {
			return true
		}
	}
	return false
}

// walletAddress reports a cryptocurrency address as a miner's user
// (ADDRESS, ADDRESS.worker, ADDRESS+difficulty), and whether it is a
// Monero one: 95 or 106 base58 characters from 4 or 8, which nothing
// else looks like. Ethereum (0x and 40 hex) and Bitcoin bech32 (bc1…)
// addresses count only beside a pool.
func walletAddress(u string) (monero, ok bool) {
	if i := strings.IndexAny(u, ".+/:"); i >= 0 {
		u = u[:i]
	}
	switch {
	case moneroAddress(u):
		return true, true
	case len(u) == 42 && strings.HasPrefix(u, "0x") && isHexString(u[2:]):
		return false, true
	case len(u) >= 42 && len(u) <= 62 && strings.HasPrefix(u, "bc1"):
		return false, true
	}
	return false, false
}

func isHexString(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isHexByte(s[i]) {
			return false
		}
	}
	return true
}

// moneroAddress matches a whole Monero address (standard, subaddress or
// integrated).
func moneroAddress(s string) bool {
	if len(s) != 95 && len(s) != 106 || s[0] != '4' && s[0] != '8' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isBase58(s[i]) {
			return false
		}
	}
	return true
}

// hasMoneroAddress reports a Monero address anywhere in s, as a run of
// base58 characters of an address's length.
func hasMoneroAddress(s string) bool {
	if len(s) < 95 {
		return false // most command lines: shorter than one address
	}
	run := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && isBase58(s[i]) {
			run++
			continue
		}
		if (run == 95 || run == 106) && (s[i-run] == '4' || s[i-run] == '8') {
			return true
		}
		run = 0
	}
	return false
}

func isBase58(c byte) bool {
	return c >= '1' && c <= '9' || c >= 'A' && c <= 'Z' && c != 'I' && c != 'O' || c >= 'a' && c <= 'z' && c != 'l'
}

// poolEndpoint reports a miner's pool argument: a stratum URL or a
// HOST:PORT (a file name, a path or an http URL is not one).
func poolEndpoint(u string) bool {
	if scheme, rest, ok := strings.Cut(u, "://"); ok {
		if strings.HasPrefix(strings.ToLower(scheme), "stratum") {
			return true
		}
		u = rest
		if strings.HasPrefix(strings.ToLower(scheme), "http") {
			return false
		}
	}
	i := strings.LastIndexByte(u, ':')
	return i > 0 && !strings.ContainsAny(u[:i], "/ ") && isDigits(u[i+1:])
}

// miningPort reports an endpoint on a mining port.
func miningPort(endpoint string) bool {
	i := strings.LastIndexByte(endpoint, ':')
	if i < 0 {
		return false
	}
	return slices.Contains(miningPorts, strings.TrimRight(endpoint[i+1:], "/"))
}

// minerText says how a text (an argument, a file written, a manifest)
// sets up a miner, or "": a stratum URL, an in-browser miner, a pool's
// host (not its web pages: an http URL is someone reading about it), a
// miner's configuration (xmrig's "pools" with a url and a user, or its
// "donate-level"), or a miner image named in an image: field.
func minerText(t string) string {
	if len(t) < 4 {
		return ""
	}
	lt := strings.ToLower(t)
	if u := stratumURL(lt); u != "" {
		return "points a miner at the pool " + u
	}
	for _, b := range browserMiners {
		if strings.Contains(lt, b) {
			return "loads the in-browser miner " + b
		}
	}
	if h := poolHostIn(lt); h != "" {
		return "points a miner at the pool " + h
	}
	if strings.Contains(lt, `"donate-level"`) || strings.Contains(lt, `"pools"`) && strings.Contains(lt, `"url"`) &&
		(strings.Contains(lt, `"user"`) || strings.Contains(lt, `"algo"`) || strings.Contains(lt, `"coin"`)) {
		return "holds a miner's configuration (pools and a wallet)"
	}
	ref := ""
	imageValues(lt, func(r string) {
		if ref == "" && minerName(r) {
			ref = r
		}
	})
	if ref != "" {
		return "runs the miner image " + ref
	}
	return ""
}

// stratumURL returns the first stratum URL in lt (stratum+tcp://,
// stratum+ssl://, stratum2+tcp://, …), or "".
func stratumURL(lt string) string {
	for off := 0; ; {
		i := strings.Index(lt[off:], "stratum")
		if i < 0 {
			return ""
		}
		i += off
		j := i + len("stratum")
		for j < len(lt) && (lt[j] >= 'a' && lt[j] <= 'z' || lt[j] >= '0' && lt[j] <= '9' || lt[j] == '+') {
			j++
		}
		if strings.HasPrefix(lt[j:], "://") {
			end := j + 3
			for end < len(lt) && !strings.ContainsRune(" \t\n\"',;", rune(lt[end])) {
				end++
			}
			return lt[i:end]
		}
		off = j
	}
}

// poolHostIn returns a mining pool's host named in lt outside an http
// URL, or "".
func poolHostIn(lt string) string {
	for _, d := range minerPools {
		found := false
		shell.EachIndex(lt, d, func(i int) bool {
			end := i + len(d)
			if i > 0 && isHostByte(lt[i-1]) && lt[i-1] != '.' || end < len(lt) && isHostByte(lt[end]) && lt[end] != '.' {
				return true // part of another name
			}
			start := i
			for start > 0 && !strings.ContainsRune(" \t\n\"'=,[{", rune(lt[start-1])) {
				start--
			}
			found = !strings.HasPrefix(lt[start:], "http://") && !strings.HasPrefix(lt[start:], "https://")
			return !found
		})
		if found {
			return d
		}
	}
	return ""
}

func isHostByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.'
}

// imageValues calls fn with each value of an image field in lt:
// "image": "x", image: x, --image=x, image.repository=x.
func imageValues(lt string, fn func(string)) {
	for off := 0; ; {
		i := strings.Index(lt[off:], "image")
		if i < 0 {
			return
		}
		j := off + i + len("image")
		off = j
		rest := strings.TrimPrefix(lt[j:], `"`)
		for _, sub := range []string{".repository", ".name"} {
			rest = strings.TrimPrefix(rest, sub)
		}
		rest = strings.TrimLeft(strings.TrimPrefix(rest, `"`), " \t")
		if rest == "" || rest[0] != ':' && rest[0] != '=' {
			continue
		}
		rest = strings.TrimLeft(rest[1:], " \t\"'")
		end := strings.IndexAny(rest, " \t\n\"',}]")
		if end < 0 {
			end = len(rest)
		}
		if end > 0 {
			fn(rest[:end])
		}
	}
}

// acceleratorFleet says what fleet of accelerator instances an aws,
// gcloud or az command launches, or "": GPU, FPGA or ML-chip instance
// types, two or more at once. One instance (a training box) is ordinary.
func acceleratorFleet(v *cmdView, ops []string) string {
	typ, n, accel := "", 1, false
	op := operandAt(ops)
	switch v.prog {
	case "aws":
		switch {
		case op(0) == "ec2" && op(1) == "run-instances":
			flagValues(v.args, 0, "instance-type", func(t string) { typ = t })
			flagValues(v.args, 0, "count", func(c string) { n = countOf(c) })
		case op(0) == "ec2" && op(1) == "request-spot-instances":
			flagValues(v.args, 0, "instance-count", func(c string) { n = countOf(c) })
			flagValues(v.args, 0, "launch-specification", func(j string) { typ, _ = jsonStringValue(j, "InstanceType") })
		default:
			return ""
		}
		accel = awsAccelerator(typ)
	case "gcloud":
		at := -1
		for i, a := range v.args {
			if (a == "create" || a == "bulk-create") && i >= 2 && v.args[i-1] == "instances" && v.args[i-2] == "compute" {
				at = i
				break
			}
		}
		if at < 0 {
			return ""
		}
		if v.args[at] == "bulk-create" {
			flagValues(v.args, 0, "count", func(c string) { n = countOf(c) })
		} else {
			n = 0 // one instance per name: create gpu-1 gpu-2 …
			for _, a := range v.args[at+1:] {
				if strings.HasPrefix(a, "-") {
					break
				}
				n++
			}
		}
		flagValues(v.args, 0, "machine-type", func(t string) { typ = t })
		flagValues(v.args, 0, "accelerator", func(a string) { accel = accel || strings.Contains(a, "type=") })
		for _, p := range []string{"a2-", "a3-", "a4-", "g2-", "g4-"} {
			accel = accel || strings.HasPrefix(typ, p)
		}
	case "az":
		switch {
		case op(0) == "vm" && op(1) == "create":
			flagValues(v.args, 0, "size", func(t string) { typ = t })
			flagValues(v.args, 0, "count", func(c string) { n = countOf(c) })
		case op(0) == "vmss" && op(1) == "create":
			n = 2 // the scale set's default
			flagValues(v.args, 0, "vm-sku", func(t string) { typ = t })
			flagValues(v.args, 0, "instance-count", func(c string) { n = countOf(c) })
		default:
			return ""
		}
		sku := strings.TrimPrefix(strings.ToLower(typ), "standard_")
		for _, p := range []string{"nc", "nd", "nv", "ng", "np"} {
			accel = accel || strings.HasPrefix(sku, p)
		}
	}
	if !accel || n < 2 {
		return ""
	}
	if typ == "" {
		typ = "GPU"
	}
	return v.prog + " launches " + strconv.Itoa(n) + " " + typ + " accelerator instances at once"
}

// countOf reads an instance count: "10", or "MIN:MAX" (its MAX); 1 when
// unreadable.
func countOf(c string) int {
	if _, hi, ok := strings.Cut(c, ":"); ok {
		c = hi
	}
	n, err := strconv.Atoi(c)
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// awsAccelerator reports the EC2 instance families with GPUs, FPGAs or
// ML chips: p2…p6, g3…g6 (gr6), dl1, dl2q, trn, inf, f1, f2, vt1.
func awsAccelerator(typ string) bool {
	fam, _, _ := strings.Cut(strings.ToLower(typ), ".")
	switch {
	case len(fam) >= 2 && (fam[0] == 'p' || fam[0] == 'g') && fam[1] >= '2' && fam[1] <= '9',
		strings.HasPrefix(fam, "gr6"), strings.HasPrefix(fam, "dl"), strings.HasPrefix(fam, "trn"), strings.HasPrefix(fam, "inf"),
		fam == "f1" || fam == "f2" || fam == "vt1":
		return true
	}
	return false
}

// searchesText reports programs whose arguments are patterns or text
// to find, not addresses to use.
func searchesText(prog string) bool {
	switch prog {
	case "grep", "egrep", "fgrep", "rg", "ag", "ack", "git", "sed", "awk", "jq", "yq":
		return true
	}
	return false
}
