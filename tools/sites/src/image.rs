// SPDX-License-Identifier: GPL-2.0

//! Reading a linked kernel image or a module object: its text sections, its
//! function symbols and its call-site list.
//!
//! Every failure to read what the checks need is an [`InputError`] that
//! names the section (or the ELF header, or the section header table) it
//! came from; nothing is guessed, so a damaged image never turns into a
//! table.

use object::elf;
use object::read::elf::{FileHeader, Rela, SectionHeader, SectionTable, Sym, SymbolTable};
use object::{Endianness, SymbolIndex};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

/// The image cannot be read as a kernel image or module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    /// The part of the file the problem is in: a section name, `ELF header`
    /// or `section header table`.
    pub section: String,
    /// What is wrong with it.
    pub msg: String,
}

impl InputError {
    fn new(section: impl Into<String>, msg: impl Into<String>) -> Self {
        InputError {
            section: section.into(),
            msg: msg.into(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.section.as_str() {
            "ELF header" | SHT => write!(f, "{}: {}", self.section, self.msg),
            name => write!(f, "section {name}: {}", self.msg),
        }
    }
}

impl std::error::Error for InputError {}

/// The architecture, from the ELF header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    /// x86_64: `__mcount_loc`, one entry per `call __fentry__`.
    X86_64,
    /// arm64 with `CALL_OPS`: `__patchable_function_entries`
    /// (`-fpatchable-function-entry=4,2`).
    Arm64,
    /// riscv64 with `CALL_OPS`: `__patchable_function_entries`
    /// (`-fpatchable-function-entry=8,4` with the C extension).
    Riscv64,
}

impl Arch {
    /// The name of the section the compiler records the call sites in.
    pub const fn list_section(self) -> &'static str {
        match self {
            Arch::X86_64 => "__mcount_loc",
            Arch::Arm64 | Arch::Riscv64 => "__patchable_function_entries",
        }
    }

    /// The arch's 64-bit absolute relocation (the type of a list entry in
    /// an object file).
    const fn abs64(self) -> u32 {
        match self {
            Arch::X86_64 => elf::R_X86_64_64,
            Arch::Arm64 => elf::R_AARCH64_ABS64,
            Arch::Riscv64 => elf::R_RISCV_64,
        }
    }

    /// The arch's relative dynamic relocation (a relocatable kernel's list
    /// entries).
    const fn relative(self) -> u32 {
        match self {
            Arch::X86_64 => elf::R_X86_64_RELATIVE,
            Arch::Arm64 => elf::R_AARCH64_RELATIVE,
            Arch::Riscv64 => elf::R_RISCV_RELATIVE,
        }
    }

    /// Short name, as printed.
    pub const fn name(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::Arm64 => "arm64",
            Arch::Riscv64 => "riscv64",
        }
    }
}

/// Linked image (`vmlinux`, `ET_EXEC` or `ET_DYN`) or object (`.ko`,
/// `ET_REL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Addresses are final.
    Linked,
    /// Every text section starts at 0; places are section and offset.
    Relocatable,
}

/// A place in a text section: the ELF section index and the offset in it.
/// In a linked image the address is the section's address plus `off`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Loc {
    /// ELF section index.
    pub sec: usize,
    /// Offset in the section.
    pub off: u64,
}

impl Loc {
    /// The place `n` bytes further on (`None` on overflow).
    pub fn plus(self, n: u64) -> Option<Loc> {
        Some(Loc {
            sec: self.sec,
            off: self.off.checked_add(n)?,
        })
    }

    /// The place `n` bytes before (`None` before the section start).
    pub fn minus(self, n: u64) -> Option<Loc> {
        Some(Loc {
            sec: self.sec,
            off: self.off.checked_sub(n)?,
        })
    }
}

/// An executable section.
#[derive(Clone, Debug)]
pub struct Text<'a> {
    /// Its name.
    pub name: String,
    /// Its address (0 in an object file).
    pub addr: u64,
    /// Its contents.
    pub data: &'a [u8],
    /// Its alignment (`sh_addralign`, at least 1).
    pub align: u64,
}

/// A function symbol in a text section.
#[derive(Clone, Debug)]
pub struct Func {
    /// Where it starts.
    pub loc: Loc,
    /// Its size (0 for an assembler symbol without `.size`).
    pub size: u64,
    /// Its name.
    pub name: String,
}

/// One entry of the call-site list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// A zero entry: padding, or in `vmlinux` a dropped weak function's
    /// entry that the build's sort cleared.
    Zero,
    /// The place the entry refers to.
    At(Loc),
}

