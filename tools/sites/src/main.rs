// SPDX-License-Identifier: GPL-2.0

//! `rftrace-sites [--emit FILE] [--nop-mcount] [--max-lines N] IMAGE`
//!
//! Prints `sites N, kept N, refused N, unrecorded N`, a line on the list,
//! then one line per problem. Exit status: 0 when no site would be patched
//! wrongly, 1 when one would, 2 when the image cannot be read (the error
//! names the section); `--emit` writes the table only on 0 or 1.

#![forbid(unsafe_code)]

use rftrace_sites::{analyze, Options, Severity};
use std::process::ExitCode;

const USAGE: &str = "usage: rftrace-sites [--emit FILE] [--nop-mcount] [--max-lines N] IMAGE

  Lists and checks the ftrace call sites of a linked vmlinux or a module.
  --emit FILE     write the table of kept sites (format: see the README)
  --nop-mcount    x86: the sites hold the 5-byte NOP (CC_USING_NOP_MCOUNT)
                  instead of call __fentry__
  --max-lines N   print at most N problem lines of each kind (default: all)
  Exit: 0 clean (refusals the kernel makes too are not errors), 1 a site
  the kernel would patch wrongly, 2 unreadable image or bad usage.";

struct Args {
    image: String,
    emit: Option<String>,
    opts: Options,
    max_lines: Option<usize>,
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut image = None;
    let mut emit = None;
    let mut opts = Options::default();
    let mut max_lines = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--emit" => emit = Some(args.next().ok_or("--emit needs a file")?),
            "--nop-mcount" => opts.nop_mcount = true,
            "--max-lines" => {
                let n = args.next().ok_or("--max-lines needs a number")?;
                max_lines = Some(n.parse().map_err(|_| format!("bad number {n}"))?);
            }
            "-h" | "--help" => return Err(String::new()),
            s if s.starts_with('-') => return Err(format!("unknown option {s}")),
            _ if image.is_some() => return Err("more than one image".to_string()),
            _ => image = Some(a),
        }
    }
    Ok(Args {
        image: image.ok_or("no image given")?,
        emit,
        opts,
        max_lines,
    })
}

fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("rftrace-sites: {e}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let data = match std::fs::read(&args.image) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("rftrace-sites: {}: {e}", args.image);
            return ExitCode::from(2);
        }
    };
    let report = match analyze(&data, &args.opts) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("rftrace-sites: {}: {e}", args.image);
            return ExitCode::from(2);
        }
    };
    println!("{}", report.summary());
    println!("{}", report.details());
    for sev in [Severity::Fatal, Severity::Refused, Severity::Unrecorded] {
        let all: Vec<_> = report
            .problems
            .iter()
            .filter(|p| p.severity == sev)
            .collect();
        let shown = args.max_lines.unwrap_or(all.len()).min(all.len());
        for p in &all[..shown] {
            println!("{p}");
        }
        if shown < all.len() {
            println!("{}: ... {} more", sev.label(), all.len() - shown);
        }
    }
    if let Some(path) = &args.emit {
        if let Err(e) = std::fs::write(path, report.table()) {
            eprintln!("rftrace-sites: {path}: {e}");
            return ExitCode::from(2);
        }
    }
    if report.fatal() > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
