#!/usr/bin/env bash
# Charts of one benchmark run's results, drawn by gnuplot as SVG.
#
#   bench/plot.sh <results.csv> [<output prefix>]
#
# <results.csv> is a table as bench/run.sh writes it (benchmark, case,
# metric, medians, spreads, ratio, ...); lines starting with '#' are
# comments.  It draws
#   <prefix>ratios.svg   the ratio mzcoord/baseline of every case that has
#                        one, as a bar from 1 (parity) on a log scale,
#                        coloured by whether higher (TPS) or lower (times,
#                        bytes) is better
#   <prefix>clients.svg  for benchmarks measured at several client counts
#                        (cases "clients=<n>"): TPS of both sides and the
#                        ratio over the number of clients; only when there
#                        is such a series
# The default prefix is <results.csv> without ".csv" followed by a dot
# (bench/results/20261202T100000Z.ratios.svg).  The results carry no
# goals, so the charts show none; doc/benchmarks.md states them.
# Needs gnuplot (Debian: gnuplot-nox); without it nothing is drawn.
set -euo pipefail

csv=${1:?usage: bench/plot.sh <results.csv> [<output prefix>]}
prefix=${2:-${csv%.csv}.}
title=$(basename "$csv")

if ! command -v gnuplot >/dev/null 2>&1; then
	echo "plot.sh: gnuplot is not installed, no charts drawn" >&2
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ratios.dat: index, label, ratio, 1 if higher is better (TPS) else 0
awk -F, '/^#/ || /^benchmark,/ || NF < 8 { next }
	$8 != "" && $8 + 0 > 0 {
		n++
		label = $1 " " $2
		gsub(/"/, "", label)
		printf "%d\t\"%s\"\t%s\t%d\n", n, label, $8, ($3 == "tps")
	}' "$csv" >"$tmp/ratios.dat"

if [ -s "$tmp/ratios.dat" ]; then
	n=$(wc -l <"$tmp/ratios.dat")
	read -r lo hi < <(awk -F'\t' 'NR == 1 { lo = hi = $3 }
		{ if ($3 < lo) lo = $3; if ($3 > hi) hi = $3 }
		END { if (lo > 1) lo = 1; if (hi < 1) hi = 1; print lo / 1.6, hi * 1.6 }' "$tmp/ratios.dat")
	width=$((260 + 46 * n))
	[ "$width" -lt 640 ] && width=640
	gnuplot <<GP
set terminal svg size $width,480 font "sans,11" background rgb "white"
set output "${prefix}ratios.svg"
set datafile separator "\t"
set label 1 "mzcoord / baseline, ratio of the medians per case ($title)" at screen 0.5, screen 0.955 center font ",12"
set logscale y
set yrange [$lo:$hi]
set ylabel "ratio (log scale; 1 = same as the baseline)"
set xrange [0.3:$n + 0.7]
set xtics rotate by -40 nomirror font ",10"
set ytics nomirror ("0.05" 0.05, "0.1" 0.1, "0.2" 0.2, "0.5" 0.5, "1" 1, "2" 2, "5" 5, "10" 10, "20" 20, "50" 50, "100" 100)
set grid ytics
set tmargin 5
set key at screen 0.5, screen 0.89 center center horizontal
set style fill solid 0.85 noborder
# the value's label a line above (below) its bar: one plot of labels, as
# gnuplot 5.4 crashes on a labels plot with no valid point
f = exp(log($hi / $lo) * 0.05)
plot 1 with lines lc rgb "#333333" dt 2 notitle, \
     "$tmp/ratios.dat" using 1:(\$4 == 1 ? \$3 : NaN):(\$1 - 0.38):(\$1 + 0.38):(1):(\$4 == 1 ? \$3 : NaN):xtic(2) \
        with boxxyerror lc rgb "#4a7fc1" title "TPS: higher is better", \
     "$tmp/ratios.dat" using 1:(\$4 == 0 ? \$3 : NaN):(\$1 - 0.38):(\$1 + 0.38):(1):(\$4 == 0 ? \$3 : NaN) \
        with boxxyerror lc rgb "#e08a3c" title "time or bytes: lower is better", \
     "$tmp/ratios.dat" using 1:(\$3 >= 1 ? \$3 * f : \$3 / f):(sprintf("%.2f", \$3)) \
        with labels font ",9" notitle
GP
	echo "drawn: ${prefix}ratios.svg"
fi

# One file per benchmark with a clients series: clients, mzcoord, baseline, ratio
awk -F, -v dir="$tmp" '/^#/ || /^benchmark,/ { next }
	$2 ~ /^clients=[0-9]+$/ && $4 != "" && $6 != "" {
		c = substr($2, 9); f = dir "/clients_" $1 ".dat"
		print c "\t" $4 "\t" $6 "\t" $8 >f; cnt[$1]++
	}
	END { for (b in cnt) if (cnt[b] >= 2) print b >(dir "/series") }' "$csv"

if [ -s "$tmp/series" ]; then
	xt=$(cut -f1 "$tmp"/clients_*.dat | sort -nu | paste -sd, -)
	tps="" ratio="" i=0
	for b in $(sort -V "$tmp/series"); do
		i=$((i + 1))
		f="$tmp/clients_$b.dat"
		sort -n -o "$f" "$f"
		tps+="${tps:+, }\"$f\" using 1:2 with linespoints lw 2 pt 7 lc $i title \"$b mzcoord\""
		tps+=", \"$f\" using 1:3 with linespoints lw 2 pt 6 dt 2 lc $i title \"$b baseline\""
		ratio+="${ratio:+, }\"$f\" using 1:4 with linespoints lw 2 pt 7 lc $i title \"$b\""
	done
	gnuplot <<GP
set terminal svg size 1000,460 font "sans,11" background rgb "white"
set output "${prefix}clients.svg"
set datafile separator "\t"
set multiplot layout 1,2 title "Throughput over clients ($title)"
set xlabel "clients"
set logscale x 2
set xtics ($xt)
set xrange [*:*]
set offsets graph 0.05, graph 0.05, graph 0.12, 0
set grid
set key below font ",10"
set title "TPS (median)"
set yrange [0:*]
plot $tps
set title "ratio mzcoord / baseline (1 = same)"
set yrange [0:*]
plot $ratio, 1 with lines lc rgb "#333333" dt 2 notitle
unset multiplot
GP
	echo "drawn: ${prefix}clients.svg"
fi
