// SPDX-License-Identifier: GPL-2.0

//! The checks of every recorded call site, the search for unrecorded
//! ones, and the report.
//!
//! Per site, as the kernel will treat it:
//!
//! - **layout**: the patch-site address the kernel computes from the entry
//!   (`ftrace_call_adjust()`; the pure core's `x86::call_site` and
//!   `arm64::call_site`/`arm64::Site`, [`crate::riscv`]) must be at the
//!   expected offset from a function symbol: x86 `func+0`, or `func+4`
//!   after `ENDBR64`; arm64 and riscv64 the function symbol 8 bytes after
//!   the entry (the ops literal in front of it);
//! - **bytes**: what the kernel checks before its first write must be there
//!   in the image: x86 `call __fentry__` (the kernel's first conversion
//!   replaces that call, `x86::plan_init`), or the 5-byte NOP with
//!   `--nop-mcount`; arm64 NOPs in the literal, at the `MOV X9, LR` slot
//!   (`arm64::plan_init`) and at the `BL` slot; riscv64 16 bytes of NOPs;
//! - **alignment**: arm64 and riscv64 `CALL_OPS` need the literal 8-byte
//!   aligned; a misaligned one is refused by the kernel (the Rust core)
//!   too, so it is reported but is not an error;
//! - a second entry for one site is refused, as the Rust core refuses it.
//!
//! A site that fails the layout or the bytes is **fatal**: the kernel would
//! patch the wrong place or fail on it.

use crate::image::{Arch, Entry, Func, Image, Kind, Loc};
use crate::riscv;
use rftrace::rfcore::arch::{arm64, x86};
use std::collections::HashSet;
use std::fmt::{self, Write as _};

/// `ENDBR64`.
pub const ENDBR64: [u8; 4] = [0xf3, 0x0f, 0x1e, 0xfa];

/// How the checks read the image.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// x86: the sites hold the 5-byte NOP already (a kernel built with
    /// `CC_USING_NOP_MCOUNT`), not `call __fentry__`.
    pub nop_mcount: bool,
}

/// How bad a problem is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// The kernel would patch the site wrongly (or fail on it).
    Fatal,
    /// The kernel refuses the site too (misaligned literal, duplicate).
    Refused,
    /// A function entry with the pattern that no entry records.
    Unrecorded,
}

impl Severity {
    /// As printed at the start of the line.
    pub const fn label(self) -> &'static str {
        match self {
            Severity::Fatal => "fatal",
            Severity::Refused => "refused",
            Severity::Unrecorded => "unrecorded",
        }
    }
}

/// One problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// How bad.
    pub severity: Severity,
    /// The place (address, or `section+0xoff`).
    pub at: String,
    /// `function+0xoff`, or `?`.
    pub sym: String,
    /// What was expected and what was found.
    pub what: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} {}: {}",
            self.severity.label(),
            self.at,
            self.sym,
            self.what
        )
    }
}

/// A site the kernel will make a record of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    /// The list entry (what the compiler recorded).
    pub entry: Loc,
    /// The patch site the kernel computes from it (the record's ip).
    pub ip: Loc,
    /// The entry's address (offset in an object file).
    pub entry_addr: u64,
    /// The ip's address (offset in an object file).
    pub ip_addr: u64,
    /// The entry as printed.
    pub entry_shown: String,
    /// The ip as printed.
    pub ip_shown: String,
    /// The function and the ip's offset in it.
    pub sym: String,
}

/// The result of checking an image.
#[derive(Clone, Debug)]
pub struct Report {
    /// Architecture.
    pub arch: Arch,
    /// Linked image or object.
    pub kind: Kind,
    /// Where the list is.
    pub list: String,
    /// Entries in the list, zero ones included.
    pub entries: usize,
    /// Zero entries.
    pub zero: usize,
    /// Whether the list is in ascending order.
    pub sorted: bool,
    /// The sites kept, in ascending order of entry.
    pub kept: Vec<Site>,
    /// Every problem, fatal first, each kind in ascending order.
    pub problems: Vec<Problem>,
}

