package action

import "testing"

func TestNormalizeTagCharacters(t *testing.T) {
	// "ignore" spelled in tag characters after harmless text.
	hidden := "add two numbers" + string([]rune{0xE0069, 0xE0067, 0xE006E, 0xE006F, 0xE0072, 0xE0065})
	out, ev := Normalize(hidden)
	if out != "add two numbers" {
		t.Errorf("Normalize kept tag characters: %q", out)
	}
	if len(ev) != 1 || ev[0].Kind != "tag" || ev[0].Evidence != "U+E0069" {
		t.Errorf("evasions = %+v, want one tag evasion at U+E0069", ev)
	}

	// The Scotland flag: black flag, tags g b s c t, cancel tag.
	scotland := "go team \U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F!"
	out, ev = Normalize(scotland)
	if out != scotland || len(ev) != 0 {
		t.Errorf("a subdivision flag was treated as hidden text: %q %+v", out, ev)
	}

	// A black flag followed by a long tag message is not a flag.
	long := "\U0001F3F4" + string([]rune{0xE0069, 0xE0067, 0xE006E, 0xE006F, 0xE0072, 0xE0065, 0xE0020, 0xE0061, 0xE007F})
	if _, ev = Normalize(long); len(ev) != 1 || ev[0].Kind != "tag" {
		t.Errorf("evasions = %+v, want a tag evasion", ev)
	}
}
