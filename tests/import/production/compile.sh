#!/usr/bin/env bash
# Compiles one corpus kernel to PTX and stores it xz-compressed in ptx/.
#   compile.sh NAME SOURCE.cu [extra nvcc flags...]
# SRC_ROOT is the folder the pinned sources were extracted into (see README.md, "Sources"); the
# include paths below are relative to it. CI never runs this: the compressed PTX is committed.
set -euo pipefail
name=$1; src=$2; shift 2
: "${SRC_ROOT:?set SRC_ROOT to the folder holding the extracted sources (README.md)}"
# PRODUCTION_DIR: this folder (set it when running a copy of the script from elsewhere).
here=${PRODUCTION_DIR:-$(cd "$(dirname "$0")" && pwd)}
out_dir=$here/ptx
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The flags issue 35 names, plus what each project's own build passes (--expt-relaxed-constexpr
# for CUTLASS and FA3, --expt-extended-lambda for FA3 and DeepGEMM; DeepGEMM's JIT compiles with
# CXX_STD=c++20): -lineinfo keeps the CUDA lines that the importer cites.
nice -n 10 "$nvcc" -gencode=arch=compute_90a,code=sm_90a -ptx -lineinfo -O3 -std=${CXX_STD:-c++17} \
  --expt-relaxed-constexpr "$@" -o "$tmp/$name.ptx" "$src"
# The PTX names the machine's paths in its .file directives: the sources become relative to
# SRC_ROOT, this folder's files relative to the repository, and the toolkit's headers cuda/include.
repo=$(cd "$here/../../.." && pwd)
sed -i -e "s#${SRC_ROOT%/}/##g" -e "s#${repo}/##g" \
  -e "s#\"[^\"]*/targets/x86_64-linux/include/#\"cuda/include/#g" "$tmp/$name.ptx"
xz -9 -c "$tmp/$name.ptx" > "$out_dir/$name.ptx.xz"
echo "$name: $(wc -c < "$tmp/$name.ptx") bytes of PTX -> ptx/$name.ptx.xz"