impl Report {
    /// Non-zero entries.
    pub fn sites(&self) -> usize {
        self.entries - self.zero
    }

    fn count(&self, s: Severity) -> usize {
        self.problems.iter().filter(|p| p.severity == s).count()
    }

    /// Sites not kept (fatal or refused).
    pub fn refused(&self) -> usize {
        self.count(Severity::Fatal) + self.count(Severity::Refused)
    }

    /// Sites the kernel would patch wrongly.
    pub fn fatal(&self) -> usize {
        self.count(Severity::Fatal)
    }

    /// Function entries with the pattern and no entry.
    pub fn unrecorded(&self) -> usize {
        self.count(Severity::Unrecorded)
    }

    /// The one-line summary.
    pub fn summary(&self) -> String {
        format!(
            "sites {}, kept {}, refused {}, unrecorded {}",
            self.sites(),
            self.kept.len(),
            self.refused(),
            self.unrecorded()
        )
    }

    /// The second line: where the list is and what else was counted.
    pub fn details(&self) -> String {
        format!(
            "{} {}: {}: {} entries, {} zero, {}; {} of the refused would be patched wrongly",
            self.arch.name(),
            match self.kind {
                Kind::Linked => "linked image",
                Kind::Relocatable => "object",
            },
            self.list,
            self.entries,
            self.zero,
            if self.sorted { "sorted" } else { "not sorted" },
            self.fatal()
        )
    }

    /// The call-site table of the kept sites (the `--emit` format).
    pub fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "# rftrace-sites table v1");
        let _ = writeln!(out, "# arch {}", self.arch.name());
        let _ = writeln!(
            out,
            "# kind {}",
            match self.kind {
                Kind::Linked => "linked",
                Kind::Relocatable => "object",
            }
        );
        let _ = writeln!(out, "# sites {}", self.kept.len());
        let _ = writeln!(out, "# entry ip function+offset");
        for s in &self.kept {
            let _ = writeln!(out, "{} {} {}", s.entry_shown, s.ip_shown, s.sym);
        }
        out
    }
}

fn hex(bytes: &[u8]) -> String {
    let parts: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
    parts.join(":")
}

fn x86_insn(ip: u64, b: &[u8; x86::INSN_SIZE], fentry: Option<u64>) -> String {
    match x86::decode(ip, b) {
        x86::Decoded::Nop => "the 5-byte NOP".to_string(),
        x86::Decoded::Call(t) if Some(t) == fentry => "call __fentry__".to_string(),
        x86::Decoded::Call(t) => format!("call 0x{t:x}"),
        x86::Decoded::Jmp(t) => format!("jmp 0x{t:x}"),
        x86::Decoded::Other => "not a call".to_string(),
    }
}

fn arm64_insn(ip: u64, w: u32) -> String {
    match arm64::decode(ip, w) {
        arm64::Decoded::Nop => "nop".to_string(),
        arm64::Decoded::MovX9Lr => "mov x9, lr".to_string(),
        arm64::Decoded::Bl(t) => format!("bl 0x{t:x}"),
        arm64::Decoded::Other if arm64::is_bti(w) => "bti".to_string(),
        arm64::Decoded::Other => "other".to_string(),
    }
}

