# SPDX-License-Identifier: GPL-2.0
# Shared settings for the project's scripts.  Source it; do not run it.

top=${top:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
BUILD=${RFTRACE_BUILD:-$top/build}
SRC=$BUILD/linux-7.2
BINDGEN_VERSION=0.72.1
export LIBCLANG_PATH=/usr/lib/llvm-19/lib
export PATH="$BUILD/tools/bin:$PATH"
export CCACHE_DIR=$BUILD/ccache
export CCACHE_MAXSIZE=5G

step() { printf '==> [%(%H:%M:%S)T] %s\n' -1 "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
