// SPDX-License-Identifier: GPL-2.0

//! riscv64 with `CALL_OPS`: images assembled and linked with
//! `riscv64-linux-gnu-as`/`-ld` in the layout of
//! `-fpatchable-function-entry=8,4` (C extension), linked with relaxation
//! (the default) and with `--no-relax` (what 7.2 forces on a
//! `DYNAMIC_FTRACE` kernel).

mod common;

use common::*;
use std::collections::BTreeSet;
use std::path::Path;

/// A site: 4 `c.nop` of literal at `ent_NAME`, the function `f_NAME` with
/// 4 `c.nop` (the `auipc` slot and the `jalr` slot `site_NAME`), then a
/// body with two calls the linker can relax.
fn site(name: &str, body: &str) -> String {
    format!(
        r#"
	.text
	.p2align 3
	.globl ent_{name}
ent_{name}:
	c.nop
	c.nop
	c.nop
	c.nop
	.globl f_{name}
	.type f_{name}, @function
f_{name}:
	c.nop
	c.nop
	.globl site_{name}
site_{name}:
	c.nop
	c.nop
{body}
	ret
	.size f_{name}, .-f_{name}
"#
    )
}

const CALLS: &str = "\tcall callee\n\tcall callee\n";

const START: &str = r#"
	.text
	.globl _start
	.type _start, @function
_start:
	call callee
	call callee
	ret
	.size _start, .-_start
	.globl callee
	.type callee, @function
callee:
	ret
	.size callee, .-callee
"#;

fn list(names: &[&str]) -> String {
    let mut s = String::from("\n\t.section __patchable_function_entries, \"aw\"\n");
    for n in names {
        s.push_str(&format!("\t.quad ent_{n}\n"));
    }
    s
}

/// Runs the tool with `--emit` and returns `(entry, ip)` of the kept sites.
fn kept(dir: &Path, elf: &Path) -> (Run, BTreeSet<(String, String)>) {
    let emit = dir.join(format!(
        "{}.table",
        elf.file_name().unwrap().to_str().unwrap()
    ));
    let run = tool(&["--emit", emit.to_str().unwrap(), elf.to_str().unwrap()]);
    let rows = if emit.exists() {
        table(&emit).into_iter().map(|r| (r.0, r.1)).collect()
    } else {
        BTreeSet::new()
    };
    (run, rows)
}

fn want(
    syms: &std::collections::HashMap<String, u64>,
    names: &[&str],
) -> BTreeSet<(String, String)> {
    names
        .iter()
        .map(|n| {
            (
                format!("0x{:x}", syms[&format!("ent_{n}")]),
                format!("0x{:x}", syms[&format!("site_{n}")]),
            )
        })
        .collect()
}

#[test]
fn a_relaxed_link_moves_the_sites_and_they_are_still_found() {
    let dir = workdir("riscv-relax");
    let src = [
        START.to_string(),
        site("a", CALLS),
        site("b", CALLS),
        site("c", ""),
        list(&["a", "b", "c"]),
    ]
    .concat();
    let obj = RISCV64.assemble(&dir, "sites", &src);
    let relaxed = RISCV64.link(&dir, &obj, "relaxed", &[]);
    let strict = RISCV64.link(&dir, &obj, "norelax", &["--no-relax"]);
    let rs = RISCV64.symbols(&relaxed);
    let ns = RISCV64.symbols(&strict);

    // Relaxation turned calls into shorter jumps: every site moved.
    for n in ["a", "b", "c"] {
        let e = format!("ent_{n}");
        assert_ne!(rs[&e], ns[&e], "{e} did not move: the test proves nothing");
        assert_eq!(rs[&e] % 8, 0, "{e} lost its alignment");
    }
    assert!(rs["ent_c"] < ns["ent_c"]);

    for (elf, syms) in [(&relaxed, &rs), (&strict, &ns)] {
        let (run, got) = kept(&dir, elf);
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        assert_eq!(
            run.stdout.lines().next(),
            Some("sites 3, kept 3, refused 0, unrecorded 0")
        );
        assert_eq!(got, want(syms, &["a", "b", "c"]));
        // The ip is the jalr slot, 12 bytes past the literal.
        for n in ["a", "b", "c"] {
            assert_eq!(syms[&format!("site_{n}")] - syms[&format!("ent_{n}")], 12);
        }
    }
}

