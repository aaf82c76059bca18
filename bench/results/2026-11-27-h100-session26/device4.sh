#!/usr/bin/env bash
# Session 26, call 4: pytest of scripts/gpu-check on call 3's build tree (warm machine).
OUT=$OUT FLASHCUTE_STEPS="pytest" timeout 300 scripts/gpu-check > $OUT/gpu-check-pytest.txt 2>&1
echo "rc=$?"; tail -8 $OUT/gpu-check-pytest.txt