/// The call-site list.
#[derive(Clone, Debug)]
pub struct List {
    /// Where it was found, for messages (`__mcount_loc`, or the symbols
    /// that bound it in `vmlinux`).
    pub name: String,
    /// Its entries, in the order they appear.
    pub entries: Vec<Entry>,
}

/// What the checks know about the x86 `__fentry__` calls.
#[derive(Clone, Debug, Default)]
pub struct Fentry {
    /// The address of `__fentry__` (linked image).
    pub addr: Option<u64>,
    /// Places of a `CALL` whose rel32 is relocated against `__fentry__`
    /// (object file): the opcode's place.
    pub calls: HashSet<Loc>,
}

/// A kernel image or module, as the checks need it.
#[derive(Debug)]
pub struct Image<'a> {
    /// Architecture.
    pub arch: Arch,
    /// Linked or relocatable.
    pub kind: Kind,
    /// The executable sections, by ELF section index.
    pub texts: BTreeMap<usize, Text<'a>>,
    /// Function symbols in text, sorted by place, one per place.
    pub funcs: Vec<Func>,
    /// The call-site list.
    pub list: List,
    /// x86 only: the calls to `__fentry__`.
    pub fentry: Fentry,
}

type Header = elf::FileHeader64<Endianness>;
type Sections<'a> = SectionTable<'a, Header, &'a [u8]>;
type Symbols<'a> = SymbolTable<'a, Header, &'a [u8]>;

const SHT: &str = "section header table";

/// Reads `data` as a 64-bit little-endian ELF file of a supported
/// architecture.
pub fn read(data: &[u8]) -> Result<Image<'_>, InputError> {
    let header = Header::parse(data).map_err(|e| InputError::new("ELF header", format!("{e}")))?;
    let endian = header
        .endian()
        .map_err(|e| InputError::new("ELF header", format!("{e}")))?;
    if endian != Endianness::Little {
        return Err(InputError::new("ELF header", "big-endian file"));
    }
    let arch = match header.e_machine(endian) {
        elf::EM_X86_64 => Arch::X86_64,
        elf::EM_AARCH64 => Arch::Arm64,
        elf::EM_RISCV => Arch::Riscv64,
        m => {
            return Err(InputError::new(
                "ELF header",
                format!("machine {m} is not x86_64, arm64 or riscv64"),
            ))
        }
    };
    let kind = match header.e_type(endian) {
        elf::ET_EXEC | elf::ET_DYN => Kind::Linked,
        elf::ET_REL => Kind::Relocatable,
        t => {
            return Err(InputError::new(
                "ELF header",
                format!("file type {t} is neither a linked image nor an object"),
            ))
        }
    };
    let sections = header
        .sections(endian, data)
        .map_err(|e| InputError::new(SHT, format!("{e}")))?;
    let names = section_names(&sections, endian)?;
    let texts = texts(&sections, &names, endian, data)?;
    let symtab = sections
        .symbols(endian, data, elf::SHT_SYMTAB)
        .map_err(|e| InputError::new(".symtab", format!("{e}")))?;
    if symtab.is_empty() {
        return Err(InputError::new(
            ".symtab",
            "missing: the image has no symbol table (stripped?)",
        ));
    }
    let funcs = funcs(&symtab, &texts, kind, endian)?;
    let cx = Cx {
        arch,
        kind,
        endian,
        data,
        sections: &sections,
        names: &names,
        symtab: &symtab,
        texts: &texts,
    };
    let list = match kind {
        Kind::Linked => cx.linked_list()?,
        Kind::Relocatable => cx.object_list()?,
    };
    let fentry = if arch == Arch::X86_64 {
        cx.fentry()?
    } else {
        Fentry::default()
    };
    Ok(Image {
        arch,
        kind,
        texts,
        funcs,
        list,
        fentry,
    })
}

fn section_names(sections: &Sections<'_>, endian: Endianness) -> Result<Vec<String>, InputError> {
    sections
        .iter()
        .enumerate()
        .map(|(i, sh)| {
            sections
                .section_name(endian, sh)
                .map(|n| String::from_utf8_lossy(n).into_owned())
                .map_err(|e| InputError::new(SHT, format!("name of section {i}: {e}")))
        })
        .collect()
}

