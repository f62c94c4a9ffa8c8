// SPDX-License-Identifier: GPL-2.0

//! x86_64: small images assembled and linked with `as`/`ld`.

mod common;

use common::*;
use std::collections::BTreeSet;

/// `__fentry__`, three traced functions (after `ENDBR64`, at the entry,
/// in `.init.text`) and one untraced function that still carries the call.
const GOOD: &str = r#"
	.text
	.globl _start
	.type _start, @function
_start:
	ret
	.size _start, .-_start

	.globl __fentry__
	.type __fentry__, @function
__fentry__:
	ret
	.size __fentry__, .-__fentry__

	.p2align 4
	.globl f_endbr
	.type f_endbr, @function
f_endbr:
	endbr64
	.globl site_endbr
site_endbr:
	call __fentry__
	movl $1, %eax
	ret
	.size f_endbr, .-f_endbr

	.p2align 4
	.type f_plain, @function
f_plain:
	.globl site_plain
site_plain:
	call __fentry__
	ret
	.size f_plain, .-f_plain

	.p2align 4
	.globl f_unrec
	.type f_unrec, @function
f_unrec:
	endbr64
	.globl site_unrec
site_unrec:
	call __fentry__
	ret
	.size f_unrec, .-f_unrec

	.section .init.text, "ax"
	.p2align 4
	.type f_init, @function
f_init:
	.globl site_init
site_init:
	call __fentry__
	ret
	.size f_init, .-f_init
"#;

const LIST: &str = r#"
	.section __mcount_loc, "a"
	.quad site_endbr
	.quad 0
	.quad site_plain
	.quad site_init
"#;

/// Two sites the kernel would patch wrongly.
const BAD: &str = r#"
	.text
	.p2align 4
	.globl f_bytes
	.type f_bytes, @function
f_bytes:
	endbr64
	.globl site_bytes
site_bytes:
	.byte 0xcc, 0x90, 0x90, 0x90, 0x90
	ret
	.size f_bytes, .-f_bytes

	.p2align 4
	.type f_off, @function
f_off:
	nop
	.globl site_off
site_off:
	call __fentry__
	ret
	.size f_off, .-f_off

	.section __mcount_loc, "a"
	.quad site_bytes
	.quad site_off
"#;

