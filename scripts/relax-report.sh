#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# relax-report.sh [VARIANT...]: riscv64 with and without linker relaxation.
# For each built riscv64 variant (default: stock rust-norelax rust; build
# them first with RFT_ARCH=riscv64 scripts/build-kernel.sh VARIANT), prints
# how vmlinux was linked (7.2's --no-relax or relaxed, read from the link
# command Kbuild saved), the sizes of .text and of the boot Image, and the
# post-link call-site tool's summary of the image (tools/sites).  Exit 1 if
# the tool finds a site the kernel would patch wrongly in any of them.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

variants=("$@")
[ ${#variants[@]} -gt 0 ] || variants=(stock rust-norelax rust)
readelf=$(command -v llvm-readelf-19 || command -v readelf)
rc=0
printf '%-14s %-10s %12s %12s  %s\n' variant link .text Image "rftrace-sites"
for v in "${variants[@]}"; do
	out=$BUILD/out-riscv64-$v
	[ -f "$out/vmlinux" ] || die "no $out/vmlinux (RFT_ARCH=riscv64 scripts/build-kernel.sh $v)"
	link=relaxed
	grep -q -- '--no-relax' "$out/.vmlinux.unstripped.cmd" && link=no-relax
	text=$("$readelf" -S -W "$out/vmlinux" |
		awk '{ for (i = 1; i < NF; i++) if ($i == ".text") { print strtonum("0x" $(i + 4)); exit } }')
	image=$(stat -c %s "$out/arch/riscv/boot/Image")
	sites_rc=0
	sites=$(cargo run --quiet --release --manifest-path "$top/tools/sites/Cargo.toml" \
		--bin rftrace-sites -- --max-lines 0 "$out/vmlinux") || sites_rc=$?
	sites=${sites%%$'\n'*}
	[ "$sites_rc" = 0 ] || rc=1
	printf '%-14s %-10s %12d %12d  %s (exit %d)\n' "$v" "$link" "$text" "$image" "$sites" "$sites_rc"
done
exit $rc