/// Checks `image`.
pub fn check(image: &Image<'_>, opts: &Options) -> Report {
    let mut kept = Vec::new();
    let mut problems = Vec::new();
    let mut seen = HashSet::new();
    let mut zero = 0;
    let mut sorted = true;
    let mut last: Option<(u64, Loc)> = None;
    for e in &image.list.entries {
        let Entry::At(entry) = *e else {
            zero += 1;
            continue;
        };
        // An object's sections all start at 0: its order is by section.
        let key = match image.kind {
            Kind::Linked => (image.addr(entry), entry),
            Kind::Relocatable => (0, entry),
        };
        if last.is_some_and(|l| l > key) {
            sorted = false;
        }
        last = Some(key);
        if !seen.insert(entry) {
            problems.push(Problem {
                severity: Severity::Refused,
                at: image.show(entry),
                sym: site_sym(image, entry, entry),
                what: "a second entry for this site (the kernel keeps the first)".to_string(),
            });
            continue;
        }
        let checked = match image.arch {
            Arch::X86_64 => check_x86(image, opts, entry),
            Arch::Arm64 => check_arm64(image, entry),
            Arch::Riscv64 => check_riscv(image, entry),
        };
        match checked {
            Ok(ip) => kept.push(Site {
                entry,
                ip,
                entry_addr: image.addr(entry),
                ip_addr: image.addr(ip),
                entry_shown: image.show(entry),
                ip_shown: image.show(ip),
                sym: image.symbolize(ip),
            }),
            Err((severity, at, what)) => problems.push(Problem {
                severity,
                at: image.show(at),
                sym: site_sym(image, entry, at),
                what,
            }),
        }
    }
    for f in unrecorded(image, opts, &seen) {
        let at = candidate(image, f).map_or(f.loc, |(_, ip)| ip);
        problems.push(Problem {
            severity: Severity::Unrecorded,
            at: image.show(at),
            sym: image.symbolize(at),
            what: format!(
                "the entry of {} carries the call-site pattern but is not in {}",
                f.name,
                image.arch.list_section()
            ),
        });
    }
    // By address; in an object by section, then offset.
    let linked = image.kind == Kind::Linked;
    kept.sort_by_key(|s| (if linked { s.entry_addr } else { 0 }, s.entry));
    problems.sort_by_key(|p| p.severity);
    Report {
        arch: image.arch,
        kind: image.kind,
        list: image.list.name.clone(),
        entries: image.list.entries.len(),
        zero,
        sorted,
        kept,
        problems,
    }
}

/// The symbol of a problem at `at` of the site recorded at `entry`: on
/// arm64 and riscv64 the literal is in front of the function, so a problem
/// there is named after the function that follows.
fn site_sym(image: &Image<'_>, entry: Loc, at: Loc) -> String {
    let before_func = matches!(image.arch, Arch::Arm64 | Arch::Riscv64) && at == entry;
    match entry
        .plus(8)
        .filter(|_| before_func)
        .and_then(|f| image.func_at(f))
    {
        Some(f) => format!("{}-0x8", f.name),
        None => image.symbolize(at),
    }
}

type Checked = Result<Loc, (Severity, Loc, String)>;

fn fatal(at: Loc, what: String) -> (Severity, Loc, String) {
    (Severity::Fatal, at, what)
}

