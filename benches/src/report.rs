//! Tables, CSV files and charts.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use plotters::prelude::*;
use serde::{Deserialize, Serialize};

/// One row of `contention.csv`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ContentionRow {
    /// Threads competing.
    pub threads: usize,
    /// Permits in the semaphore.
    pub permits: usize,
    /// Nominal work while holding, ns.
    pub hold_ns: u64,
    /// Nominal work between acquisitions, ns.
    pub between_ns: u64,
    /// Peer name.
    pub peer: String,
    /// Total operations per second.
    pub ops_per_sec: f64,
    /// Per-thread operations: minimum, median, maximum.
    pub thread_min: u64,
    /// Median per-thread operations.
    pub thread_median: u64,
    /// Maximum per-thread operations.
    pub thread_max: u64,
    /// Wait for a permit, p50, ns.
    pub wait_p50_ns: u64,
    /// Wait for a permit, p99, ns.
    pub wait_p99_ns: u64,
    /// Wait for a permit, p99.9, ns.
    pub wait_p999_ns: u64,
    /// Longest run of consecutive acquisitions by one thread.
    pub longest_streak: u64,
    /// CPU time per operation, all threads, ns.
    pub cpu_ns_per_op: f64,
    /// Voluntary context switches of the worker threads per operation.
    pub voluntary_switches_per_op: f64,
    /// Involuntary context switches (preemptions) of the worker threads per operation.
    pub involuntary_switches_per_op: f64,
    /// Futex system calls of the process per operation (empty where not counted).
    pub futex_per_op: Option<f64>,
    /// parksema's own counts per operation (with the `profile` feature; else empty).
    pub spins_per_op: Option<f64>,
    /// Parks per operation.
    pub parks_per_op: Option<f64>,
    /// Wake-ups that found no permit, per operation.
    pub wasted_wakeups_per_op: Option<f64>,
    /// Acquires handed their permit, per operation.
    pub handoffs_per_op: Option<f64>,
}

/// One row of `latency.csv`.
#[derive(Clone, Debug, Serialize)]
pub struct LatencyRow {
    /// Peer name.
    pub peer: String,
    /// Ping-pong: nanoseconds per one-way hand-off.
    pub ns_per_wake: f64,
    /// Wake from a sleep: median nanoseconds from the give to the taker's return.
    pub parked_p50_ns: f64,
    /// The same, 99th percentile.
    pub parked_p99_ns: f64,
}

/// One row of `sizes.csv`.
#[derive(Clone, Debug, Serialize)]
pub struct SizeRow {
    /// Peer name.
    pub peer: String,
    /// `size_of` in bytes.
    pub bytes: usize,
    /// What the number covers.
    pub note: String,
}

/// One row of `micro.csv`: a criterion median.
#[derive(Clone, Debug, Serialize)]
pub struct MicroRow {
    /// Criterion group.
    pub group: String,
    /// Peer (criterion function id).
    pub peer: String,
    /// Median time per iteration, ns.
    pub median_ns: f64,
}

#[derive(Deserialize)]
struct BenchmarkJson {
    group_id: String,
    function_id: Option<String>,
}

#[derive(Deserialize)]
struct Estimate {
    point_estimate: f64,
}

#[derive(Deserialize)]
struct EstimatesJson {
    median: Estimate,
}

/// Reads the medians of the micro-benchmarks from criterion's output directory
/// (`<dir>/<group>/<function>/new/{benchmark,estimates}.json`).
pub fn read_criterion(dir: &Path) -> Vec<MicroRow> {
    let mut rows = Vec::new();
    let Ok(groups) = fs::read_dir(dir) else {
        return rows;
    };
    for group in groups.flatten() {
        let Ok(functions) = fs::read_dir(group.path()) else {
            continue;
        };
        for function in functions.flatten() {
            let new = function.path().join("new");
            let (Ok(b), Ok(e)) = (
                fs::read_to_string(new.join("benchmark.json")),
                fs::read_to_string(new.join("estimates.json")),
            ) else {
                continue;
            };
            let (Ok(b), Ok(e)) = (
                serde_json::from_str::<BenchmarkJson>(&b),
                serde_json::from_str::<EstimatesJson>(&e),
            ) else {
                continue;
            };
            if let Some(peer) = b.function_id {
                rows.push(MicroRow {
                    group: b.group_id,
                    peer,
                    median_ns: e.median.point_estimate,
                });
            }
        }
    }
    rows.sort_by(|a, b| (&a.group, &a.peer).cmp(&(&b.group, &b.peer)));
    rows
}