#[test]
fn four_byte_nops_misaligned_literals_wrong_bytes_and_unrecorded_entries() {
    let dir = workdir("riscv-bad");
    // n: the same site with 4-byte NOPs (no C extension: 4,2).
    let n = site("n", "")
        .replace(
            "\tc.nop\n\tc.nop\n\tc.nop\n\tc.nop\n",
            "\t.option push\n\t.option norvc\n\tnop\n\tnop\n\t.option pop\n",
        )
        .replace(
            "\tc.nop\n\tc.nop\n",
            "\t.option push\n\t.option norvc\n\tnop\n\t.option pop\n",
        );
    // m: literal at 4 mod 8.
    let m = site("m", "").replacen("\t.p2align 3\n", "\t.p2align 3\n\tc.nop\n\tc.nop\n", 1);
    // w: auipc already in the first entry slot.
    let w = site("w", "").replacen("f_w:\n\tc.nop\n\tc.nop\n", "f_w:\n\tauipc t0, 0\n", 1);
    let src = [
        START.to_string(),
        site("a", CALLS),
        n,
        m,
        w,
        site("u", CALLS),
        list(&["a", "n", "m", "w"]),
    ]
    .concat();
    let elf = RISCV64.build(&dir, "bad", &src, &[]);
    let syms = RISCV64.symbols(&elf);
    assert_eq!(syms["ent_m"] % 8, 4, "the test needs a misaligned literal");
    let (run, got) = kept(&dir, &elf);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.stdout.lines().next(),
        Some("sites 4, kept 2, refused 2, unrecorded 1")
    );
    assert_eq!(got, want(&syms, &["a", "n"]));
    let refused = run.lines("refused:");
    assert_eq!(refused.len(), 1, "{}", run.stdout);
    assert!(
        refused[0].starts_with(&format!(
            "refused: 0x{:x} f_m-0x8: misaligned CALL_OPS literal",
            syms["ent_m"]
        )),
        "{}",
        refused[0]
    );
    let fatal = run.lines("fatal:");
    assert_eq!(fatal.len(), 1, "{}", run.stdout);
    let w = format!(
        "fatal: 0x{:x} f_w-0x8: expected 16 bytes of NOPs (c.nop 01:00 or nop 13:00:00:00) from the literal to the jalr slot, found 01:00:01:00:01:00:01:00:97:02:00:00:01:00:01:00",
        syms["ent_w"]
    );
    assert_eq!(fatal[0], w);
    let unrec = run.lines("unrecorded:");
    assert!(
        unrec[0].starts_with(&format!("unrecorded: 0x{:x} f_u+0x4:", syms["site_u"])),
        "{unrec:?}"
    );
}

#[test]
fn a_truncated_riscv_image_is_rejected() {
    let dir = workdir("riscv-cut");
    let src = [START.to_string(), site("a", CALLS), list(&["a"])].concat();
    let elf = RISCV64.build(&dir, "cut", &src, &[]);
    let mut data = std::fs::read(&elf).unwrap();
    let h = section_header(&data, "__patchable_function_entries");
    let size = get64(&data, h + SH_SIZE);
    put64(&mut data, h + SH_SIZE, size + 2);
    let bad = dir.join("odd");
    std::fs::write(&bad, &data).unwrap();
    assert_rejected(&tool_on(&bad), "__patchable_function_entries");
    let data = std::fs::read(&elf).unwrap();
    std::fs::write(&bad, &data[..data.len() * 2 / 3]).unwrap();
    assert_rejected(&tool_on(&bad), "section header table");
}
