#!/bin/bash
# Imports the schedules tests/import/device_run.sh runs on the GPU and that the kernels' own
# traces replay against, with the options each kernel's native run uses
# (tests/import/native/*_main.cu); a seeded-bug twin with its kernel's options. From the
# repository root, after `bazel build //tools/cli:parity //tests/import:all`:
#   bash tests/import/make_device_pipes.sh OUT_DIR
set -eu
out=$1
p=bazel-bin/tools/cli/parity
b=bazel-bin/tests/import
mkdir -p "$out"
ws="--entry ws_pipeline --block 96 --arg 1=6 --tensormap 0=u16:64x1024:64x64:128B"
cl="--entry cluster_pipeline --block 64 --cluster 2,1 --arg 1=5 --tensormap 0=u16:64x1024:64x32:128B"
tma="--entry tma_roundtrip --block 128 --clusters 4 --arg 2=0 --arg 3=0 --tensormap 0=u16:64x256:64x64 --tensormap 1=u16:64x256:64x64"
cpa="--entry cp_async_pipeline --block 128 --arg 1=6"
# name | PTX | options
while read -r name ptx opts; do
  $p import "$b/$ptx.ptx" ${!opts} -o "$out/$name.pipe"
done <<'LIST'
ws_pipeline ws_pipeline ws
ws_pipeline_bad_tx ws_pipeline_bad_tx ws
ws_pipeline_bad_parity ws_pipeline_bad_parity ws
ws_pipeline_bad_empty ws_pipeline_bad_empty ws
ws_pipeline_early_exit ws_pipeline_early_exit ws
cluster_pipeline cluster_pipeline cl
cluster_pipeline_bad_release cluster_pipeline_bad_release cl
tma_roundtrip guide_tma tma
tma_roundtrip_no_wait guide_tma_no_wait tma
cp_async_pipeline cp_async_pipeline cpa
cp_async_pipeline_short_wait cp_async_pipeline_short_wait cpa
LIST
$p import $b/single_tma.ptx --entry single_tma_load --block 128 --arg 1=0 --arg 2=64 \
  --tensormap 0=u16:256x256:64x64:128B -o "$out/single_tma.pipe"
$p import $b/guide_tma.ptx --entry bulk_roundtrip --block 128 --clusters 4 \
  -o "$out/bulk_roundtrip.pipe"
