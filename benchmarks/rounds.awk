# Shared by opa.sh and scale.sh (awk -f benchmarks/rounds.awk -f …).
#
# by_round(round, a, b, rounds, fmt) returns each round's ratio of kind
# a to kind b, round[a, r] / round[b, r], and their median, as
# " x1 x2 …; median m" with every number printed by fmt. A round's two
# turns run next to each other, so a slow spell of the machine tends to
# hit both: single rounds still spread, and the median says how far.
function by_round(round, a, b, rounds, fmt,    r, i, j, t, x, list, median) {
	list = ""
	for (r = 1; r <= rounds; r++) { x[r] = round[a, r] / round[b, r]; list = list sprintf(" " fmt, x[r]) }
	for (i = 1; i <= rounds; i++) for (j = i + 1; j <= rounds; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
	median = rounds % 2 ? x[(rounds + 1) / 2] : (x[rounds / 2] + x[rounds / 2 + 1]) / 2
	return list "; median " sprintf(fmt, median)
}
