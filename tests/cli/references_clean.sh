# Every committed result file (the studies' references) comes from a clean
# tree: git_dirty 0 and a full commit id, as --scale reference enforces.
. "$(dirname "$0")/../lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
git -C "$root" rev-parse --verify -q HEAD >/dev/null || { echo "skip: $root is not a git checkout"; exit 77; }
n=0
while IFS= read -r f; do
  n=$((n + 1))
  dirty=$(h5dump -a /git_dirty "$root/$f" 2>/dev/null | sed -n 's/.*(0): *//p')
  commit=$(h5dump -a /git_commit "$root/$f" 2>/dev/null | sed -n 's/.*(0): *"\([0-9a-f]*\)".*/\1/p')
  [ "$dirty" = 0 ] || fail "$f: git_dirty '$dirty', expected 0 (regenerate it with run.sh --scale reference)"
  [ ${#commit} = 40 ] || fail "$f: git_commit '$commit' is not a commit id"
done < <(git -C "$root" ls-files '*.h5')
[ "$n" -ge 20 ] || fail "only $n committed result files found (expected the studies' references)"
finish
