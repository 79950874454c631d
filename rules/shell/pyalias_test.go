package shell

import "testing"

func TestUnaliasPython(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"import pickle as _p, urllib.request as _u\n_p.loads(_u.urlopen('http://x').read())",
			"import pickle as _p, urllib.request as _u\npickle.loads(urllib.request.urlopen('http://x').read())"},
		{"from os import system as run; run('id')", "from os import system as run; os.system('id')"},
		{"import subprocess as sp; sp.call(['id'])", "import subprocess as sp; subprocess.call(['id'])"},
		// A longer name, an attribute and a string are left alone.
		{"import json as j; jj = x.j; j.dumps(1)", "import json as j; jj = x.j; json.dumps(1)"},
		// No aliased import: unchanged.
		{"import os; os.system('id')", "import os; os.system('id')"},
		{"with open(f) as fh: print(fh.read())", "with open(f) as fh: print(fh.read())"},
	} {
		if got := UnaliasPython(c.in); got != c.want {
			t.Errorf("UnaliasPython(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

func FuzzUnaliasPython(f *testing.F) {
	f.Add("import pickle as _p\n_p.loads(b)")
	f.Add("from a.b import c as d, e as f; d(f)")
	f.Fuzz(func(t *testing.T, code string) {
		out := UnaliasPython(code)
		if len(code) > 0 && len(out) == 0 {
			t.Fatalf("UnaliasPython(%q) lost the code", code)
		}
	})
}
