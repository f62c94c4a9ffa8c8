// SPDX-License-Identifier: GPL-2.0

//! Damaged and incomplete images are rejected with an error that names
//! the section, exit code 2, and no table.

mod common;

use common::*;
use std::path::{Path, PathBuf};

const IMAGE: &str = r#"
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
	.type f, @function
f:
	endbr64
site_f:
	call __fentry__
	ret
	.size f, .-f
	.p2align 4
	.type g, @function
g:
site_g:
	call __fentry__
	ret
	.size g, .-g
"#;

const LIST: &str = r#"
	.section __mcount_loc, "a"
	.quad site_f
	.quad site_g
"#;

fn good(dir: &Path) -> PathBuf {
    X86_64.build(dir, "good", &format!("{IMAGE}{LIST}"), &[])
}

/// Runs the tool with `--emit` on `data` and checks that it is rejected
/// for `section` and that no table was written.
fn rejected(dir: &Path, name: &str, data: &[u8], section: &str) {
    let file = dir.join(name);
    std::fs::write(&file, data).unwrap();
    let emit = dir.join(format!("{name}.table"));
    let run = tool(&["--emit", emit.to_str().unwrap(), file.to_str().unwrap()]);
    assert_rejected(&run, section);
    assert!(!emit.exists(), "a table was written for a rejected image");
}

#[test]
fn the_good_image_is_accepted() {
    let dir = workdir("corrupt-base");
    let run = tool_on(&good(&dir));
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run
        .stdout
        .starts_with("sites 2, kept 2, refused 0, unrecorded 0"));
}

#[test]
fn a_truncated_image_is_rejected() {
    let dir = workdir("corrupt-cut");
    let data = std::fs::read(good(&dir)).unwrap();
    // Cut in the section header table (ld puts it last), then in half.
    rejected(
        &dir,
        "cut-end",
        &data[..data.len() - 10],
        "section header table",
    );
    rejected(
        &dir,
        "cut-half",
        &data[..data.len() / 2],
        "section header table",
    );
    // Cut inside the ELF header itself.
    rejected(&dir, "cut-head", &data[..40], "ELF header");
}

#[test]
fn a_list_section_of_odd_size_is_rejected() {
    let dir = workdir("corrupt-size");
    let mut data = std::fs::read(good(&dir)).unwrap();
    let h = section_header(&data, "__mcount_loc");
    let size = get64(&data, h + SH_SIZE);
    assert_eq!(size, 16);
    put64(&mut data, h + SH_SIZE, size - 4);
    rejected(&dir, "odd", &data, "__mcount_loc");
}

#[test]
fn a_list_section_outside_the_file_is_rejected() {
    let dir = workdir("corrupt-offset");
    let mut data = std::fs::read(good(&dir)).unwrap();
    let h = section_header(&data, "__mcount_loc");
    let far = data.len() as u64 + 0x1000;
    put64(&mut data, h + SH_OFFSET, far);
    rejected(&dir, "offset", &data, "__mcount_loc");
    // A size that runs past the end of the file.
    let mut data = std::fs::read(dir.join("good")).unwrap();
    put64(&mut data, h + SH_SIZE, 1 << 40);
    rejected(&dir, "huge", &data, "__mcount_loc");
}

#[test]
fn a_damaged_text_section_is_rejected() {
    let dir = workdir("corrupt-text");
    let mut data = std::fs::read(good(&dir)).unwrap();
    let h = section_header(&data, ".text");
    put64(&mut data, h + SH_SIZE, 1 << 40);
    rejected(&dir, "text", &data, ".text");
}

#[test]
fn a_damaged_section_header_table_is_rejected() {
    let dir = workdir("corrupt-shoff");
    let mut data = std::fs::read(good(&dir)).unwrap();
    let near_end = data.len() as u64 - 8;
    put64(&mut data, 0x28, near_end);
    rejected(&dir, "shoff", &data, "section header table");
}

#[test]
fn a_damaged_symbol_table_is_rejected() {
    let dir = workdir("corrupt-symtab");
    let mut data = std::fs::read(good(&dir)).unwrap();
    let h = section_header(&data, ".symtab");
    let size = get64(&data, h + SH_SIZE);
    put64(&mut data, h + SH_SIZE, size + 5);
    rejected(&dir, "symtab", &data, ".symtab");
}

#[test]
fn a_missing_list_is_rejected() {
    let dir = workdir("corrupt-missing");
    let elf = X86_64.build(&dir, "nolist", IMAGE, &[]);
    let run = tool_on(&elf);
    assert_rejected(&run, "__mcount_loc");
    assert!(run.stderr.contains("missing"), "{}", run.stderr);
}

#[test]
fn an_entry_outside_text_is_rejected() {
    let dir = workdir("corrupt-data");
    let src = format!("{IMAGE}{LIST}\n\t.data\nnot_code:\n\t.quad 0\n\t.section __mcount_loc, \"a\"\n\t.quad not_code\n");
    let elf = X86_64.build(&dir, "data", &src, &[]);
    let run = tool_on(&elf);
    assert_rejected(&run, "__mcount_loc");
    assert!(
        run.stderr.contains("entry 2") && run.stderr.contains("outside any text section"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_module_with_a_damaged_relocation_section_is_rejected() {
    let dir = workdir("corrupt-rela");
    let src = format!("{IMAGE}{LIST}").replace("call __fentry__", "call ext_fentry");
    let obj = X86_64.assemble(&dir, "mod", &src);
    let data = std::fs::read(&obj).unwrap();
    let h = section_header(&data, ".rela__mcount_loc");

    let mut odd = data.clone();
    put64(&mut odd, h + SH_SIZE, get64(&data, h + SH_SIZE) - 3);
    rejected(&dir, "rela-odd", &odd, ".rela__mcount_loc");

    let mut far = data.clone();
    put64(&mut far, h + SH_OFFSET, data.len() as u64 * 2);
    rejected(&dir, "rela-far", &far, ".rela__mcount_loc");

    // One relocation fewer: an entry without a relocation is never read
    // as a site at offset 0.
    let mut short = data.clone();
    put64(&mut short, h + SH_SIZE, get64(&data, h + SH_SIZE) - 24);
    rejected(&dir, "rela-short", &short, "__mcount_loc");
}

#[test]
fn an_unknown_machine_is_rejected() {
    let dir = workdir("corrupt-machine");
    let mut data = std::fs::read(good(&dir)).unwrap();
    data[0x12..0x14].copy_from_slice(&3u16.to_le_bytes()); // EM_386
    rejected(&dir, "i386", &data, "ELF header");
}
