# Shared by the GPU check scripts, sourced from the repository root:
# gpu_log PREFIX names the logs /tmp/PREFIX-NAME.log; t NAME COMMAND...
# runs one check (PASS/FAIL, the log's tail on failure); gpu_build exits
# failing where there is no GPU, else builds the CUDA variant in build-gpu;
# gpu_done prints "N passed, N failed" like the main runner and fails when
# a check did.
pass=0 fail=0 gpu_prefix=gpu
gpu_log() { gpu_prefix=$1; }
t() { # name, command...
  local name=$1; shift
  if "$@" >"/tmp/$gpu_prefix-$name.log" 2>&1; then pass=$((pass + 1)); echo "PASS $name"
  else fail=$((fail + 1)); echo "FAIL $name"; tail -n 20 "/tmp/$gpu_prefix-$name.log"; fi
}
gpu_build() {
  nvidia-smi -L || { echo "no GPU here"; echo "0 passed, 1 failed"; exit 1; }
  t build make -j"$(nproc)" CUDA=1 BUILD=build-gpu
}
gpu_done() {
  echo "$pass passed, $fail failed"
  [ "$fail" = 0 ]
}