/// x86: the entry is the site (`x86::call_site`), at `func+0` or after the
/// function's `ENDBR64`, holding `call __fentry__` (or the NOP).
fn check_x86(image: &Image<'_>, opts: &Options, entry: Loc) -> Checked {
    let addr = image.addr(entry);
    let ip = match image.kind {
        // An object's text starts at 0: the offset is not an address.
        Kind::Relocatable => entry,
        Kind::Linked => match x86::call_site(addr) {
            Some(a) if a == addr => entry,
            _ => return Err(fatal(entry, "no call site for this entry".to_string())),
        },
    };
    let Some(f) = image.func_at(ip) else {
        return Err(fatal(
            ip,
            "not inside any function symbol (expected at a function's entry)".to_string(),
        ));
    };
    let endbr = image.bytes(f.loc, 4) == Some(&ENDBR64[..]);
    let want = u64::from(endbr) * 4;
    let off = ip.off - f.loc.off;
    if off != want {
        return Err(fatal(
            ip,
            format!(
                "expected at {}+0x{want:x} ({}), found at {}+0x{off:x}",
                f.name,
                if endbr { "after ENDBR64" } else { "the entry" },
                f.name
            ),
        ));
    }
    let Some(found) = image.bytes(ip, x86::INSN_SIZE) else {
        return Err(fatal(
            ip,
            "the 5-byte site runs past its section".to_string(),
        ));
    };
    let mut actual = [0u8; x86::INSN_SIZE];
    actual.copy_from_slice(found);
    if opts.nop_mcount {
        return match x86::verify(&actual, &x86::NOP5) {
            Ok(()) => Ok(ip),
            Err(m) => Err(fatal(
                ip,
                format!(
                    "expected {} (the 5-byte NOP), found {} ({})",
                    hex(&m.expected),
                    hex(&m.actual),
                    x86_insn(image.addr(ip), &m.actual, image.fentry.addr)
                ),
            )),
        };
    }
    match image.kind {
        Kind::Linked => {
            let Some(fentry) = image.fentry.addr else {
                return Err(fatal(
                    ip,
                    "the image has no __fentry__ symbol to check the call against".to_string(),
                ));
            };
            let ipa = image.addr(ip);
            let expected = match x86::plan_init(ipa, fentry) {
                Ok(c) => c.old,
                Err(e) => {
                    return Err(fatal(
                        ip,
                        format!("call __fentry__ cannot be encoded here ({e:?})"),
                    ))
                }
            };
            x86::verify(&actual, &expected).map(|()| ip).map_err(|m| {
                fatal(
                    ip,
                    format!(
                        "expected {} (call __fentry__), found {} ({})",
                        hex(&m.expected),
                        hex(&m.actual),
                        x86_insn(ipa, &m.actual, Some(fentry))
                    ),
                )
            })
        }
        Kind::Relocatable => {
            let relocated = image.fentry.calls.contains(&ip);
            if actual[0] == x86::CALL_OPCODE && relocated {
                Ok(ip)
            } else {
                Err(fatal(
                    ip,
                    format!(
                        "expected e8 with its rel32 relocated to __fentry__, found {} ({})",
                        hex(&actual),
                        if relocated {
                            "relocated to __fentry__"
                        } else {
                            "no relocation to __fentry__"
                        }
                    ),
                ))
            }
        }
    }
}

/// Whether a literal at `entry` is 8-byte aligned where the kernel puts
/// it: the address, or in an object the offset in a section aligned to 8
/// or more.
fn literal_aligned(image: &Image<'_>, entry: Loc) -> Result<(), String> {
    let align = image.texts.get(&entry.sec).map_or(1, |t| t.align);
    match image.kind {
        Kind::Linked if !image.addr(entry).is_multiple_of(8) => Err(format!(
            "misaligned CALL_OPS literal at 0x{:x}: not 8-byte aligned (the kernel refuses the site)",
            image.addr(entry)
        )),
        // The module loader starts each text region on a page and places a
        // section at its own alignment: the offset decides (for a section
        // aligned to less than 8 only if it is placed on an 8-byte boundary,
        // as the first text section of a module is).
        Kind::Relocatable if !entry.off.is_multiple_of(8) => Err(format!(
            "misaligned CALL_OPS literal: offset 0x{:x} is not a multiple of 8 (section aligned to {align}; the kernel refuses the site)",
            entry.off
        )),
        _ => Ok(()),
    }
}

/// arm64 with `CALL_OPS`: the entry is the literal, 8-byte aligned; the
/// function symbol follows it; the literal, the `MOV X9, LR` slot and the
/// `BL` slot hold NOPs.
/// The function symbol a CALL_OPS site (arm64, riscv64) must have 8 bytes
/// after its list entry, at `at_func`; `ip` names the site in the report.
fn func_at_entry_plus_8(
    image: &Image<'_>,
    ip: Loc,
    at_func: Loc,
) -> Result<(), (Severity, Loc, String)> {
    match image.func_at(ip) {
        Some(f) if f.loc == at_func => Ok(()),
        other => Err(fatal(
            ip,
            format!(
                "expected a function symbol at the entry + 8 ({}), found {}",
                image.show(at_func),
                other.map_or("none".to_string(), |f| format!(
                    "{} at {}",
                    f.name,
                    image.show(f.loc)
                ))
            ),
        )),
    }
}

