# The doc pages' flag tables equal what the programs' --help says now
# (make docs rewrites them), the staleness check notices a changed table,
# and every relative link of the markdown pages names a file that exists
# inside the repository.
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$(cd "$BIN" && pwd)   # the generator runs from its own tree
expect 0 "docs/ flag tables match --help (run make docs if not)" -- "$root/tools/gen-docs.sh" --check "$BIN"

# a copy of the generator and the pages with one row changed must be stale
mkdir -p "$T/tree/tools" "$T/tree/docs"
cp "$root/tools/gen-docs.sh" "$T/tree/tools/" && cp "$root"/docs/*.md "$T/tree/docs/"
n=$(grep -c '^| `--coll LIST`' "$T/tree/docs/mb-coll.md")
[ "$n" = 1 ] || fail "docs/mb-coll.md: $n rows for --coll, expected 1"
sed -i 's/^| `--coll LIST` | allreduce |/| `--coll LIST` | bcast |/' "$T/tree/docs/mb-coll.md"
expect 1 "a changed flag table is stale" -- "$T/tree/tools/gen-docs.sh" --check "$BIN" &&
  has "stale flag tables \(run make docs\): docs/mb-coll.md$" "names the stale page"
expect 0 "make docs rewrites it" -- "$T/tree/tools/gen-docs.sh" "$BIN"
expect 0 "then it is fresh" -- "$T/tree/tools/gen-docs.sh" --check "$BIN"
cmp -s "$T/tree/docs/mb-coll.md" "$root/docs/mb-coll.md" || fail "the rewritten page differs from the committed one"

# relative links resolve, inside the repository (a clean clone has no ../shared)
real=$(realpath "$root")
bad=0
while IFS= read -r page; do
  dir=$(dirname "$page")
  while IFS= read -r link; do
    target=${link%%#*}
    [ -z "$target" ] && continue
    case $target in http://*|https://*|mailto:*) continue ;; esac
    case $(realpath -m "$dir/$target") in
      "$real"|"$real"/*) ;;
      *) fail "$page: link to $target leaves the repository"; bad=$((bad + 1)); continue ;;
    esac
    [ -e "$dir/$target" ] || { fail "$page: link to $target: no such file"; bad=$((bad + 1)); }
  done < <(grep -o '](\([^)]*\))' "$page" | sed 's/^](//; s/)$//')
done < <(cd "$root" && find . -name '*.md' -not -path './build*' -not -path './.git/*' | sed 's|^\./||' | sed "s|^|$root/|")
n=$(wc -l <"$root/README.md")
[ "$n" -le 250 ] || fail "README.md has $n lines; the manual's pages live in docs/ (at most 250 here)"
finish
