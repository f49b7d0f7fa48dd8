#!/bin/bash
# The optional peer of the Ratel study: DeepSpeed 0.19.8's ZeRO-Infinity
# (ZeRO-3, parameters and optimizer states offloaded to NVMe, here a
# folder) on the CPU (DS_ACCELERATOR=cpu) training a GPT of mb-ratel's
# shape; one line of tokens/s into --out. Run by run.sh --with-deepspeed
# only, never by make check: it builds a venv with torch >= 2 and
# deepspeed 0.19.8 from PyPI (several GB, minutes). When the install
# or the run fails it says so in one line and exits 1; run.sh goes on.
#   reproduce/ratel/deepspeed_peer.sh --model SPEC --batch N --out FILE [--dir DIR] [--venv DIR]
#     --model  a preset of mb-ratel (gpt-tiny, gpt-small, gpt-bench) or layers=,hidden=,heads=,seq=,vocab=
#     --dir    the NVMe offload folder (default $MB_RATEL_DIR/deepspeed)
#     --venv   the venv (default $BUILD/venv-deepspeed; made once, reused)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
model="" batch="" out="" dir="" venv=""
while [ $# -gt 0 ]; do
  case $1 in
  --model | --batch | --out | --dir | --venv)
    [ $# -ge 2 ] || { echo "deepspeed_peer.sh: $1 needs a value" >&2; exit 2; }
    printf -v "${1#--}" '%s' "$2"; shift 2 ;;
  -h | --help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0"; exit 0 ;;
  *) echo "deepspeed_peer.sh: unknown option '$1'" >&2; exit 2 ;;
  esac
done
[ -n "$model" ] || { echo "deepspeed_peer.sh: --model is required" >&2; exit 2; }
[[ $batch =~ ^[1-9][0-9]*$ ]] || { echo "deepspeed_peer.sh: --batch: '$batch' is not a positive integer" >&2; exit 2; }
[ -n "$out" ] || { echo "deepspeed_peer.sh: --out is required" >&2; exit 2; }
case $model in # nn/preset.c: layers heads hidden seq vocab
gpt-tiny) shape="layers=2,heads=2,hidden=32,seq=16,vocab=16" ;;
gpt-small) shape="layers=4,heads=4,hidden=128,seq=64,vocab=256" ;;
gpt-bench) shape="layers=2,heads=16,hidden=1024,seq=128,vocab=1024" ;;
*=*) shape=$model ;;
*) echo "deepspeed_peer.sh: --model: '$model' is not a small preset nor layers=...,hidden=..." >&2; exit 2 ;;
esac
venv=${venv:-$root/${BUILD:-build}/venv-deepspeed}
dir=${dir:-${MB_RATEL_DIR:-$root/${BUILD:-build}/ratel-data}/deepspeed}
mkdir -p "$dir" || { echo "deepspeed_peer.sh: --dir: cannot create $dir" >&2; exit 2; }

if [ ! -f "$venv/.ok" ]; then
  echo "deepspeed_peer.sh: building $venv (torch >= 2, deepspeed 0.19.8 from PyPI; several GB)" >&2
  python3 -m venv "$venv" >&2 &&
    "$venv/bin/pip" install -q "torch>=2" >&2 &&
    DS_ACCELERATOR=cpu DS_BUILD_OPS=0 "$venv/bin/pip" install -q "deepspeed==0.19.8" >&2 ||
    { echo "deepspeed_peer.sh: installing torch/deepspeed into $venv failed; no DeepSpeed peer" >&2; exit 1; }
  touch "$venv/.ok"
fi
export DS_ACCELERATOR=cpu
log=$out.log
if ! "$venv/bin/python" "$root/reproduce/ratel/deepspeed_peer.py" --shape "$shape" --batch "$batch" \
  --nvme "$dir" >"$out" 2>"$log"; then
  echo "deepspeed_peer.sh: DeepSpeed ZeRO-Infinity at $shape batch $batch failed: $(grep -v '^\s*$' "$log" | tail -1) (log: $log)" >&2
  exit 1
fi
cat "$out"
