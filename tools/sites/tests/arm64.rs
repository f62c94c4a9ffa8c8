// SPDX-License-Identifier: GPL-2.0

//! arm64 with `CALL_OPS`: images assembled and linked with
//! `aarch64-linux-gnu-as`/`-ld`, in the layout of
//! `-fpatchable-function-entry=4,2`.

mod common;

use common::*;
use std::collections::BTreeSet;

/// A site: the literal's two NOPs at `ent_NAME`, the function `f_NAME`,
/// `BTI C` if asked, the `MOV X9, LR` slot and the `BL` slot `site_NAME`.
fn site(name: &str, bti: bool, pad: bool) -> String {
    format!(
        r#"
	.text
	.p2align 3
{pad}
	.globl ent_{name}
ent_{name}:
	nop
	nop
	.globl f_{name}
	.type f_{name}, %function
f_{name}:
{bti}
	nop
	.globl site_{name}
site_{name}:
	nop
	mov x0, #1
	ret
	.size f_{name}, .-f_{name}
"#,
        pad = if pad { "\tnop" } else { "" },
        bti = if bti { "\tbti c" } else { "" },
    )
}

const START: &str = r#"
	.text
	.globl _start
	.type _start, %function
_start:
	ret
	.size _start, .-_start
"#;

fn list(names: &[&str]) -> String {
    let mut s = String::from("\n\t.section __patchable_function_entries, \"aw\"\n");
    for n in names {
        s.push_str(&format!("\t.quad ent_{n}\n"));
    }
    s
}

#[test]
fn the_sites_found_are_the_sites_put_in() {
    let dir = workdir("arm64-good");
    let src = [
        START.to_string(),
        site("a", false, false),
        site("b", true, false),
        site("u", false, false),
        list(&["a", "b"]),
    ]
    .concat();
    let elf = ARM64.build(&dir, "good", &src, &[]);
    let syms = ARM64.symbols(&elf);
    let emit = dir.join("table");
    let run = tool(&["--emit", emit.to_str().unwrap(), elf.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.stdout.lines().next(),
        Some("sites 2, kept 2, refused 0, unrecorded 1")
    );
    let rows = table(&emit);
    let got: BTreeSet<(String, String)> = rows.iter().map(|r| (r.0.clone(), r.1.clone())).collect();
    let want: BTreeSet<(String, String)> = ["a", "b"]
        .iter()
        .map(|n| {
            (
                format!("0x{:x}", syms[&format!("ent_{n}")]),
                format!("0x{:x}", syms[&format!("site_{n}")]),
            )
        })
        .collect();
    assert_eq!(got, want);
    // The BL slot is 12 bytes past the literal, 16 after BTI C.
    assert_eq!(syms["site_a"] - syms["ent_a"], 12);
    assert_eq!(syms["site_b"] - syms["ent_b"], 16);
    let syms_col: BTreeSet<&str> = rows.iter().map(|r| r.2.as_str()).collect();
    assert_eq!(syms_col, BTreeSet::from(["f_a+0x4", "f_b+0x8"]));

    let unrec = run.lines("unrecorded:");
    assert_eq!(unrec.len(), 1, "{}", run.stdout);
    assert!(
        unrec[0].starts_with(&format!("unrecorded: 0x{:x} f_u+0x4:", syms["site_u"])),
        "{}",
        unrec[0]
    );
}

#[test]
fn a_misaligned_call_ops_site_is_refused() {
    let dir = workdir("arm64-misaligned");
    let src = [
        START.to_string(),
        site("a", false, false),
        site("m", false, true),
        list(&["a", "m"]),
    ]
    .concat();
    let elf = ARM64.build(&dir, "mis", &src, &[]);
    let syms = ARM64.symbols(&elf);
    assert_eq!(syms["ent_m"] % 8, 4, "the test needs a misaligned literal");
    let emit = dir.join("table");
    let run = tool(&["--emit", emit.to_str().unwrap(), elf.to_str().unwrap()]);
    // The kernel refuses it too: reported, not an error.
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.stdout.lines().next(),
        Some("sites 2, kept 1, refused 1, unrecorded 0")
    );
    let refused = run.lines("refused:");
    assert_eq!(
        refused,
        vec![format!(
            "refused: 0x{:x} f_m-0x8: misaligned CALL_OPS literal at 0x{:x}: not 8-byte aligned (the kernel refuses the site)",
            syms["ent_m"], syms["ent_m"]
        )
        .as_str()]
    );
    let rows = table(&emit);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].1, format!("0x{:x}", syms["site_a"]));
}

