// SPDX-License-Identifier: GPL-2.0

//! Shared by the tool's host tests: assembling and linking small images
//! with the system's binutils, running the tool, editing ELF headers.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The binutils of one architecture.
#[derive(Clone, Copy)]
pub struct Binutils {
    prefix: &'static str,
    package: &'static str,
    as_args: &'static [&'static str],
}

pub const X86_64: Binutils = Binutils {
    prefix: "",
    package: "binutils",
    as_args: &["--64"],
};

pub const ARM64: Binutils = Binutils {
    prefix: "aarch64-linux-gnu-",
    package: "binutils-aarch64-linux-gnu",
    as_args: &[],
};

pub const RISCV64: Binutils = Binutils {
    prefix: "riscv64-linux-gnu-",
    package: "binutils-riscv64-linux-gnu",
    as_args: &["-march=rv64gc", "-mabi=lp64d"],
};

/// A fresh directory for one test.
pub fn workdir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("rftrace-sites-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the test directory");
    dir
}

impl Binutils {
    fn run(&self, tool: &str, args: &[&str]) -> String {
        let prog = format!("{}{tool}", self.prefix);
        let out = match Command::new(&prog).args(args).output() {
            Ok(o) => o,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
                "{prog} not found: install the Debian package {} \
                 (scripts/setup.sh installs it)",
                self.package
            ),
            Err(e) => panic!("{prog}: {e}"),
        };
        assert!(
            out.status.success(),
            "{prog} {args:?} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Assembles `src` into `dir/name.o`.
    pub fn assemble(&self, dir: &Path, name: &str, src: &str) -> PathBuf {
        let s = dir.join(format!("{name}.s"));
        let o = dir.join(format!("{name}.o"));
        std::fs::write(&s, src).expect("write the source");
        let mut args: Vec<&str> = self.as_args.to_vec();
        let (s_str, o_str) = (s.to_str().unwrap(), o.to_str().unwrap());
        args.extend(["-o", o_str, s_str]);
        self.run("as", &args);
        o
    }

    /// Links `obj` into `dir/name` with `extra` linker arguments.
    pub fn link(&self, dir: &Path, obj: &Path, name: &str, extra: &[&str]) -> PathBuf {
        let out = dir.join(name);
        let mut args = vec!["-e", "_start", "-o", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        args.push(obj.to_str().unwrap());
        self.run("ld", &args);
        out
    }

    /// Assembles and links `src`.
    pub fn build(&self, dir: &Path, name: &str, src: &str, extra: &[&str]) -> PathBuf {
        let o = self.assemble(dir, name, src);
        self.link(dir, &o, name, extra)
    }

    /// Every symbol's value, from `nm`.
    pub fn symbols(&self, file: &Path) -> HashMap<String, u64> {
        self.run("nm", &[file.to_str().unwrap()])
            .lines()
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                let v = u64::from_str_radix(f.next()?, 16).ok()?;
                let _ty = f.next()?;
                Some((f.next()?.to_string(), v))
            })
            .collect()
    }
}

/// What the tool did.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn lines(&self, prefix: &str) -> Vec<&str> {
        self.stdout
            .lines()
            .filter(|l| l.starts_with(prefix))
            .collect()
    }
}

/// Runs the tool.
pub fn tool(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_rftrace-sites"))
        .args(args)
        .output()
        .expect("run rftrace-sites");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

pub fn tool_on(file: &Path) -> Run {
    tool(&[file.to_str().unwrap()])
}

/// The kept sites of an `--emit` table: `(entry, ip)` columns as printed.
pub fn table(path: &Path) -> Vec<(String, String, String)> {
    std::fs::read_to_string(path)
        .expect("read the table")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            assert_eq!(f.len(), 3, "table line {l:?}");
            (f[0].to_string(), f[1].to_string(), f[2].to_string())
        })
        .collect()
}

fn rd<const N: usize>(d: &[u8], at: usize) -> [u8; N] {
    d[at..at + N].try_into().unwrap()
}

/// The file offset of section `name`'s header in an ELF64 file.
pub fn section_header(data: &[u8], name: &str) -> usize {
    let shoff = u64::from_le_bytes(rd(data, 0x28)) as usize;
    let entsize = u16::from_le_bytes(rd(data, 0x3a)) as usize;
    let num = u16::from_le_bytes(rd(data, 0x3c)) as usize;
    let strndx = u16::from_le_bytes(rd(data, 0x3e)) as usize;
    let str_hdr = shoff + strndx * entsize;
    let str_off = u64::from_le_bytes(rd(data, str_hdr + 0x18)) as usize;
    (0..num)
        .map(|i| shoff + i * entsize)
        .find(|&h| {
            let n = u32::from_le_bytes(rd(data, h)) as usize;
            let s = &data[str_off + n..];
            let end = s.iter().position(|&b| b == 0).unwrap();
            &s[..end] == name.as_bytes()
        })
        .unwrap_or_else(|| panic!("no section {name}"))
}

/// Field offsets in an ELF64 section header.
pub const SH_OFFSET: usize = 0x18;
pub const SH_SIZE: usize = 0x20;

/// Reads a u64 field.
pub fn get64(data: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(rd(data, at))
}

/// Writes a u64 field.
pub fn put64(data: &mut [u8], at: usize, v: u64) {
    data[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// Asserts an input error: exit 2, the message names `section`, no
/// summary printed.
pub fn assert_rejected(run: &Run, section: &str) {
    assert_eq!(
        run.code, 2,
        "stdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    let named = match section {
        "ELF header" | "section header table" => format!(": {section}: "),
        name => format!(": section {name}: "),
    };
    assert!(
        run.stderr.contains(&named),
        "the error does not name section {section}: {}",
        run.stderr
    );
    assert!(
        !run.stdout.contains("sites "),
        "a summary was printed for a rejected image:\n{}",
        run.stdout
    );
}