/// Writes rows as CSV.
pub fn write_csv<T: Serialize>(path: &Path, rows: &[T]) -> std::io::Result<()> {
    let mut w = csv::Writer::from_path(path)?;
    for r in rows {
        w.serialize(r)?;
    }
    w.flush()
}

/// `a / b` as a ratio cell, or a dash when it is not defined.
fn ratio(a: f64, b: f64) -> String {
    if a > 0.0 && b > 0.0 {
        format!("{:.2}", a / b)
    } else {
        "–".to_string()
    }
}

fn ns(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0} ns")
    } else {
        format!("{x:.1} ns")
    }
}

/// The markdown table of the micro-benchmarks: each peer's median and parksema / peer.
pub fn micro_table(rows: &[MicroRow], peer_order: &[&str]) -> String {
    let mut out = String::new();
    let mut groups: BTreeMap<&str, Vec<&MicroRow>> = BTreeMap::new();
    for r in rows {
        groups.entry(&r.group).or_default().push(r);
    }
    for (group, rows) in groups {
        let Some(ours) = rows
            .iter()
            .find(|r| r.peer == "parksema")
            .map(|r| r.median_ns)
        else {
            continue;
        };
        let _ = writeln!(
            out,
            "\n**{group}** (criterion median per operation; ratio = parksema ÷ peer, below 1 means parksema is faster)\n"
        );
        let _ = writeln!(out, "| peer | median | parksema ÷ peer |\n|---|---:|---:|");
        let mut rows = rows.clone();
        rows.sort_by_key(|r| {
            peer_order
                .iter()
                .position(|p| *p == r.peer)
                .unwrap_or(usize::MAX)
        });
        for r in rows {
            let _ = writeln!(
                out,
                "| {} | {} | {} |",
                r.peer,
                ns(r.median_ns),
                ratio(ours, r.median_ns)
            );
        }
    }
    out
}

/// The markdown table of wake latency: the ping-pong and the wake from a sleep.
pub fn latency_table(rows: &[LatencyRow]) -> String {
    let mut out = String::from(
        "| peer | ping-pong, ns per hand-off | parksema ÷ peer | wake from sleep, p50 | parksema ÷ peer | p99 |\n|---|---:|---:|---:|---:|---:|\n",
    );
    let ours = rows.iter().find(|r| r.peer == "parksema");
    let (pp, p50) = ours.map_or((0.0, 0.0), |r| (r.ns_per_wake, r.parked_p50_ns));
    for r in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            r.peer,
            ns(r.ns_per_wake),
            ratio(pp, r.ns_per_wake),
            ns(r.parked_p50_ns),
            ratio(p50, r.parked_p50_ns),
            ns(r.parked_p99_ns)
        );
    }
    out
}

/// The markdown table of sizes.
pub fn size_table(rows: &[SizeRow]) -> String {
    let mut out = String::from("| peer | `size_of` | note |\n|---|---:|---|\n");
    for r in rows {
        let _ = writeln!(out, "| {} | {} B | {} |", r.peer, r.bytes, r.note);
    }
    out
}

type CellKey = (usize, usize, u64, u64);

fn by_cell(rows: &[ContentionRow]) -> BTreeMap<CellKey, Vec<&ContentionRow>> {
    let mut cells: BTreeMap<CellKey, Vec<&ContentionRow>> = BTreeMap::new();
    for r in rows {
        cells
            .entry((r.threads, r.permits, r.hold_ns, r.between_ns))
            .or_default()
            .push(r);
    }
    cells
}

/// Whether a cell only measures the scheduler: more permits than the machine has hardware
/// threads, so no thread ever waits for a permit, only for a core.
pub fn scheduler_only(permits: usize, cores: usize) -> bool {
    cores > 0 && permits > cores
}

