//! Records for `cargo xtask verify`'s report: when `PARKSEMA_REPORT` names a file, each check
//! appends one JSON object per line to it (the format is `xtask/src/report.rs`'s `Record`,
//! documented in `docs/report.md`); otherwise nothing is written. Shared by every test
//! target (`#[path]`), so every build writes the same format.

#![allow(dead_code)]

use std::io::Write as _;

/// The variable that names the records file.
pub(crate) const VAR: &str = "PARKSEMA_REPORT";

/// Appends `line` and a newline to the records file, in one write (`O_APPEND`), so lines from
/// test threads and child processes never interleave.
fn append(line: serde_json::Value) {
    let Some(path) = std::env::var_os(VAR) else {
        return;
    };
    let mut text = line.to_string();
    text.push('\n');
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(text.as_bytes()));
    if let Err(e) = written {
        panic!("cannot append to the records file {path:?} ({VAR}): {e}");
    }
}

/// A check ran against the correct semaphore: `count` `unit`s (loom executions, shuttle
/// schedules, acquisitions, cases) in `secs` seconds; `detail` says what else sets its size.
pub(crate) fn check(build: &str, check: &str, count: u64, unit: &str, detail: &str, secs: f64) {
    append(serde_json::json!({
        "kind": "check",
        "build": build,
        "check": check,
        "count": count,
        "unit": unit,
        "detail": detail,
        "secs": secs,
    }));
}

/// A check ran against the flaw `flaw`: `caught` is its failure in a few words, `None` if it
/// passed; `secs` is the time to the failure (or to the end).
pub(crate) fn cell(build: &str, check: &str, flaw: &str, caught: Option<&str>, secs: f64) {
    append(serde_json::json!({
        "kind": "cell",
        "build": build,
        "check": check,
        "flaw": flaw,
        "caught": caught,
        "secs": secs,
    }));
}
