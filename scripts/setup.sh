#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install everything the project needs on a fresh Debian 12 machine and fetch
# the kernel source.  Idempotent: a second run only checks what is there.
#
# The machine's apt configuration is never edited: the extra suites
# (bookworm-backports for QEMU 10, unstable for linux-source-7.2 and the
# riscv64 guest's programs) live in a private sources list under build/apt
# and are passed to apt with -o options.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"

apt_dir="$BUILD/apt"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$BUILD/dl" "$BUILD/tools"

# The mirror is whatever the machine already uses for Debian; we only add
# suites, never a host of our own.
mirror=$(sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/*.sources 2>/dev/null |
	 tr ' ' '\n' | grep -v -- '-security' | grep -m1 debian || true)
if [ -z "$mirror" ]; then
	mirror=$(awk '$1 == "deb" && $0 !~ /security/ { print $2; exit }' \
		 /etc/apt/sources.list 2>/dev/null || true)
fi
[ -n "$mirror" ] || die "cannot find the machine's Debian mirror in its apt sources"

keyring=/usr/share/keyrings/debian-archive-keyring.gpg
cat > "$apt_dir/sources.list" <<EOF
deb [signed-by=$keyring] $mirror bookworm main
deb [signed-by=$keyring] $mirror bookworm-updates main
deb [signed-by=$keyring] $mirror bookworm-backports main
EOF
cat > "$apt_dir/sid.list" <<EOF
deb [signed-by=$keyring] $mirror unstable main
EOF

apt_common=(-o Dir::Etc::sourceparts=/dev/null
	    -o Dir::State::Lists="$apt_dir/lists"
	    -o Dir::Cache::Archives="$apt_dir/archives"
	    -o APT::Get::List-Cleanup=0)
apt_main=("${apt_common[@]}" -o Dir::Etc::sourcelist="$apt_dir/sources.list")
apt_sid=(-o Dir::Etc::sourceparts=/dev/null
	 -o Dir::State::Lists="$apt_dir/sid-lists"
	 -o Dir::Cache::Archives="$apt_dir/archives"
	 -o Dir::Etc::sourcelist="$apt_dir/sid.list")
mkdir -p "$apt_dir/sid-lists/partial"

stamp_fresh() { # file max-age-minutes
	[ -e "$1" ] && [ -z "$(find "$1" -mmin "+$2" 2>/dev/null)" ]
}

sudo_=""
[ "$(id -u)" = 0 ] || sudo_=sudo

pkgs=(build-essential flex bison bc cpio kmod libelf-dev libssl-dev
      libclang1-19 libclang-19-dev llvm-19 ccache python3 python3-docutils rsync
      busybox-static gawk binutils util-linux procps file xz-utils
      gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu libc6-dev-arm64-cross
      binutils-riscv64-linux-gnu gcc-riscv64-linux-gnu libc6-dev-riscv64-cross
      clang-19 lld-19)
# qemu-system-riscv brings OpenSBI 1.5 (backports), the firmware of -M virt.
bp_pkgs=(qemu-system-x86 qemu-system-arm qemu-system-riscv)

missing=()
for p in "${pkgs[@]}" "${bp_pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done
qemu_ok=0
if command -v qemu-system-x86_64 >/dev/null &&
   qemu-system-x86_64 --version | grep -qE 'version (9|[1-9][0-9])\.'; then
	qemu_ok=1
fi

if [ ${#missing[@]} -gt 0 ] || [ $qemu_ok = 0 ]; then
	step "apt: installing ${missing[*]}"
	if ! stamp_fresh "$apt_dir/updated" 720; then
		$sudo_ apt-get "${apt_main[@]}" update -q >"$BUILD/apt-update.log" 2>&1 ||
			die "apt-get update failed, see $BUILD/apt-update.log"
		touch "$apt_dir/updated"
	fi
	DEBIAN_FRONTEND=noninteractive $sudo_ apt-get "${apt_main[@]}" install -y -q \
		--no-install-recommends "${pkgs[@]}" >"$BUILD/apt-install.log" 2>&1 ||
		die "apt-get install failed, see $BUILD/apt-install.log"
	DEBIAN_FRONTEND=noninteractive $sudo_ apt-get "${apt_main[@]}" install -y -q \
		--no-install-recommends -t bookworm-backports "${bp_pkgs[@]}" \
		>>"$BUILD/apt-install.log" 2>&1 ||
		die "apt-get install (backports) failed, see $BUILD/apt-install.log"
fi
qemu-system-x86_64 --version | head -1

# perf (linux-perf) for the x86_64 guest's perf-ftrace.tc, copied in by
# scripts/mkinitramfs.sh (trace-cmd comes unpacked, scripts/x86_64-tools.sh).
# Optional: without it that test is UNSUPPORTED and skipped, so a failed
# install is only reported.
if ! dpkg-query -W -f='${Status}' linux-perf 2>/dev/null | grep -q 'ok installed'; then
	step "apt: installing linux-perf (optional: perf for the guest)"
	if ! stamp_fresh "$apt_dir/updated" 720 &&
	   $sudo_ apt-get "${apt_main[@]}" update -q >"$BUILD/apt-update.log" 2>&1; then
		touch "$apt_dir/updated"
	fi
	DEBIAN_FRONTEND=noninteractive $sudo_ apt-get "${apt_main[@]}" install -y -q \
		--no-install-recommends linux-perf >>"$BUILD/apt-install.log" 2>&1 ||
		echo "setup: linux-perf not installed (see $BUILD/apt-install.log): perf-ftrace.tc will be UNSUPPORTED"
fi

# Rust: the machine's toolchain plus rust-src and clippy, and bindgen-cli with cargo install.
if [ ! -d "$(rustc --print sysroot)/lib/rustlib/src/rust/library" ]; then
	step "rustup: adding rust-src"
	rustup component add rust-src
fi
if ! command -v clippy-driver >/dev/null; then
	step "rustup: adding clippy (the kernel side's lint check)"
	rustup component add clippy
fi
if [ ! -x "$BUILD/tools/bin/bindgen" ]; then
	step "cargo: installing bindgen-cli $BINDGEN_VERSION (about 80 s)"
	cargo install --locked --quiet --root "$BUILD/tools" bindgen-cli \
		--version "$BINDGEN_VERSION"
fi
"$BUILD/tools/bin/bindgen" --version

# Kernel source: newest linux-source-7.2 in unstable, downloaded once.
if [ ! -f "$SRC/Makefile" ]; then
	deb=$(ls "$BUILD"/dl/linux-source-7.2_*.deb 2>/dev/null | tail -1 || true)
	if [ -z "$deb" ]; then
		step "apt: fetching linux-source-7.2 from unstable"
		apt-get "${apt_sid[@]}" update -q >"$BUILD/apt-sid.log" 2>&1 ||
			die "apt-get update (unstable) failed, see $BUILD/apt-sid.log"
		ver=$(apt-cache "${apt_sid[@]}" madison linux-source-7.2 |
		      awk '{print $3}' | sort -V | tail -1)
		[ -n "$ver" ] || die "Debian's unstable no longer offers linux-source-7.2.
  Use a Linux 7.2 tree of your own: RFT_SRC=/path/to/linux-7.2 $0 (the
  scripts patch that tree in place; see scripts/prepare-tree.sh), or apply
  the series that scripts/mkseries.sh writes with git am (README, 'How it
  fits into a kernel tree')."
		(cd "$BUILD/dl" && apt-get "${apt_sid[@]}" download "linux-source-7.2=$ver" \
			>>"$BUILD/apt-sid.log" 2>&1) ||
			die "apt-get download linux-source-7.2=$ver failed"
		deb=$(ls "$BUILD"/dl/linux-source-7.2_*.deb | tail -1)
	fi
	step "extracting $(basename "$deb")"
	rm -rf "$BUILD/deb-x" "$SRC.tmp"
	dpkg-deb -x "$deb" "$BUILD/deb-x"
	mkdir -p "$SRC.tmp"
	tar -C "$SRC.tmp" --strip-components=1 -xf "$BUILD"/deb-x/usr/src/linux-source-7.2.tar.xz
	rm -rf "$BUILD/deb-x"
	basename "$deb" | sed 's/^linux-source-7.2_//; s/_all.deb$//' > "$SRC.tmp/.debian-version"
	mv "$SRC.tmp" "$SRC"
fi
if [ -f "$SRC/.debian-version" ]; then
	echo "kernel source: linux-source-7.2 $(cat "$SRC/.debian-version") in $SRC"
else
	echo "kernel source: $SRC (not Debian's package: RFT_SRC)"
fi

# arm64 guests (RFT_ARCH=arm64) run Debian's arm64 programs, riscv64 guests
# (RFT_ARCH=riscv64) those of Debian unstable, fetched and unpacked under
# build/ through a private apt configuration.
case $RFT_ARCH in
arm64)	"$top/scripts/arm64-userspace.sh"
	qemu-system-aarch64 --version | head -1 ;;
riscv64) "$top/scripts/riscv64-userspace.sh"
	qemu-system-riscv64 --version | head -1 ;;
esac