/// The throughput table: `ours`' operations per second and `ours` / peer for every other
/// peer in every cell (above 1 means `ours` does more operations per second). Cells with more
/// permits than `cores` are marked as measuring only the scheduler, with a line saying so.
pub fn contention_table(
    rows: &[ContentionRow],
    ours: &str,
    peers: &[&str],
    cores: usize,
    keep: impl Fn(&ContentionRow) -> bool,
) -> String {
    let rows: Vec<ContentionRow> = rows.iter().filter(|r| keep(r)).cloned().collect();
    let rows = &rows[..];
    let others: Vec<&str> = peers.iter().copied().filter(|p| *p != ours).collect();
    let mut out = format!("| T | P | hold | between | {ours} ops/s |");
    for p in &others {
        let _ = write!(out, " ÷ {p} |");
    }
    out.push_str("\n|---:|---:|---:|---:|---:|");
    for _ in &others {
        out.push_str("---:|");
    }
    out.push('\n');
    let mut marked = false;
    for ((t, p, hold, between), cell) in by_cell(rows) {
        let p = if scheduler_only(p, cores) {
            marked = true;
            format!("{p} (scheduler only)")
        } else {
            p.to_string()
        };
        let get = |name: &str| {
            cell.iter()
                .find(|r| r.peer == name)
                .map_or(0.0, |r| r.ops_per_sec)
        };
        let ours = get(ours);
        let _ = write!(
            out,
            "| {t} | {p} | {hold} ns | {between} ns | {} |",
            si(ours)
        );
        for peer in &others {
            let theirs = get(peer);
            let _ = write!(
                out,
                " {} |",
                if theirs > 0.0 {
                    ratio(ours, theirs)
                } else {
                    "·".into()
                }
            );
        }
        out.push('\n');
    }
    if marked {
        let _ = write!(
            out,
            "\n`scheduler only`: more permits than this machine's {cores} hardware threads, so no \
             thread waits for a permit, only for a core; these cells measure the scheduler, and \
             no comparison of the peers counts them.\n"
        );
    }
    out
}

/// Every metric of every peer in one cell.
pub fn detail_table(
    rows: &[ContentionRow],
    threads: usize,
    permits: usize,
    hold_ns: u64,
    between_ns: u64,
) -> Option<String> {
    let cell: Vec<&ContentionRow> = rows
        .iter()
        .filter(|r| {
            (r.threads, r.permits, r.hold_ns, r.between_ns)
                == (threads, permits, hold_ns, between_ns)
        })
        .collect();
    let ours = cell.iter().find(|r| r.peer == "parksema")?.ops_per_sec;
    let mut out = format!(
        "T = {threads}, P = {permits}, hold {hold_ns} ns, between {between_ns} ns\n\n\
         | peer | ops/s | parksema ÷ peer | per-thread min / median / max | wait p50 / p99 / p99.9 | longest streak | CPU per op |\n\
         |---|---:|---:|---|---|---:|---:|\n"
    );
    for r in cell {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} / {} / {} | {} / {} / {} | {} | {} |",
            r.peer,
            si(r.ops_per_sec),
            ratio(ours, r.ops_per_sec),
            si(r.thread_min as f64),
            si(r.thread_median as f64),
            si(r.thread_max as f64),
            ns(r.wait_p50_ns as f64),
            ns(r.wait_p99_ns as f64),
            ns(r.wait_p999_ns as f64),
            r.longest_streak,
            ns(r.cpu_ns_per_op),
        );
    }
    Some(out)
}

fn si(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.2} M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.1} k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

const COLORS: [RGBColor; 8] = [
    RGBColor(214, 39, 40),
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(127, 127, 127),
    RGBColor(23, 190, 207),
];

