#!/bin/bash
# tools/gen-docs.sh [--check] [BINDIR]: rewrites the flag tables of the doc
# pages from the programs' own --help (BINDIR default build/bin). A table
# sits between the lines
#   <!-- flags: PROGRAM SECTION -->   and   <!-- end flags -->
# where SECTION is "common" (the common options every benchmark has) or
# "own" (the program's own options). --check rewrites nothing: it names
# each page whose tables differ from --help and exits 1 (the staleness
# test); exit 2 when a program is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
[ "${1:-}" = --check ] && { check=1; shift; }
bin=${1:-build/bin}

# help_table PROGRAM SECTION: the markdown table of one section of --help
help_table() {
  [ -x "$bin/$1" ] || { echo "gen-docs: $bin/$1: no such program (run make first)" >&2; exit 2; }
  "$bin/$1" --help 2>&1 | awk -v want="$2" '
    function cell(s) { gsub(/\|/, "\\|", s); gsub(/^ +| +$/, "", s); return s }
    function flush() {
      if (flag == "") return
      def = ""
      if (match(text, / *\[default: [^]]*\]$/)) {
        def = substr(text, RSTART, RLENGTH); text = substr(text, 1, RSTART - 1)
        sub(/^ *\[default: /, "", def); sub(/\]$/, "", def)
        if (def == "unset") def = ""
      }
      if (sect == want) printf "| `%s` | %s | %s |\n", cell(flag), cell(def), cell(text)
      flag = ""; text = ""
    }
    BEGIN { sect = "own"; print "| flag | default | meaning |"; print "|---|---|---|" }
    /^common options:/ { flush(); sect = "common"; next }
    /^[^ ].* options:$/ { flush(); sect = "own"; next }
    /^  (-[A-Za-z0-9], )?--[A-Za-z]/ || /^      --[A-Za-z]/ {
      flush()
      line = $0; sub(/^ +/, "", line)
      if (match(line, /  +/)) { flag = substr(line, 1, RSTART - 1); text = substr(line, RSTART + RLENGTH) }
      else { flag = line; text = "" }
      next
    }
    /^        +[^ ]/ && flag != "" { line = $0; sub(/^ +/, "", line); text = (text == "" ? line : text " " line); next }
    { flush() }
    END { flush() }'
}

stale=()
for page in docs/*.md */README.md; do
  [ -f "$page" ] && grep -q '^<!-- flags: ' "$page" || continue
  tmp=$(mktemp)
  # copy the page, replacing what lies between each pair of markers
  while IFS= read -r line; do
    if [[ $line =~ ^\<!--\ flags:\ ([A-Za-z0-9_-]+)\ (common|own)\ --\>$ ]]; then
      printf '%s\n' "$line"
      help_table "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
      skip=1
    elif [ "${skip:-0}" = 1 ] && [ "$line" = '<!-- end flags -->' ]; then
      printf '%s\n' "$line"; skip=0
    elif [ "${skip:-0}" = 0 ]; then
      printf '%s\n' "$line"
    fi
  done <"$page" >"$tmp"
  [ "${skip:-0}" = 0 ] || { echo "gen-docs: $page: a flags marker without '<!-- end flags -->'" >&2; rm -f "$tmp"; exit 2; }
  if cmp -s "$tmp" "$page"; then rm -f "$tmp"
  elif [ $check = 1 ]; then stale+=("$page"); rm -f "$tmp"
  else cat "$tmp" >"$page"; rm -f "$tmp"; echo "gen-docs: $page"
  fi
done
if [ ${#stale[@]} -gt 0 ]; then
  echo "gen-docs: stale flag tables (run make docs): ${stale[*]}" >&2
  exit 1
fi
exit 0
