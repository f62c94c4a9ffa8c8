// SPDX-License-Identifier: GPL-2.0

//! The registry's consistency check (`rfcore::consistency`): every order of
//! adding and removing up to four ops of every kind through the accounting
//! leaves records the check finds consistent, and each kind of damage to a
//! record is reported as that kind. (The simulated kernel of [`super::sim`]
//! runs the check before every update pass of its random sequences too.)

use std::vec::Vec;

use crate::rfcore::{
    account::{
        add,
        remove,
        CallOps,
        OpsProps,
        Others, //
    },
    consistency::{
        check,
        Mismatch,
        Users, //
    },
    flags::{
        RecFlags,
        CALL_OPS,
        DIRECT,
        IPMODIFY,
        REGS,
        TRAMP, //
    },
};

/// One ops on the record: its properties and IPMODIFY.
#[derive(Clone, Copy, Debug)]
struct Op {
    props: OpsProps,
    ipmodify: bool,
}

/// The 32 kinds of ops (direct, save_regs, trampoline, call_ops_ok,
/// ipmodify); a direct ops is never IPMODIFY here (the C code lets them
/// share a site only through the ops_func protocol, outside the
/// accounting).
fn kinds() -> Vec<Op> {
    (0u32..32)
        .map(|b| Op {
            props: OpsProps {
                direct: b & 1 != 0,
                save_regs: b & 2 != 0,
                trampoline: b & 4 != 0,
                call_ops_ok: b & 8 != 0,
            },
            ipmodify: b & 16 != 0 && b & 1 == 0,
        })
        .collect()
}

/// The other ops still on the record, as the kernel's list walk sees them.
struct Left<'a>(&'a [Op]);

impl Others for Left<'_> {
    fn need_regs(&mut self) -> bool {
        self.0.iter().any(|o| o.props.save_regs)
    }
    fn other_has_trampoline(&mut self) -> bool {
        self.0.iter().any(|o| o.props.trampoline)
    }
    fn survivor_call_ops_ok(&mut self) -> bool {
        matches!(self.0, [o] if o.props.call_ops_ok)
    }
}

/// The IPMODIFY bit as `__ftrace_hash_update_ipmodify()` keeps it.
fn ipmodify_bit(flags: RecFlags, on: &[Op]) -> RecFlags {
    flags.set(IPMODIFY, on.iter().any(|o| o.ipmodify))
}

fn users(on: &[Op]) -> Users {
    let mut u = Users::none();
    for o in on {
        u.add(o.props, o.ipmodify);
    }
    u
}

/// Adds `ops` one by one, then removes them in `order`, checking the
/// record after every step; returns the number of checks.
fn run(ops: &[Op], order: &[usize], mode: CallOps) -> u64 {
    let mut flags = RecFlags::default();
    let mut on: Vec<Op> = Vec::new();
    let mut checks = 0;
    for o in ops {
        flags = add(flags, o.props, mode).expect("add");
        on.push(*o);
        flags = ipmodify_bit(flags, &on);
        let m = check(flags, &users(&on), mode);
        assert!(!m.any(), "after adding {on:?}: {flags:?} {m:?}");
        checks += 1;
    }
    for &i in order {
        let gone = ops[i];
        let pos = on
            .iter()
            .position(|o| o.props == gone.props && o.ipmodify == gone.ipmodify)
            .expect("on the record");
        on.remove(pos);
        flags = remove(flags, gone.props, mode, &mut Left(&on)).expect("remove");
        flags = ipmodify_bit(flags, &on);
        let m = check(flags, &users(&on), mode);
        assert!(
            !m.any(),
            "after removing {gone:?}, left {on:?}: {flags:?} {m:?}"
        );
        checks += 1;
    }
    checks
}

