#!/bin/sh
# CTest driver for the `flashcute` command (apps/CMakeLists.txt).
#   cli_test.sh no-gpu CMD...   CMD must exit non-zero and say that it needs a GPU (run with the GPUs
#                               hidden: CUDA_VISIBLE_DEVICES= set empty by the test)
#   cli_test.sh gpu FILE CMD... CMD must exit 0 and write FILE (a JSON document that names its schema);
#                               exits 77 (CTest: skipped) where no GPU is present
mode=$1
shift
if [ "$mode" = gpu ]; then
  file=$1
  shift
  rm -f "$file"
fi
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
case $mode in
  no-gpu)
    if [ "$rc" -ne 0 ] && printf '%s\n' "$out" | grep -q "no usable CUDA GPU"; then
      exit 0
    fi
    echo "FAIL: expected a non-zero exit and 'no usable CUDA GPU' (exit code $rc)"
    exit 1
    ;;
  gpu)
    if [ "$rc" -eq 1 ] && printf '%s\n' "$out" | grep -q "no usable CUDA GPU"; then
      echo "SKIPPED: no usable CUDA GPU"
      exit 77
    fi
    if [ "$rc" -ne 0 ]; then
      echo "FAIL: exit code $rc"
      exit 1
    fi
    if ! grep -q '"schema": "flashcute-bench/1"' "$file"; then
      echo "FAIL: $file is missing or has no schema line"
      exit 1
    fi
    exit 0
    ;;
esac
echo "cli_test.sh: unknown mode '$mode' (no-gpu, gpu)"
exit 2
