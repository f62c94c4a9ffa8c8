// SPDX-License-Identifier: GPL-2.0

//! KUnit tests of the shadow comparator: it sees each kind of difference.

use kernel::prelude::*;

#[kunit_tests(rftrace_shadow)]
mod kunit {
    use kernel::bindings;

    use crate::{
        kside::lock::FtraceLocked,
        kside::record::Rec,
        rfcore::{flags::RecFlags, record::decide}, //
    };

    #[test]
    fn the_shadow_comparator_sees_each_difference() {
        use crate::{
            kside::shadow::compare,
            rfcore::{
                record::Update,
                update::Facts, //
            },
        };
        FtraceLocked::with(|lock| {
            // A record in the NOP state with one user: enabling makes a call.
            let mut raw = bindings::dyn_ftrace {
                ip: crate::kside::abi::c_word(0x1000),
                flags: 1,
                ..Default::default()
            };
            let rec = Rec::from_mut(&mut raw, lock);
            let right = decide(rec.flags(), true);
            assert_eq!(right.update, Update::MakeCall);
            let facts = Facts {
                ip: rec.ip(),
                flags: rec.flags(),
                new: Some(crate::kside::shadow::c_select_addr(rec, true)),
                curr: Some(crate::kside::shadow::c_select_addr(rec, false)),
                unique: None,
                set: None,
            };
            // The truth: nothing differs.
            assert!(!compare(rec, true, &right, Some(&facts)).any());
            // A wrong update, wrong flags, a wrong target: each is seen.
            let mut wrong = right;
            wrong.update = Update::Ignore;
            assert!(compare(rec, true, &wrong, Some(&facts)).decision);
            let mut wrong = right;
            wrong.flags = RecFlags::from_raw(right.flags.raw() ^ 1);
            assert!(compare(rec, true, &wrong, None).decision);
            let mut moved = facts;
            moved.new = moved.new.map(|a| a.wrapping_add(4));
            let d = compare(rec, true, &right, Some(&moved));
            assert!(d.targets && !d.decision);
            let mut moved = facts;
            moved.curr = moved.curr.map(|a| a.wrapping_add(4));
            assert!(compare(rec, true, &right, Some(&moved)).targets);
            // A target the plan did not need is not gathered, nor compared.
            let mut unasked = moved;
            unasked.curr = None;
            assert!(!compare(rec, true, &right, Some(&unasked)).any());
        });
    }
}
