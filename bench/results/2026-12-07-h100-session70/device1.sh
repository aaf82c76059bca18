#!/usr/bin/env bash
# Session 70, call 1: issue 7's grid at ncu's locked clock. The Python module of this tree is linked on
# the library built on the CPU machine (build/lib90.tar.xz: sm_90a, bf16 + fp16, d 64 / 128 / 256; no
# kernel compiles here). bench/ncu_pairs.py then times ours (the SM90 forward) and SDPA's cuDNN backend
# on every row of BENCHMARKING.md's grid under `ncu --clock-control base` (both at the same fixed
# clock, each kernel's GPU time, L2 flushed): work per clock, free of the power cap that sets the
# steady-state clocks. bf16 and fp16 at the base clock, then bf16 with the clock left free. Last, the
# package's pytest suite on this module (the buckets the library has; the others skip by name).
# DEADLINE (default 580): seconds after which every step is cut, so that pack still runs.
source bench/device_lib.sh
call_setup
prebuilt_module
python3 -c 'import flashcute._C as C; print(C.build_config())' 2>&1 | tee "$O/r/build_config.txt"
nvidia-smi -q -d CLOCK > "$O/r/clocks-before.txt" 2>&1
G="--backend sm90 --peer sdpa_cudnn --d 64,128,256 --seqlen 512,1024,2048,4096,8192,16384 --calls 3"
for spec in bf16:base fp16:base bf16:none; do
  dt=${spec%%:*}; ck=${spec##*:}
  t1=$SECONDS
  timeout $(left 220) python3 bench/ncu_pairs.py $G --dtype $dt --clock $ck --records "$O/r/ncu-$dt-$ck.json" \
    > "$O/r/ncu-$dt-$ck.md" 2> "$O/r/ncu-$dt-$ck.err"
  echo "ncu $dt $ck rc=$? ($((SECONDS - t1)) s)"; tail -n 40 "$O/r/ncu-$dt-$ck.md"; tail -n 5 "$O/r/ncu-$dt-$ck.err"
done
t1=$SECONDS
timeout $(left 200) python3 -m pytest -q -rs tests/python > "$O/r/pytest.txt" 2>&1
echo "pytest rc=$? ($((SECONDS - t1)) s)"; tail -n 6 "$O/r/pytest.txt"
pack
echo "all done at $SECONDS s"
