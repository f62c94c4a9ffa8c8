#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# break-check.sh [NAME...]
#
# Shows that the tests catch what they are there for: for each deliberate
# break of scripts/breaks.sh (default: all), build the kernel with that one
# change to the core (in the kernel tree's copy only), run the test that
# must catch it, and count the break as passed if that test fails.  The
# kernel is then built again without the break.  RFT_ARCH selects the
# architecture, as everywhere.  Examples:
#   scripts/break-check.sh
#   RFT_ARCH=arm64 scripts/break-check.sh compare-blind shadow-skipped
# Last line: "N passed, N failed" (passed: the break was caught).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/lib.sh"
. "$top/scripts/breaks.sh"

names=("$@")
[ ${#names[@]} -gt 0 ] || read -r -a names <<<"$BREAKS"
arch_vars "$RFT_ARCH"
atag=
[ "$RFT_ARCH" = x86_64 ] || atag=$RFT_ARCH-

"$top/scripts/setup.sh" >/dev/null || die "setup failed"
passed=0 failed=0
report=()
variants=()
for name in "${names[@]}"; do
	break_def "$name" || die "no break named $name (see scripts/breaks.sh)"
	if [ -n "$BREAK_ARCH" ] && [ "$BREAK_ARCH" != "$RFT_ARCH" ]; then
		report+=("$name: skipped, seen on $BREAK_ARCH only")
		continue
	fi
	variants+=("$BREAK_VARIANT")
	step "break $name ($RFT_ARCH): $BREAK_WHAT"
	blog=$BUILD/break-$atag$name.log
	if ! RFT_BREAK=$name "$top/scripts/build-kernel.sh" "$BREAK_VARIANT" >"$blog" 2>&1; then
		tail -20 "$blog"
		report+=("$name: the broken kernel did not build (see $blog)")
		failed=$((failed + 1))
		continue
	fi
	"$top/scripts/mkinitramfs.sh" "$BREAK_VARIANT" >/dev/null || die "initramfs failed"
	caught=0
	case $BREAK_EXPECT in
	kunit:*|kunit-warning)
		klog=$BUILD/break-$atag$name-kunit.log
		RFT_LOG=$klog "$top/scripts/run-guest.sh" "$BREAK_VARIANT" kunit loglevel=7 \
			>/dev/null 2>&1
		if [ "$BREAK_EXPECT" = kunit-warning ]; then
			grep -aqE 'WARNING:|BUG:|possible circular locking' "$klog" && caught=1
			seen="kernel warning in the KUnit boot: $caught"
		else
			t=${BREAK_EXPECT#kunit:}
			# console lines may carry a printk time stamp
			line=$(tr -d '\r' <"$klog" | sed 's/^\[ *[0-9.]*\] //' |
				grep -aE "^[[:space:]]+(not )?ok [0-9]+ $t\$" | head -1)
			case $line in *"not ok"*) caught=1 ;; esac
			seen="KUnit: ${line:-no result for $t}"
		fi ;;
	selftest:*)
		t=${BREAK_EXPECT#selftest:}
		res=$BUILD/break-$atag$name.results
		"$top/scripts/ftracetest.sh" "$BREAK_VARIANT" --selftests --only "rftrace/$t" \
			--jobs 1 --out "$res" >/dev/null 2>&1
		line=$(grep -v '^#' "$res" 2>/dev/null | awk -v t="$t" '$1 ~ t"$"' | head -1)
		[ -n "$line" ] && [ "$(echo "$line" | awk '{ print $2 }')" != PASS ] && caught=1
		seen="selftest: ${line:-no result for $t}" ;;
	ftracetest:*)
		t=${BREAK_EXPECT#ftracetest:}
		res=$BUILD/break-$atag$name.results
		"$top/scripts/ftracetest.sh" "$BREAK_VARIANT" --only "$t" --jobs 1 \
			--test-timeout "$t=${BREAK_TIMEOUT:-600}" --out "$res" >/dev/null 2>&1
		line=$(grep -v '^#' "$res" 2>/dev/null | awk -v t="$t" '$1 == t' | head -1)
		[ -n "$line" ] && [ "$(echo "$line" | awk '{ print $2 }')" != PASS ] && caught=1
		seen="ftracetest: ${line:-no result for $t}" ;;
	literal-bug|null-func)
		# the guest mode of that name, whose marker line is
		# "@@RFT LITERAL-BUG ..." or "@@RFT NULL-FUNC ..."
		glog=$BUILD/break-$atag$name-$BREAK_EXPECT.log
		RFT_LOG=$glog "$top/scripts/run-guest.sh" "$BREAK_VARIANT" "$BREAK_EXPECT" \
			>/dev/null 2>&1
		marker=$(echo "$BREAK_EXPECT" | tr a-z A-Z)
		line=$(tr -d '\r' <"$glog" | grep -a "@@RFT $marker" | head -1)
		case $line in *PASS*) ;; *) caught=1 ;; esac
		grep -aqE 'Oops|Unable to handle|BUG:' "$glog" && caught=1
		seen="$BREAK_EXPECT: ${line:-no result}" ;;
	bpftrace)
		# scripts/bpftrace-test.sh on the broken kernel alone
		blog2=$BUILD/break-$atag$name-bpftrace.log
		"$top/scripts/bpftrace-test.sh" --out "$BUILD/break-$atag$name-bpftrace.results" \
			"$BREAK_VARIANT" >"$blog2" 2>&1 || caught=1
		seen="bpftrace-test: $(grep -m 1 '^FAIL' "$blog2" || tail -n 1 "$blog2")" ;;
	panic-check)
		plog=$BUILD/break-$atag$name-panic.log
		python3 "$top/scripts/panic-check.py" --objdump "${CROSS}objdump" \
			"$BUILD/out-$RFT_ARCH-$BREAK_VARIANT/vmlinux" >"$plog" 2>&1 || caught=1
		seen=$(tail -n 1 "$plog") ;;
	*) die "break $name: unknown expectation $BREAK_EXPECT" ;;
	esac
	if [ $caught = 1 ]; then
		passed=$((passed + 1))
		report+=("$name: caught ($seen)")
	else
		failed=$((failed + 1))
		report+=("$name: NOT caught ($seen)")
	fi
done

# Back to the kernels without a break.
for v in $(printf '%s\n' "${variants[@]}" | sort -u); do
	"$top/scripts/build-kernel.sh" "$v" >/dev/null 2>&1 || echo "rebuilding $v without a break failed"
done

echo
echo "== deliberate breaks ($RFT_ARCH)"
printf '  %s\n' "${report[@]}"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