fn texts<'a>(
    sections: &Sections<'a>,
    names: &[String],
    endian: Endianness,
    data: &'a [u8],
) -> Result<BTreeMap<usize, Text<'a>>, InputError> {
    let mut texts = BTreeMap::new();
    for (i, sh) in sections.iter().enumerate() {
        let flags = sh.sh_flags(endian);
        if sh.sh_type(endian) != elf::SHT_PROGBITS || flags & u64::from(elf::SHF_EXECINSTR) == 0 {
            continue;
        }
        let name = names.get(i).cloned().unwrap_or_default();
        let bytes = sh
            .data(endian, data)
            .map_err(|e| InputError::new(&name, format!("contents: {e}")))?;
        let addr = sh.sh_addr(endian);
        if addr.checked_add(sh.sh_size(endian)).is_none() {
            return Err(InputError::new(&name, "address range wraps"));
        }
        texts.insert(
            i,
            Text {
                name,
                addr,
                data: bytes,
                align: sh.sh_addralign(endian).max(1),
            },
        );
    }
    Ok(texts)
}

fn funcs(
    symtab: &Symbols<'_>,
    texts: &BTreeMap<usize, Text<'_>>,
    kind: Kind,
    endian: Endianness,
) -> Result<Vec<Func>, InputError> {
    let mut funcs = Vec::new();
    for (i, sym) in symtab.enumerate() {
        if sym.st_type() != elf::STT_FUNC {
            continue;
        }
        let Some(sec) = symtab
            .symbol_section(endian, sym, i)
            .map_err(|e| InputError::new(".symtab", format!("symbol {}: {e}", i.0)))?
        else {
            continue;
        };
        let Some(text) = texts.get(&sec.0) else {
            continue;
        };
        let value = sym.st_value(endian);
        let off = match kind {
            Kind::Linked => match value.checked_sub(text.addr) {
                Some(off) => off,
                None => continue,
            },
            Kind::Relocatable => value,
        };
        if off >= text.data.len() as u64 {
            continue;
        }
        let name = symtab
            .symbol_name(endian, sym)
            .map_err(|e| InputError::new(".strtab", format!("name of symbol {}: {e}", i.0)))?;
        let name = String::from_utf8_lossy(name).into_owned();
        // x86's padding in front of functions has symbols of its own.
        if name.starts_with("__pfx_") || name.starts_with("__cfi_") {
            continue;
        }
        funcs.push(Func {
            loc: Loc { sec: sec.0, off },
            size: sym.st_size(endian),
            name,
        });
    }
    // One symbol per place: the largest, then the first name.
    funcs.sort_by(|a, b| {
        a.loc
            .cmp(&b.loc)
            .then(b.size.cmp(&a.size))
            .then(a.name.cmp(&b.name))
    });
    funcs.dedup_by(|later, first| later.loc == first.loc);
    Ok(funcs)
}

/// What the list readers share.
struct Cx<'a, 'b> {
    arch: Arch,
    kind: Kind,
    endian: Endianness,
    data: &'a [u8],
    sections: &'b Sections<'a>,
    names: &'b [String],
    symtab: &'b Symbols<'a>,
    texts: &'b BTreeMap<usize, Text<'a>>,
}