#[test]
fn the_sites_found_are_the_sites_put_in() {
    let dir = workdir("x86-good");
    let elf = X86_64.build(&dir, "good", &format!("{GOOD}{LIST}"), &[]);
    let syms = X86_64.symbols(&elf);
    let emit = dir.join("table");
    let run = tool(&["--emit", emit.to_str().unwrap(), elf.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.stdout.lines().next(),
        Some("sites 3, kept 3, refused 0, unrecorded 1")
    );
    assert!(run.stdout.contains("4 entries, 1 zero"), "{}", run.stdout);

    let want: BTreeSet<String> = ["site_endbr", "site_plain", "site_init"]
        .iter()
        .map(|s| format!("0x{:x}", syms[*s]))
        .collect();
    let rows = table(&emit);
    let got: BTreeSet<String> = rows.iter().map(|r| r.1.clone()).collect();
    assert_eq!(got, want);
    // x86: the entry is the site itself; the symbol offsets follow ENDBR64.
    for (entry, ip, sym) in &rows {
        assert_eq!(entry, ip);
        let expect = if *ip == format!("0x{:x}", syms["site_endbr"]) {
            "f_endbr+0x4"
        } else if *ip == format!("0x{:x}", syms["site_plain"]) {
            "f_plain+0x0"
        } else {
            "f_init+0x0"
        };
        assert_eq!(sym, expect);
    }

    // The untraced function that still carries the call is found.
    let unrec = run.lines("unrecorded:");
    assert_eq!(unrec.len(), 1, "{}", run.stdout);
    assert!(
        unrec[0].starts_with(&format!(
            "unrecorded: 0x{:x} f_unrec+0x4:",
            syms["site_unrec"]
        )),
        "{}",
        unrec[0]
    );
}

#[test]
fn wrong_bytes_and_a_wrong_offset_are_refused() {
    let dir = workdir("x86-bad");
    let elf = X86_64.build(&dir, "bad", &format!("{GOOD}{LIST}{BAD}"), &[]);
    let syms = X86_64.symbols(&elf);
    let emit = dir.join("table");
    let run = tool(&["--emit", emit.to_str().unwrap(), elf.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.stdout.lines().next(),
        Some("sites 5, kept 3, refused 2, unrecorded 1")
    );
    let fatal = run.lines("fatal:");
    assert_eq!(fatal.len(), 2, "{}", run.stdout);

    // The expected call, encoded here independently of the tool.
    let site = syms["site_bytes"];
    let rel = (syms["__fentry__"] as i64 - (site as i64 + 5)) as i32;
    let r = rel.to_le_bytes();
    let expected = format!("e8:{:02x}:{:02x}:{:02x}:{:02x}", r[0], r[1], r[2], r[3]);
    let line = format!(
        "fatal: 0x{site:x} f_bytes+0x4: expected {expected} (call __fentry__), found cc:90:90:90:90"
    );
    assert!(
        fatal.iter().any(|l| l.starts_with(&line)),
        "{fatal:?}\nwant {line}"
    );

    let off = format!(
        "fatal: 0x{:x} f_off+0x1: expected at f_off+0x0 (the entry), found at f_off+0x1",
        syms["site_off"]
    );
    assert!(fatal.iter().any(|l| *l == off), "{fatal:?}\nwant {off}");

    // The table holds only the kept sites.
    let got: BTreeSet<String> = table(&emit).into_iter().map(|r| r.1).collect();
    assert!(!got.contains(&format!("0x{site:x}")));
    assert_eq!(got.len(), 3);
}

#[test]
fn nop_mcount_expects_the_nop() {
    let dir = workdir("x86-nop");
    let src = r#"
	.text
	.globl _start
	.type _start, @function
_start:
	ret
	.size _start, .-_start
	.p2align 4
	.type f, @function
f:
	endbr64
	.globl site_f
site_f:
	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00
	ret
	.size f, .-f
	.section __mcount_loc, "a"
	.quad site_f
"#;
    let elf = X86_64.build(&dir, "nop", src, &[]);
    let run = tool(&["--nop-mcount", elf.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run
        .stdout
        .starts_with("sites 1, kept 1, refused 0, unrecorded 0"));
    // Without the option the call is expected, and there is none.
    let run = tool_on(&elf);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("f+0x4: the image has no __fentry__ symbol"),
        "{}",
        run.stdout
    );
}

/// A module: the list entries are relocations against the text sections,
/// the calls are relocated to an undefined `__fentry__`.
const MODULE: &str = r#"
	.text
	.p2align 4
	.globl m_one
	.type m_one, @function
m_one:
	endbr64
.Lone:
	call __fentry__
	ret
	.size m_one, .-m_one

	.p2align 4
	.type m_two, @function
m_two:
.Ltwo:
	call __fentry__
	ret
	.size m_two, .-m_two

	.p2align 4
	.type m_bad, @function
m_bad:
.Lbad:
	.byte 0xe8, 0, 0, 0, 0
	ret
	.size m_bad, .-m_bad

	.p2align 4
	.type m_unrec, @function
m_unrec:
	call __fentry__
	ret
	.size m_unrec, .-m_unrec

	.section .init.text, "ax"
	.type m_init, @function
m_init:
	endbr64
.Linit:
	call __fentry__
	ret
	.size m_init, .-m_init

	.section __mcount_loc, "a"
	.quad .Lone
	.quad .Ltwo
	.quad .Linit
	.quad .Lbad
"#;

#[test]
fn a_module_s_relocated_entries_are_resolved() {
    let dir = workdir("x86-ko");
    let obj = X86_64.assemble(&dir, "mod", MODULE);
    let syms = X86_64.symbols(&obj);
    let emit = dir.join("table");
    let run = tool(&["--emit", emit.to_str().unwrap(), obj.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.stdout.lines().next(),
        Some("sites 4, kept 3, refused 1, unrecorded 1")
    );
    let rows = table(&emit);
    let ips: Vec<&str> = rows.iter().map(|r| r.1.as_str()).collect();
    let one = format!(".text+0x{:x}", syms["m_one"] + 4);
    let two = format!(".text+0x{:x}", syms["m_two"]);
    assert_eq!(ips, vec![one.as_str(), two.as_str(), ".init.text+0x4"]);
    assert_eq!(rows[0].2, "m_one+0x4");
    assert_eq!(rows[2].2, "m_init+0x4");
    // The call with no relocation to __fentry__ is not a call site.
    let bad = run.lines("fatal:");
    assert_eq!(bad.len(), 1);
    assert!(
        bad[0].starts_with(&format!(
            "fatal: .text+0x{:x} m_bad+0x0: expected e8 with its rel32 relocated to __fentry__, found e8:00:00:00:00 (no relocation to __fentry__)",
            syms["m_bad"]
        )),
        "{}",
        bad[0]
    );
    let unrec = run.lines("unrecorded:");
    assert_eq!(unrec.len(), 1, "{}", run.stdout);
    assert!(unrec[0].contains("m_unrec+0x0"), "{}", unrec[0]);
}
