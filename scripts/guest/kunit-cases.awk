# SPDX-License-Identifier: GPL-2.0
#
# KTAP output of the core's KUnit suites (rftrace_<module>), one line in,
# printk time stamps already stripped: prints "PASSED FAILED UNFINISHED",
# the cases passed and failed in those suites and the suites that started
# but printed no result (a crash or a hang inside one).  Used by
# scripts/lib.sh (kunit_clean) and by the guest's init (as
# /rftrace/kunit-cases.awk).
/^[[:space:]]+# Subtest: rftrace_[a-z0-9_]+$/ { on = 1; started++; next }
on && /^[[:space:]]+ok [0-9]+ / { p++ }
on && /^[[:space:]]+not ok [0-9]+ / { f++ }
/^(not )?ok [0-9]+ rftrace_[a-z0-9_]+$/ { on = 0; ended++ }
END { print p + 0, f + 0, started - ended }
