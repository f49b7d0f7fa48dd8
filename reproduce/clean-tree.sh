#!/bin/bash
# reproduce/clean-tree.sh WHAT: exit 0 when the git tree holding reproduce/
# is clean and the programs in $BUILD (default build) were built from its
# HEAD, clean; else one line naming the dirty state and exit 2. Runs whose
# results are committed as references (WHAT, e.g. "--scale reference") call
# it before any work, so no reference carries git_dirty=1 or a stale binary.
what=${1:-this run}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/${BUILD:-build}
say() { echo "run.sh: $what needs a clean git tree: $*" >&2; exit 2; }
head=$(git -C "$root" rev-parse --verify -q HEAD 2>/dev/null) || say "$root is not a git checkout with a commit"
# the same test as tools/buildinfo.sh's git_dirty: tracked files only
dirty=$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null | awk '{print $NF}' | head -n 5 | paste -sd' ')
[ -z "$dirty" ] || say "uncommitted changes to tracked files ($dirty; see git status); commit or stash them"
info=$build/gen/buildinfo.c
if [ -f "$info" ]; then
  grep -q 'mb_build_git_dirty(void) { return 0; }' "$info" ||
    say "the programs in $build were built from a dirty tree (git_dirty=1); run make again"
  grep -q "\"$head\"" "$info" ||
    say "the programs in $build were built from another commit than HEAD ${head:0:12}; run make again"
fi
exit 0
