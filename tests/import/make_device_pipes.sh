#!/bin/bash
# Imports the schedules tests/import/device_run.sh runs on the GPU, with the options each
# kernel's native run uses (tests/import/native/*_main.cu). From the repository root, after
# `bazel build //tools/cli:parity //tests/import:all`:
#   bash tests/import/make_device_pipes.sh OUT_DIR
set -eu
out=$1
p=bazel-bin/tools/cli/parity
b=bazel-bin/tests/import
mkdir -p "$out"
$p import $b/single_tma.ptx --entry single_tma_load --block 128 --arg 1=0 --arg 2=64 \
  --tensormap 0=u16:256x256:64x64:128B -o "$out/single_tma.pipe"
$p import $b/ws_pipeline.ptx --entry ws_pipeline --block 96 --arg 1=6 \
  --tensormap 0=u16:64x1024:64x64:128B -o "$out/ws_pipeline.pipe"
$p import $b/ws_pipeline_bad_tx.ptx --entry ws_pipeline --block 96 --arg 1=6 \
  --tensormap 0=u16:64x1024:64x64:128B -o "$out/ws_pipeline_bad_tx.pipe"
$p import $b/cluster_pipeline.ptx --entry cluster_pipeline --block 64 --cluster 2,1 --arg 1=5 \
  --tensormap 0=u16:64x1024:64x32:128B -o "$out/cluster_pipeline.pipe"
$p import $b/guide_tma.ptx --entry tma_roundtrip --block 128 --clusters 4 --arg 2=0 --arg 3=0 \
  --tensormap 0=u16:64x256:64x64 --tensormap 1=u16:64x256:64x64 -o "$out/tma_roundtrip.pipe"
$p import $b/guide_tma.ptx --entry bulk_roundtrip --block 128 --clusters 4 \
  -o "$out/bulk_roundtrip.pipe"
$p import $b/cp_async_pipeline.ptx --entry cp_async_pipeline --block 128 --arg 1=6 \
  -o "$out/cp_async_pipeline.pipe"