impl Cx<'_, '_> {
    fn name(&self, i: usize) -> String {
        self.names
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("#{i}"))
    }

    fn symbol_value(&self, name: &str) -> Option<u64> {
        self.symtab.iter().find_map(|sym| {
            let n = self.symtab.symbol_name(self.endian, sym).ok()?;
            (n == name.as_bytes() && sym.st_shndx(self.endian) != elf::SHN_UNDEF)
                .then(|| sym.st_value(self.endian))
        })
    }

    /// The text place of a linked address.
    fn text_loc(&self, addr: u64) -> Option<Loc> {
        self.texts.iter().find_map(|(&sec, t)| {
            let off = addr.checked_sub(t.addr)?;
            (off < t.data.len() as u64).then_some(Loc { sec, off })
        })
    }

    /// The list of a linked image: between `__start_mcount_loc` and
    /// `__stop_mcount_loc` (the kernel's linker script), else the arch's
    /// list section itself.
    fn linked_list(&self) -> Result<List, InputError> {
        let endian = self.endian;
        let (name, start, bytes) = match (
            self.symbol_value("__start_mcount_loc"),
            self.symbol_value("__stop_mcount_loc"),
        ) {
            (Some(start), Some(stop)) => {
                let (i, sh) = self
                    .sections
                    .enumerate()
                    .find(|(_, sh)| {
                        let a = sh.sh_addr(endian);
                        sh.sh_type(endian) == elf::SHT_PROGBITS
                            && sh.sh_flags(endian) & u64::from(elf::SHF_ALLOC) != 0
                            && start >= a
                            && start - a < sh.sh_size(endian)
                    })
                    .ok_or_else(|| {
                        InputError::new(
                            "__mcount_loc",
                            format!(
                                "__start_mcount_loc (0x{start:x}) is in no section with contents"
                            ),
                        )
                    })?;
                let name = format!(
                    "__mcount_loc (__start_mcount_loc..__stop_mcount_loc in {})",
                    self.name(i.0)
                );
                let len = stop.checked_sub(start).ok_or_else(|| {
                    InputError::new(&name, "__stop_mcount_loc is before __start_mcount_loc")
                })?;
                let contents = sh
                    .data(endian, self.data)
                    .map_err(|e| InputError::new(&name, format!("contents: {e}")))?;
                let from = start - sh.sh_addr(endian);
                let bytes = usize::try_from(from)
                    .ok()
                    .zip(usize::try_from(len).ok())
                    .and_then(|(from, len)| contents.get(from..from.checked_add(len)?))
                    .ok_or_else(|| {
                        InputError::new(&name, format!("runs past the end of {}", self.name(i.0)))
                    })?;
                (name, start, bytes)
            }
            _ => {
                let want = self.arch.list_section();
                let (_, sh) = self
                    .sections
                    .enumerate()
                    .find(|(i, _)| self.names.get(i.0).is_some_and(|n| n == want))
                    .ok_or_else(|| {
                        InputError::new(
                            want,
                            "missing (and no __start_mcount_loc/__stop_mcount_loc symbols)",
                        )
                    })?;
                let bytes = sh
                    .data(endian, self.data)
                    .map_err(|e| InputError::new(want, format!("contents: {e}")))?;
                if bytes.len() as u64 != sh.sh_size(endian) {
                    return Err(InputError::new(want, "no contents in the file"));
                }
                (want.to_string(), sh.sh_addr(endian), bytes)
            }
        };
        if !bytes.len().is_multiple_of(8) {
            return Err(InputError::new(
                &name,
                format!("size 0x{:x} is not a multiple of 8", bytes.len()),
            ));
        }
        let relative = self.dynamic_relative(&name, start, bytes.len() as u64)?;
        let mut entries = Vec::with_capacity(bytes.len() / 8);
        for (n, chunk) in bytes.chunks_exact(8).enumerate() {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            let at = start.saturating_add(n as u64 * 8);
            let value = match relative.get(&at) {
                Some(&v) => v,
                None => u64::from_le_bytes(word),
            };
            if value == 0 {
                entries.push(Entry::Zero);
                continue;
            }
            let loc = self.text_loc(value).ok_or_else(|| {
                InputError::new(
                    &name,
                    format!("entry {n} (0x{value:x}) is outside any text section"),
                )
            })?;
            entries.push(Entry::At(loc));
        }
        Ok(List { name, entries })
    }

    /// Dynamic relocations of a relocatable kernel that fill list entries:
    /// only the arch's relative type may do that.
    fn dynamic_relative(
        &self,
        list: &str,
        start: u64,
        len: u64,
    ) -> Result<HashMap<u64, u64>, InputError> {
        let endian = self.endian;
        let mut out = HashMap::new();
        for (i, sh) in self.sections.enumerate() {
            if sh.sh_type(endian) != elf::SHT_RELA
                || sh.sh_flags(endian) & u64::from(elf::SHF_ALLOC) == 0
            {
                continue;
            }
            // An empty relocation section relocates nothing, wherever its
            // offset points (riscv's linked image has an empty .rela.dyn).
            if sh.sh_size(endian) == 0 {
                continue;
            }
            let name = self.name(i.0);
            let Some((relas, _)) = sh
                .rela(endian, self.data)
                .map_err(|e| InputError::new(&name, format!("{e}")))?
            else {
                continue;
            };
            for r in relas {
                let at = r.r_offset(endian);
                if at < start || at - start >= len {
                    continue;
                }
                if r.r_type(endian, false) != self.arch.relative()
                    || !(at - start).is_multiple_of(8)
                {
                    return Err(InputError::new(
                        list,
                        format!(
                            "{name} relocates 0x{at:x} with type {}, not the arch's relative type",
                            r.r_type(endian, false)
                        ),
                    ));
                }
                out.insert(at, r.r_addend(endian) as u64);
            }
        }
        Ok(out)
    }

    /// The relocations that apply to section `target`, by offset.
    fn relocs_of(&self, target: usize) -> Result<Vec<(String, Reloc)>, InputError> {
        let endian = self.endian;
        let mut out = Vec::new();
        for (i, sh) in self.sections.enumerate() {
            let ty = sh.sh_type(endian);
            if (ty != elf::SHT_RELA && ty != elf::SHT_REL)
                || sh.sh_info(endian) as usize != target
                || sh.sh_size(endian) == 0
            {
                continue;
            }
            let name = self.name(i.0);
            if ty == elf::SHT_REL {
                let Some((rels, _)) = sh
                    .rel(endian, self.data)
                    .map_err(|e| InputError::new(&name, format!("{e}")))?
                else {
                    continue;
                };
                for r in rels {
                    out.push((
                        name.clone(),
                        Reloc {
                            offset: object::read::elf::Rel::r_offset(r, endian),
                            ty: object::read::elf::Rel::r_type(r, endian),
                            sym: object::read::elf::Rel::r_sym(r, endian),
                            addend: None,
                        },
                    ));
                }
            } else {
                let Some((relas, _)) = sh
                    .rela(endian, self.data)
                    .map_err(|e| InputError::new(&name, format!("{e}")))?
                else {
                    continue;
                };
                for r in relas {
                    out.push((
                        name.clone(),
                        Reloc {
                            offset: r.r_offset(endian),
                            ty: r.r_type(endian, false),
                            sym: r.r_sym(endian, false),
                            addend: Some(r.r_addend(endian)),
                        },
                    ));
                }
            }
        }
        Ok(out)
    }

    /// The list of an object file: every section named after the arch's
    /// list, each entry resolved through its relocation.
    fn object_list(&self) -> Result<List, InputError> {
        let endian = self.endian;
        let want = self.arch.list_section();
        let mut entries = Vec::new();
        let mut found = false;
        for (i, sh) in self.sections.enumerate() {
            if self.names.get(i.0).is_none_or(|n| n != want) {
                continue;
            }
            found = true;
            let bytes = sh
                .data(endian, self.data)
                .map_err(|e| InputError::new(want, format!("contents: {e}")))?;
            if bytes.len() as u64 != sh.sh_size(endian) || !bytes.len().is_multiple_of(8) {
                return Err(InputError::new(
                    want,
                    format!(
                        "size 0x{:x} is not a multiple of 8 (or not in the file)",
                        sh.sh_size(endian)
                    ),
                ));
            }
            let mut by_offset: HashMap<u64, (String, Reloc)> = HashMap::new();
            for (rname, r) in self.relocs_of(i.0)? {
                if !r.offset.is_multiple_of(8) || r.offset >= bytes.len() as u64 {
                    return Err(InputError::new(
                        &rname,
                        format!(
                            "relocation at 0x{:x} is not on an entry of {want}",
                            r.offset
                        ),
                    ));
                }
                if by_offset.insert(r.offset, (rname.clone(), r)).is_some() {
                    return Err(InputError::new(
                        &rname,
                        format!("two relocations for the {want} entry at 0x{:x}", r.offset),
                    ));
                }
            }
            for (n, chunk) in bytes.chunks_exact(8).enumerate() {
                let at = n as u64 * 8;
                let Some((rname, r)) = by_offset.get(&at) else {
                    return Err(InputError::new(
                        want,
                        format!("entry {n} (offset 0x{at:x}) has no relocation"),
                    ));
                };
                let mut word = [0u8; 8];
                word.copy_from_slice(chunk);
                entries.push(Entry::At(self.resolve(rname, r, word)?));
            }
        }
        if !found {
            return Err(InputError::new(want, "missing"));
        }
        Ok(List {
            name: want.to_string(),
            entries,
        })
    }

    /// The text place an absolute relocation of a list entry refers to.
    fn resolve(&self, rname: &str, r: &Reloc, inplace: [u8; 8]) -> Result<Loc, InputError> {
        let endian = self.endian;
        let err = |msg: String| InputError::new(rname, format!("entry at 0x{:x}: {msg}", r.offset));
        if r.ty != self.arch.abs64() {
            return Err(err(format!(
                "relocation type {} is not a 64-bit address",
                r.ty
            )));
        }
        let idx = SymbolIndex(r.sym as usize);
        let sym = self
            .symtab
            .symbol(idx)
            .map_err(|e| err(format!("symbol {}: {e}", r.sym)))?;
        let sec = self
            .symtab
            .symbol_section(endian, sym, idx)
            .map_err(|e| err(format!("symbol {}: {e}", r.sym)))?
            .ok_or_else(|| err(format!("symbol {} is undefined", r.sym)))?;
        let text = self.texts.get(&sec.0).ok_or_else(|| {
            err(format!(
                "refers to {}, which is not a text section",
                self.name(sec.0)
            ))
        })?;
        let addend = match r.addend {
            Some(a) => a,
            None => i64::from_le_bytes(inplace),
        };
        let off = sym
            .st_value(endian)
            .checked_add_signed(addend)
            .filter(|&off| off < text.data.len() as u64)
            .ok_or_else(|| err(format!("points outside {}", text.name)))?;
        Ok(Loc { sec: sec.0, off })
    }

    /// x86: where `__fentry__` is, or which calls are relocated to it.
    fn fentry(&self) -> Result<Fentry, InputError> {
        let endian = self.endian;
        let mut out = Fentry::default();
        match self.kind {
            Kind::Linked => out.addr = self.symbol_value("__fentry__"),
            Kind::Relocatable => {
                let fentry: HashSet<u32> = self
                    .symtab
                    .enumerate()
                    .filter(|(_, s)| {
                        self.symtab
                            .symbol_name(endian, s)
                            .is_ok_and(|n| n == b"__fentry__")
                    })
                    .filter_map(|(i, _)| u32::try_from(i.0).ok())
                    .collect();
                for &sec in self.texts.keys() {
                    for (_, r) in self.relocs_of(sec)? {
                        let call = matches!(r.ty, elf::R_X86_64_PLT32 | elf::R_X86_64_PC32);
                        if call && fentry.contains(&r.sym) && r.addend == Some(-4) {
                            if let Some(off) = r.offset.checked_sub(1) {
                                out.calls.insert(Loc { sec, off });
                            }
                        }
                    }
                }
            }
        }
        Ok(out)
    }
}