/// Every pair and triple of ops kinds (at most one direct ops, as the C
/// code allows), added then removed in every order, on both kinds of
/// architecture.
#[test]
fn accounting_stays_consistent() {
    let all = kinds();
    let mut checks = 0u64;
    let orders2: [&[usize]; 2] = [&[0, 1], &[1, 0]];
    let orders3: [&[usize]; 6] = [
        &[0, 1, 2],
        &[0, 2, 1],
        &[1, 0, 2],
        &[1, 2, 0],
        &[2, 0, 1],
        &[2, 1, 0],
    ];
    for mode in [CallOps::Supported, CallOps::Unsupported] {
        for a in &all {
            for b in &all {
                let two = [*a, *b];
                if two.iter().filter(|o| o.props.direct).count() > 1 {
                    continue;
                }
                for order in orders2 {
                    checks += run(&two, order, mode);
                }
                for c in &all {
                    let three = [*a, *b, *c];
                    if three.iter().filter(|o| o.props.direct).count() > 1 {
                        continue;
                    }
                    for order in orders3 {
                        checks += run(&three, order, mode);
                    }
                }
            }
        }
    }
    super::util::note(&std::format!("consistency: {checks} records checked"));
    assert!(checks > 100_000);
}

/// A record whose accounting is right, with two users (one direct).
fn good() -> (RecFlags, Users) {
    let a = Op {
        props: OpsProps {
            direct: true,
            save_regs: false,
            trampoline: false,
            call_ops_ok: true,
        },
        ipmodify: false,
    };
    let b = Op {
        props: OpsProps {
            direct: false,
            save_regs: true,
            trampoline: true,
            call_ops_ok: true,
        },
        ipmodify: true,
    };
    let mut flags = add(RecFlags::default(), a.props, CallOps::Supported).expect("add");
    flags = add(flags, b.props, CallOps::Supported).expect("add");
    flags = flags.with(IPMODIFY);
    (flags, users(&[a, b]))
}

#[test]
fn each_damage_is_reported_as_itself() {
    let (flags, u) = good();
    let mode = CallOps::Supported;
    assert_eq!(check(flags, &u, mode), Mismatch::default());
    let raw = flags.raw();
    let cases: [(RecFlags, Mismatch); 7] = [
        (
            RecFlags::from_raw(raw + 1),
            Mismatch {
                count: true,
                ..Mismatch::default()
            },
        ),
        (
            RecFlags::from_raw(raw - 1),
            Mismatch {
                count: true,
                ..Mismatch::default()
            },
        ),
        (
            flags.without(DIRECT),
            Mismatch {
                direct: true,
                ..Mismatch::default()
            },
        ),
        (
            flags.with(TRAMP),
            Mismatch {
                tramp: true,
                ..Mismatch::default()
            },
        ),
        (
            flags.with(CALL_OPS),
            Mismatch {
                call_ops: true,
                ..Mismatch::default()
            },
        ),
        (
            flags.without(REGS),
            Mismatch {
                regs: true,
                ..Mismatch::default()
            },
        ),
        (
            flags.without(IPMODIFY),
            Mismatch {
                ipmodify: true,
                ..Mismatch::default()
            },
        ),
    ];
    // A claim left behind after the IPMODIFY ops went.
    let (plain, _) = good();
    let u_plain = {
        let a = Op {
            props: OpsProps {
                direct: true,
                save_regs: false,
                trampoline: false,
                call_ops_ok: true,
            },
            ipmodify: false,
        };
        let b = Op {
            props: OpsProps {
                direct: false,
                save_regs: true,
                trampoline: true,
                call_ops_ok: true,
            },
            ipmodify: false,
        };
        users(&[a, b])
    };
    assert_eq!(
        check(plain, &u_plain, mode),
        Mismatch {
            ipmodify: true,
            ..Mismatch::default()
        }
    );
    assert_eq!(
        check(plain.without(IPMODIFY), &u_plain, mode),
        Mismatch::default()
    );
    for (bad, want) in cases {
        let got = check(bad, &u, mode);
        assert_eq!(got, want, "flags {bad:?}");
        assert!(got.any());
    }
    // The literal on an architecture without literals.
    let one = Op {
        props: OpsProps {
            call_ops_ok: true,
            ..OpsProps::default()
        },
        ipmodify: false,
    };
    let f = add(RecFlags::default(), one.props, CallOps::Supported).expect("add");
    assert!(f.any(CALL_OPS));
    assert!(check(f, &users(&[one]), CallOps::Unsupported).call_ops);
    assert!(!check(f, &users(&[one]), CallOps::Supported).any());
    // The literal for a single ops that needs the list function.
    let assisted = Op {
        props: OpsProps::default(),
        ipmodify: false,
    };
    assert!(check(f, &users(&[assisted]), CallOps::Supported).call_ops);
}
