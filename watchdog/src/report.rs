//! Records for a verification report: when the variable [`VAR`] names a file, each check
//! appends one JSON object per line to it; otherwise nothing is written.
//!
//! Every test target of the parksema workspace writes its records through this module (it
//! lives here because each of them depends on this crate), so every build writes the same
//! format. `cargo xtask verify` reads them; the format is documented with its reader.
//!
//! ```no_run
//! // One check of 1 000 operations in 0.5 s against the correct primitive, and one against
//! // a flaw, caught after 10 ms.
//! watchdog::report::check("real", "example", 1000, "operations", "", 0.5);
//! watchdog::report::cell("real", "example", "OverIssue", Some("over-issue"), 0.01);
//! ```

use std::io::Write as _;

/// The variable that names the records file.
pub const VAR: &str = "PARKSEMA_REPORT";

/// Appends `line` and a newline to the records file, in one write (`O_APPEND`), so lines from
/// test threads and child processes never interleave.
fn append(line: serde_json::Value) {
    if let Some(path) = std::env::var_os(VAR) {
        append_to(std::path::Path::new(&path), &line);
    }
}

fn append_to(path: &std::path::Path, line: &serde_json::Value) {
    let mut text = line.to_string();
    text.push('\n');
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()));
    if let Err(e) = written {
        panic!("cannot append to the records file {path:?} ({VAR}): {e}");
    }
}

/// A check ran against the correct primitive: `count` `unit`s (loom executions, shuttle
/// schedules, acquisitions, cases) in `secs` seconds; `detail` says what else sets its size.
pub fn check(build: &str, check: &str, count: u64, unit: &str, detail: &str, secs: f64) {
    append(check_record(build, check, count, unit, detail, secs));
}

fn check_record(
    build: &str,
    check: &str,
    count: u64,
    unit: &str,
    detail: &str,
    secs: f64,
) -> serde_json::Value {
    serde_json::json!({
        "kind": "check",
        "build": build,
        "check": check,
        "count": count,
        "unit": unit,
        "detail": detail,
        "secs": secs,
    })
}

/// A check ran against the deliberate flaw `flaw`: `caught` is its failure in a few words,
/// `None` if it passed; `secs` is the time to the failure (or to the end).
pub fn cell(build: &str, check: &str, flaw: &str, caught: Option<&str>, secs: f64) {
    append(cell_record(build, check, flaw, caught, secs));
}

fn cell_record(
    build: &str,
    check: &str,
    flaw: &str,
    caught: Option<&str>,
    secs: f64,
) -> serde_json::Value {
    serde_json::json!({
        "kind": "cell",
        "build": build,
        "check": check,
        "flaw": flaw,
        "caught": caught,
        "secs": secs,
    })
}

/// A search (generated programs) ran `runs` executions, schedules or runs, `count` of which
/// reached the protocol situation `situation`; `required`: the check fails when none does.
pub fn coverage(build: &str, check: &str, situation: &str, count: u64, runs: u64, required: bool) {
    append(coverage_record(
        build, check, situation, count, runs, required,
    ));
}

fn coverage_record(
    build: &str,
    check: &str,
    situation: &str,
    count: u64,
    runs: u64,
    required: bool,
) -> serde_json::Value {
    serde_json::json!({
        "kind": "coverage",
        "build": build,
        "check": check,
        "situation": situation,
        "count": count,
        "runs": runs,
        "required": required,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The records go to the named file, one JSON object a line, in the order written.
    #[test]
    fn appends_one_json_object_a_line_to_the_named_file() {
        let path =
            std::env::temp_dir().join(format!("watchdog-report-{}.jsonl", std::process::id()));
        let _ = std::fs::remove_file(&path);
        for record in [
            check_record("loom", "visibility", 12, "executions", "bound 2", 0.25),
            cell_record(
                "loom",
                "visibility",
                "RelaxedOrdering",
                Some("causality"),
                0.01,
            ),
            cell_record("real", "mixed_traffic", "OverIssue", None, 1.5),
            coverage_record("shuttle", "generated", "queue of 2 (Fifo)", 7, 100, true),
        ] {
            append_to(&path, &record);
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0]["kind"], "check");
        assert_eq!(lines[0]["count"], 12);
        assert_eq!(lines[0]["detail"], "bound 2");
        assert_eq!(lines[1]["kind"], "cell");
        assert_eq!(lines[1]["caught"], "causality");
        assert_eq!(lines[2]["caught"], serde_json::Value::Null);
        assert_eq!(lines[2]["secs"], 1.5);
        assert_eq!(lines[3]["kind"], "coverage");
        assert_eq!(lines[3]["situation"], "queue of 2 (Fifo)");
        assert_eq!(
            (&lines[3]["count"], &lines[3]["runs"]),
            (&7.into(), &100.into())
        );
        assert_eq!(lines[3]["required"], true);
    }
}
