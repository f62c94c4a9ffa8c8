// SPDX-License-Identifier: GPL-2.0

//! The golden files of the encoders (`<arch>_golden.txt`, written by
//! `scripts/gen-<arch>-golden.sh`): reading their numbers, and rerunning
//! their generator to see that the committed file is current.

use std::format;
use std::path::PathBuf;
use std::process::Command;
use std::string::String;

use super::util::note;

/// A hexadecimal field of a golden line.
pub fn parse_hex(s: &str) -> u64 {
    u64::from_str_radix(s, 16).unwrap_or_else(|_| panic!("bad hex {s:?}"))
}

/// Reruns `scripts/gen-<arch>-golden.sh` and returns what it wrote, or
/// `None`, with a note, when it cannot run here: one of `tools` (`what`)
/// is not on PATH, or the script exits 77.
pub fn regenerate(arch: &str, tools: &[&str], what: &str) -> Option<String> {
    let have = |tool: &str| {
        Command::new(tool)
            .arg("--version")
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    let file = format!("{arch}_golden.txt");
    if !tools.iter().all(|t| have(t)) {
        note(&format!(
            "{arch}: skipped regenerating {file}: {what} not on PATH"
        ));
        return None;
    }
    let top = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("rftrace-{arch}-golden-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(&file);
    let run = Command::new("bash")
        .arg(top.join(format!("scripts/gen-{arch}-golden.sh")))
        .arg(&out)
        .output()
        .expect("running the generator");
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    if run.status.code() == Some(77) {
        note(&format!(
            "{arch}: skipped regenerating {file}: {}",
            stderr.trim()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        return None;
    }
    assert!(run.status.success(), "generator failed: {stderr}");
    let fresh = std::fs::read_to_string(&out).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    Some(fresh)
}

/// Checks that the regenerated file (`fresh`, made with `tools`) is the
/// committed one (`golden`).
pub fn assert_current(arch: &str, fresh: &str, golden: &str, tools: &str) {
    assert!(
        fresh == golden,
        "rust/tests/{arch}_golden.txt is stale: rerun scripts/gen-{arch}-golden.sh"
    );
    note(&format!(
        "{arch}: regenerated {arch}_golden.txt with {tools}: {} lines, identical",
        fresh.lines().count()
    ));
}