fn check_arm64(image: &Image<'_>, entry: Loc) -> Checked {
    if let Err(what) = literal_aligned(image, entry) {
        return Err((Severity::Refused, entry, what));
    }
    let at_func = entry
        .plus(8)
        .ok_or_else(|| fatal(entry, "wraps".to_string()))?;
    let Some(word) = image.word(at_func) else {
        return Err(fatal(entry, "the site runs past its section".to_string()));
    };
    // The pure core works on addresses; in an object the offset stands in
    // for it (the section is 8-byte aligned, checked above).
    let base = image.addr(entry);
    let site = match arm64::Site::from_patch_entry(base, Some(word)) {
        Ok(s) => s,
        Err(arm64::LayoutError::MisalignedLiteral { literal }) => {
            return Err((
                Severity::Refused,
                entry,
                format!(
                    "misaligned CALL_OPS literal at 0x{literal:x} (the kernel refuses the site)"
                ),
            ))
        }
        Err(arm64::LayoutError::UnexpectedEntry { insn, .. }) => {
            return Err(fatal(
                at_func,
                format!(
                    "expected {:08x} (nop) or a BTI at the function entry, found {insn:08x} ({})",
                    arm64::NOP,
                    arm64_insn(base.wrapping_add(8), insn)
                ),
            ))
        }
        Err(e) => return Err(fatal(entry, format!("no patch site here ({e:?})"))),
    };
    if image.kind == Kind::Linked && arm64::call_site(base, site.bti()) != Some(site.ip()) {
        return Err(fatal(
            entry,
            "the kernel computes another patch site".to_string(),
        ));
    }
    let rel = |addr: u64| entry.plus(addr.wrapping_sub(base));
    let ip = rel(site.ip()).ok_or_else(|| fatal(entry, "wraps".to_string()))?;
    func_at_entry_plus_8(image, ip, at_func)?;
    // The words the kernel checks before it writes, and the literal, which
    // the compiler fills with NOPs.
    let init = arm64::plan_init(site.ip(), site.bti())
        .map_err(|e| fatal(ip, format!("no first conversion here ({e:?})")))?;
    let mut expect: Vec<(u64, u32, &str)> = vec![
        (site.literal(), arm64::NOP, "literal"),
        (site.literal() + 4, arm64::NOP, "literal"),
    ];
    for (addr, old) in init.replaced().into_iter().flatten() {
        expect.push((addr, old, "MOV X9, LR slot"));
    }
    expect.push((site.ip(), arm64::NOP, "BL slot"));
    for (addr, want, slot) in expect {
        let loc = rel(addr).ok_or_else(|| fatal(entry, "wraps".to_string()))?;
        let Some(found) = image.word(loc) else {
            return Err(fatal(loc, "the site runs past its section".to_string()));
        };
        if let Err(m) = arm64::verify(found, want) {
            return Err(fatal(
                loc,
                format!(
                    "{slot}: expected {:08x} ({}), found {:08x} ({})",
                    m.expected,
                    arm64_insn(addr, m.expected),
                    m.actual,
                    arm64_insn(addr, m.actual)
                ),
            ));
        }
    }
    Ok(ip)
}