#[test]
fn wrong_words_are_refused_with_expected_and_found() {
    let dir = workdir("arm64-bad");
    // w1: the BL slot holds a RET; w2: MOV X9, LR is there already;
    // w3: the function symbol is not 8 bytes after the entry.
    let w1 = site("w1", false, false).replacen("site_w1:\n\tnop", "site_w1:\n\tret", 1);
    let w2 = site("w2", false, false).replacen("f_w2:\n\n\tnop", "f_w2:\n\n\tmov x9, x30", 1);
    let w3 = site("w3", false, false).replacen(
        "ent_w3:\n\tnop\n\tnop",
        "ent_w3:\n\tnop\n\tnop\n\tnop",
        1,
    );
    let src = [
        START.to_string(),
        site("a", false, false),
        w1,
        w2,
        w3,
        list(&["a", "w1", "w2", "w3"]),
    ]
    .concat();
    let elf = ARM64.build(&dir, "bad", &src, &[]);
    let syms = ARM64.symbols(&elf);
    let run = tool_on(&elf);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.stdout.lines().next(),
        Some("sites 4, kept 1, refused 3, unrecorded 1")
    );
    // w3's real patchable entry (4 bytes after the recorded one) is not
    // in the list.
    let unrec = run.lines("unrecorded:");
    assert!(
        unrec.len() == 1 && unrec[0].contains("f_w3+0x4"),
        "{unrec:?}"
    );
    let fatal = run.lines("fatal:");
    assert_eq!(fatal.len(), 3, "{}", run.stdout);
    let want = [
        format!(
            "fatal: 0x{:x} f_w1+0x4: BL slot: expected d503201f (nop), found d65f03c0 (other)",
            syms["site_w1"]
        ),
        format!(
            "fatal: 0x{:x} f_w2+0x0: expected d503201f (nop) or a BTI at the function entry, found aa1e03e9 (mov x9, lr)",
            syms["f_w2"]
        ),
        format!(
            "fatal: 0x{:x} f_w3+0x0: expected a function symbol at the entry + 8 (0x{:x}), found f_w3 at 0x{:x}",
            syms["ent_w3"] + 12,
            syms["ent_w3"] + 8,
            syms["f_w3"]
        ),
    ];
    for w in &want {
        assert!(fatal.contains(&w.as_str()), "{fatal:#?}\nwant {w}");
    }
}

#[test]
fn a_module_s_sections_and_relocations() {
    let dir = workdir("arm64-ko");
    // Two list sections, as GCC emits one per text section.
    let src = [
        site("a", false, false),
        site("m", false, true),
        "\n\t.section __patchable_function_entries, \"awo\", %progbits, ent_a\n\t.quad ent_a\n\t.quad ent_m\n".to_string(),
        site("i", false, false).replace("\t.text\n", "\t.section .init.text, \"ax\"\n"),
        "\n\t.section __patchable_function_entries, \"awo\", %progbits, ent_i\n\t.quad ent_i\n".to_string(),
    ]
    .concat();
    let obj = ARM64.assemble(&dir, "mod", &src);
    let syms = ARM64.symbols(&obj);
    let emit = dir.join("table");
    let run = tool(&["--emit", emit.to_str().unwrap(), obj.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.stdout.lines().next(),
        Some("sites 3, kept 2, refused 1, unrecorded 0")
    );
    let rows = table(&emit);
    let ips: Vec<&str> = rows.iter().map(|r| r.1.as_str()).collect();
    let a = format!(".text+0x{:x}", syms["site_a"]);
    let i = format!(".init.text+0x{:x}", syms["site_i"]);
    assert_eq!(ips, vec![a.as_str(), i.as_str()]);
    assert!(
        run.stdout.contains(&format!(
            "refused: .text+0x{:x} f_m-0x8: misaligned CALL_OPS literal",
            syms["ent_m"]
        )),
        "{}",
        run.stdout
    );
}