/// Throughput against thread count, one line per peer, for the cells `select` keeps
/// (one point per thread count). Log-2 thread axis, operations per second on the other.
pub fn chart(
    path: &Path,
    title: &str,
    rows: &[ContentionRow],
    peers: &[&str],
    select: impl Fn(&ContentionRow) -> bool,
) -> Result<(), Box<dyn std::error::Error>> {
    let points: Vec<&ContentionRow> = rows.iter().filter(|r| select(r)).collect();
    if points.is_empty() {
        return Ok(());
    }
    let max_t = points.iter().map(|r| r.threads).max().unwrap_or(1).max(2) as f64;
    // Headroom above the highest point keeps the legend (upper right) off the lines.
    let max_y = points.iter().map(|r| r.ops_per_sec).fold(0.0, f64::max) / 1e6 * 1.6;
    let root = SVGBackend::new(path, (760, 440)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut c = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(56)
        .build_cartesian_2d((1f64..max_t).log_scale(), 0f64..max_y.max(1e-3))?;
    c.configure_mesh()
        .light_line_style(TRANSPARENT)
        .x_desc("threads")
        .y_desc("million operations / s")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .draw()?;
    for (i, peer) in peers.iter().enumerate() {
        let mut line: Vec<(f64, f64)> = points
            .iter()
            .filter(|r| r.peer == *peer)
            .map(|r| (r.threads as f64, r.ops_per_sec / 1e6))
            .collect();
        if line.is_empty() {
            continue;
        }
        line.sort_by(|a, b| a.0.total_cmp(&b.0));
        let color = COLORS[i % COLORS.len()];
        let width = if *peer == "parksema" { 3 } else { 1 };
        c.draw_series(LineSeries::new(line.clone(), color.stroke_width(width)))?
            .label(*peer)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(width))
            });
        c.draw_series(line.iter().map(|p| Circle::new(*p, 3, color.filled())))?;
    }
    c.configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

/// The per-operation costs of every peer in the cells `keep` selects: throughput, CPU,
/// context switches, futex calls and (parksema with `profile`) its own spins, parks, wake-ups
/// that found nothing, and handoffs.
pub fn counters_table(rows: &[ContentionRow], keep: impl Fn(&ContentionRow) -> bool) -> String {
    let opt = |v: Option<f64>| v.map_or("·".to_string(), |v| format!("{v:.3}"));
    let mut out = String::from(
        "| T | P | hold | between | peer | ops/s | CPU per op | voluntary switches | involuntary switches | futex calls | spins | parks | wake-ups for nothing | handoffs |\n\
         |---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in rows.iter().filter(|r| keep(r)) {
        let _ = writeln!(
            out,
            "| {} | {} | {} ns | {} ns | {} | {} | {} | {:.3} | {:.3} | {} | {} | {} | {} | {} |",
            r.threads,
            r.permits,
            r.hold_ns,
            r.between_ns,
            r.peer,
            si(r.ops_per_sec),
            ns(r.cpu_ns_per_op),
            r.voluntary_switches_per_op,
            r.involuntary_switches_per_op,
            opt(r.futex_per_op),
            opt(r.spins_per_op),
            opt(r.parks_per_op),
            opt(r.wasted_wakeups_per_op),
            opt(r.handoffs_per_op),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{ContentionRow, contention_table};

    fn row(peer: &str, threads: usize, permits: usize, ops_per_sec: f64) -> ContentionRow {
        ContentionRow {
            threads,
            permits,
            peer: peer.into(),
            ops_per_sec,
            ..ContentionRow::default()
        }
    }

    #[test]
    fn cells_with_more_permits_than_cores_are_marked_scheduler_only() {
        let rows = [
            row("parksema", 8, 2, 2e6),
            row("sem_t", 8, 2, 1e6),
            row("parksema", 8, 4, 2e6),
            row("sem_t", 8, 4, 1e6),
        ];
        let table = contention_table(&rows, "parksema", &["parksema", "sem_t"], 2, |_| true);
        assert!(table.contains("| 8 | 2 | "), "{table}");
        assert!(table.contains("| 8 | 4 (scheduler only) | "), "{table}");
        assert!(
            table.contains("this machine's 2 hardware threads"),
            "{table}"
        );
        let unmarked = contention_table(&rows, "parksema", &["parksema", "sem_t"], 4, |_| true);
        assert!(!unmarked.contains("scheduler only"), "{unmarked}");
    }
}