/// One relocation.
#[derive(Clone, Copy, Debug)]
struct Reloc {
    offset: u64,
    ty: u32,
    sym: u32,
    addend: Option<i64>,
}

impl Image<'_> {
    /// `n` bytes at `loc`, if they are all in its section.
    pub fn bytes(&self, loc: Loc, n: usize) -> Option<&[u8]> {
        let data = self.texts.get(&loc.sec)?.data;
        let from = usize::try_from(loc.off).ok()?;
        data.get(from..from.checked_add(n)?)
    }

    /// The little-endian 32-bit word at `loc`.
    pub fn word(&self, loc: Loc) -> Option<u32> {
        let b = self.bytes(loc, 4)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// The address of `loc` (in an object file, its offset).
    pub fn addr(&self, loc: Loc) -> u64 {
        let base = match self.kind {
            Kind::Linked => self.texts.get(&loc.sec).map_or(0, |t| t.addr),
            Kind::Relocatable => 0,
        };
        base.wrapping_add(loc.off)
    }

    /// `loc` as printed: the address, or `section+0xoff` in an object.
    pub fn show(&self, loc: Loc) -> String {
        match self.kind {
            Kind::Linked => format!("0x{:x}", self.addr(loc)),
            Kind::Relocatable => {
                let name = self.texts.get(&loc.sec).map_or("?", |t| t.name.as_str());
                format!("{name}+0x{:x}", loc.off)
            }
        }
    }

    /// The function symbol `loc` is in: the last one at or before it in
    /// its section, if its size covers `loc` (a symbol without a size
    /// covers everything up to the next one).
    pub fn func_at(&self, loc: Loc) -> Option<&Func> {
        let i = self.funcs.partition_point(|f| f.loc <= loc);
        let f = self.funcs.get(i.checked_sub(1)?)?;
        let inside = f.loc.sec == loc.sec && (f.size == 0 || loc.off - f.loc.off < f.size);
        inside.then_some(f)
    }

    /// `loc` as `function+0xoff`, or `?` outside every function.
    pub fn symbolize(&self, loc: Loc) -> String {
        match self.func_at(loc) {
            Some(f) => format!("{}+0x{:x}", f.name, loc.off - f.loc.off),
            None => "?".to_string(),
        }
    }

    /// The place of a linked address in text.
    pub fn loc_of(&self, addr: u64) -> Option<Loc> {
        self.texts.iter().find_map(|(&sec, t)| {
            let off = addr.checked_sub(t.addr)?;
            (off < t.data.len() as u64).then_some(Loc { sec, off })
        })
    }
}
