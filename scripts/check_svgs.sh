#!/usr/bin/env bash
# Checks the pictures of the documentation (part of the shape suite of
# scripts/test.sh):
#   - every doc/img/*.svg, every SVG committed under bench/results and every
#     SVG a document links to renders with rsvg-convert (Debian:
#     librsvg2-bin) to a PNG that is not empty: a blank or nearly blank
#     image compresses to about 5 bytes per pixel row, a picture to far
#     more, so the PNG must carry at least 20 bytes per row (and 4 KB);
#   - no SVG has a script, a foreignObject or an external reference
#     (GitHub shows SVGs as images: none of those would work there);
#   - every image link and every link to an .svg or .png in doc/*.md and
#     README.md points to a file that exists.
#
#   scripts/check_svgs.sh [<source tree>]     (default: this script's tree)
set -euo pipefail

root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
cd "$root"

if ! command -v rsvg-convert >/dev/null 2>&1; then
	echo "check_svgs: rsvg-convert is missing (Debian package librsvg2-bin)" >&2
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "check_svgs: $*" >&2; fail=1; }

# The documents, and the links in them: "<document>\t<target>" per link.
docs=(doc/*.md)
[ -f README.md ] && docs+=(README.md)
perl -e '
	for my $doc (@ARGV) {
		open(my $fh, "<", $doc) or die "$doc: $!";
		local $/; my $text = <$fh>;
		# ![alt](target "title"), [text](target.svg|png), <img src="target">
		while ($text =~ /!\[[^\]]*\]\(\s*<?([^)\s>]+)/g) { print "$doc\t$1\n" }
		while ($text =~ /(?<!!)\[[^\]]*\]\(\s*<?([^)\s>]+\.(?:svg|png))[)\s>#]/gi) { print "$doc\t$1\n" }
		while ($text =~ /<img\b[^>]*\bsrc\s*=\s*"([^"]+)"/gi) { print "$doc\t$1\n" }
	}' "${docs[@]}" >"$tmp/links"

linked=()
while IFS=$'\t' read -r doc target; do
	case $target in http://* | https://* | mailto:* | '#'*) continue ;; esac
	target=${target%%#*}
	path=$(realpath -m --relative-to=. "$(dirname "$doc")/$target")
	if [ ! -f "$path" ]; then
		bad "$doc links to $target, which does not exist"
	elif [[ $path == *.svg ]]; then
		linked+=("$path")
	fi
done <"$tmp/links"

# The SVGs: doc/img, the charts committed under bench/results (all of
# bench/results outside a git checkout) and whatever the documents link to.
svgs=(doc/img/*.svg)
[ -e "${svgs[0]}" ] || svgs=()
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	while IFS= read -r f; do svgs+=("$f"); done < <(git ls-files 'bench/results/*.svg')
else
	for f in bench/results/*.svg; do [ -e "$f" ] && svgs+=("$f"); done
fi
svgs+=(${linked[@]+"${linked[@]}"})
mapfile -t svgs < <(printf '%s\n' ${svgs[@]+"${svgs[@]}"} | sort -u)

n=0
for svg in ${svgs[@]+"${svgs[@]}"}; do
	[ -n "$svg" ] || continue
	n=$((n + 1))
	png=$tmp/$n.png
	if grep -qiE '<script|<foreignObject|(xlink:)?href="(https?:|file:|//)' "$svg"; then
		bad "$svg: has a script, a foreignObject or an external reference"
	fi
	if ! rsvg-convert -o "$png" "$svg" 2>"$tmp/err"; then
		bad "$svg does not render: $(head -c 300 "$tmp/err")"
		continue
	fi
	size=$(stat -c %s "$png")
	# The height is the big-endian word at bytes 20-23 of the PNG (IHDR).
	rows=$(od -An -tu1 -j20 -N4 "$png" | awk '{ print (($1 * 256 + $2) * 256 + $3) * 256 + $4 }')
	if [ "$rows" -le 0 ] || [ "$size" -lt 4096 ] || [ "$size" -lt $((rows * 20)) ]; then
		bad "$svg renders empty or nearly so ($size bytes of PNG for $rows rows)"
		continue
	fi
	printf '  %-45s %6d bytes of PNG, %4d rows\n' "$svg" "$size" "$rows"
done

links=$(wc -l <"$tmp/links")
if [ "$fail" -ne 0 ]; then
	echo "check_svgs: FAILED" >&2
	exit 1
fi
echo "check_svgs: $n SVGs render, $links picture links resolve"