/// riscv64 with `CALL_OPS`: the entry is the literal, 8-byte aligned; the
/// function symbol 8 bytes on; 16 bytes of NOPs.
fn check_riscv(image: &Image<'_>, entry: Loc) -> Checked {
    if let Err(what) = literal_aligned(image, entry) {
        return Err((Severity::Refused, entry, what));
    }
    let (Some(at_func), Some(ip)) = (entry.plus(riscv::FUNC_OFFSET), entry.plus(riscv::IP_OFFSET))
    else {
        return Err(fatal(entry, "wraps".to_string()));
    };
    if image.kind == Kind::Linked && riscv::call_site(image.addr(entry)) != Some(image.addr(ip)) {
        return Err(fatal(
            entry,
            "the kernel computes another patch site".to_string(),
        ));
    }
    func_at_entry_plus_8(image, ip, at_func)?;
    let Some(found) = image.bytes(entry, riscv::SITE_SIZE) else {
        return Err(fatal(entry, "the site runs past its section".to_string()));
    };
    if !riscv::is_nop_site(found) {
        return Err(fatal(
            entry,
            format!(
                "expected 16 bytes of NOPs (c.nop 01:00 or nop 13:00:00:00) from the literal to the jalr slot, found {}",
                hex(found)
            ),
        ));
    }
    Ok(ip)
}

/// Where the site of function `f` would be if the compiler patched it:
/// `(entry, ip)`.
fn candidate(image: &Image<'_>, f: &Func) -> Option<(Loc, Loc)> {
    match image.arch {
        Arch::X86_64 => {
            let endbr = image.bytes(f.loc, 4) == Some(&ENDBR64[..]);
            let ip = f.loc.plus(u64::from(endbr) * 4)?;
            Some((ip, ip))
        }
        Arch::Arm64 => {
            let entry = f.loc.minus(8)?;
            let bti = image.word(f.loc).is_some_and(arm64::is_bti);
            Some((entry, entry.plus(if bti { 16 } else { 12 })?))
        }
        Arch::Riscv64 => {
            let entry = f.loc.minus(riscv::FUNC_OFFSET)?;
            Some((entry, entry.plus(riscv::IP_OFFSET)?))
        }
    }
}

/// Function entries that carry the arch's unconverted pattern but whose
/// entry is not recorded.
fn unrecorded<'i>(image: &'i Image<'_>, opts: &Options, seen: &HashSet<Loc>) -> Vec<&'i Func> {
    let mut out = Vec::new();
    for f in &image.funcs {
        let Some((entry, ip)) = candidate(image, f) else {
            continue;
        };
        if seen.contains(&entry) {
            continue;
        }
        let pattern = match image.arch {
            Arch::X86_64 => {
                let Some(b) = image.bytes(ip, x86::INSN_SIZE) else {
                    continue;
                };
                if opts.nop_mcount {
                    b == x86::NOP5
                } else {
                    match image.kind {
                        Kind::Linked => {
                            let ipa = image.addr(ip);
                            let mut a = [0u8; x86::INSN_SIZE];
                            a.copy_from_slice(b);
                            image
                                .fentry
                                .addr
                                .is_some_and(|t| x86::decode(ipa, &a) == x86::Decoded::Call(t))
                        }
                        Kind::Relocatable => {
                            b[0] == x86::CALL_OPCODE && image.fentry.calls.contains(&ip)
                        }
                    }
                }
            }
            Arch::Arm64 => {
                let mut words = Vec::new();
                let mut at = entry;
                let end = ip.off.saturating_add(4);
                while at.off < end {
                    words.push(image.word(at));
                    at = match at.plus(4) {
                        Some(a) => a,
                        None => break,
                    };
                }
                let bti = ip.off - entry.off == 16;
                words.iter().enumerate().all(|(i, w)| match w {
                    Some(w) if bti && i == 2 => arm64::is_bti(*w),
                    Some(w) => *w == arm64::NOP,
                    None => false,
                })
            }
            Arch::Riscv64 => image
                .bytes(entry, riscv::SITE_SIZE)
                .is_some_and(riscv::is_nop_site),
        };
        if pattern {
            out.push(f);
        }
    }
    out
}
