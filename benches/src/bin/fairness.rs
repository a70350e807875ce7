//! The fairness experiment, for every fairness mode of parksema and the mutexes that promise
//! the same (parking_lot 0.12 and 0.13, std): two threads, each "acquire, hold h (busy),
//! release, re-acquire at once", one permit, h in {10 µs, 100 µs, 1 ms}, repeated `--runs`
//! times (the peers interleaved within each round, so a slow spell of the machine hits them
//! alike). The statistic is each run's longest streak, summarized as the median over the runs
//! with the range. Prints a markdown table and writes it with a CSV file (every run) and an
//! SVG chart (median longest streak against h) to `--out`.
//!
//! `cargo run --release -p parksema-bench --bin fairness -- --out benches/results`

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Parser;
use parksema_bench::contention::Work;
use parksema_bench::fairness::{self, Row, Summary};
use parksema_bench::peers::{
    Parksema, ParksemaBarging, ParksemaFifo, ParksemaReleaseFair, Peer, PlFairMutex,
    PlFairMutex012, PlMutex, PlMutex012, PlUnlockFair, PlUnlockFair012, StdMutex,
};
use plotters::prelude::*;

#[derive(Parser, Debug)]
#[command(about = "The fairness experiment: who re-acquires a lock it just released")]
struct Args {
    /// A smoke run: 50 ms cells. Its numbers are not meant to be read.
    #[arg(long)]
    quick: bool,
    /// Where fairness.md, fairness.csv and fairness.svg go.
    #[arg(long, default_value = "target/bench-report")]
    out: PathBuf,
    /// Length of one cell, in milliseconds (default 1000; quick: 50).
    #[arg(long)]
    window_ms: Option<u64>,
    /// Runs of every cell (default 5; quick: 1).
    #[arg(long)]
    runs: Option<usize>,
    /// Hold times to measure, in microseconds (default 10, 100 and 1000).
    #[arg(long, value_delimiter = ',')]
    holds_us: Vec<u64>,
    /// Only the peers whose name contains one of these (default: every peer).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
}

/// The peers, in table order.
const PEERS: [&str; 11] = [
    <Parksema as Peer>::NAME,
    <ParksemaBarging as Peer>::NAME,
    <ParksemaReleaseFair as Peer>::NAME,
    <ParksemaFifo as Peer>::NAME,
    <PlMutex012 as Peer>::NAME,
    <PlFairMutex012 as Peer>::NAME,
    <PlUnlockFair012 as Peer>::NAME,
    <PlMutex as Peer>::NAME,
    <PlFairMutex as Peer>::NAME,
    <PlUnlockFair as Peer>::NAME,
    <StdMutex as Peer>::NAME,
];

/// One cell's run of one peer.
type RunFn = fn(Work, Duration) -> Row;

/// The peers' runs, in table order (the names of `PEERS`).
const RUNS: [RunFn; 11] = [
    fairness::run::<Parksema>,
    fairness::run::<ParksemaBarging>,
    fairness::run::<ParksemaReleaseFair>,
    fairness::run::<ParksemaFifo>,
    fairness::run::<PlMutex012>,
    fairness::run::<PlFairMutex012>,
    fairness::run::<PlUnlockFair012>,
    fairness::run::<PlMutex>,
    fairness::run::<PlFairMutex>,
    fairness::run::<PlUnlockFair>,
    fairness::run::<StdMutex>,
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    // 1 s a cell: at h = 1 ms that is 1 000 acquisitions, enough for a streak of 1 ms / h to
    // show many times over; 5 runs of 11 peers x 3 holds = 165 s in all. The longest streak
    // is a maximum, so it grows with the window: every peer gets the same one.
    let window =
        Duration::from_millis(args.window_ms.unwrap_or(if args.quick { 50 } else { 1000 }));
    let runs = args.runs.unwrap_or(if args.quick { 1 } else { 5 }).max(1);
    fs::create_dir_all(&args.out)?;
    let holds = if args.holds_us.is_empty() {
        vec![10, 100, 1000]
    } else {
        args.holds_us.clone()
    };
    let peers: Vec<RunFn> = PEERS
        .iter()
        .zip(RUNS)
        .filter(|(name, _)| args.only.is_empty() || args.only.iter().any(|o| name.contains(o)))
        .map(|(_, run)| run)
        .collect();
    let mut rows = Vec::new();
    for hold_us in holds {
        let hold = Work::calibrate(hold_us * 1_000);
        eprintln!(
            "fairness: h = {hold_us} µs, {runs} rounds of {} peers x {window:?}",
            peers.len()
        );
        for run in 0..runs {
            for peer in &peers {
                let mut r = peer(hold, window);
                r.run = run;
                rows.push(r);
            }
        }
    }
    let summary = fairness::summarize(&rows);
    let table = table(&summary);
    println!("{table}");
    let machine = machine();
    let md = format!(
        "# Fairness: who re-acquires a lock it just released\n\n\
         Two threads, each \"acquire, hold h (busy), release, re-acquire at once\", one \
         permit, {} ms per run, {runs} runs per cell. `longest streak` is the most acquisitions \
         in a row by one thread, as the median of the runs' values with their range; `same \
         thread` the fraction of acquisitions by the thread that had the lock just before, \
         and `smaller share` the smaller of the two threads' parts of all acquisitions (0.50: \
         an even split), both medians over the runs.\n\nMachine: {machine}. Command: `cargo \
         run --release -p parksema-bench --bin fairness -- --out benches/results`.\n\n{table}\n\n\
         ![longest streak](fairness.svg)\n",
        window.as_millis()
    );
    fs::write(args.out.join("fairness.md"), md)?;
    let mut csv = csv::Writer::from_path(args.out.join("fairness.csv"))?;
    for r in &rows {
        csv.serialize(r)?;
    }
    csv.flush()?;
    chart(&args.out.join("fairness.svg"), &summary)?;
    eprintln!("fairness: wrote {}", args.out.join("fairness.md").display());
    Ok(())
}

/// The markdown table of the summarized cells.
fn table(cells: &[Summary]) -> String {
    let mut t = String::from(
        "| peer | h | acquisitions (median) | same thread | longest streak: median (range) | smaller share |\n\
         |---|---:|---:|---:|---:|---:|\n",
    );
    for c in cells {
        let _ = writeln!(
            t,
            "| {} | {} µs | {} | {:.3} | {} ({}–{}) | {:.2} |",
            c.peer,
            c.hold_us,
            c.acquisitions,
            c.same_thread,
            c.streak_median,
            c.streak_min,
            c.streak_max,
            c.smaller_share
        );
    }
    t
}

fn machine() -> String {
    let cpu = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{cpu}, {cores} hardware threads available")
}

const COLORS: [RGBColor; 11] = [
    RGBColor(214, 39, 40),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(44, 160, 44),
    RGBColor(31, 119, 180),
    RGBColor(23, 190, 207),
    RGBColor(140, 86, 75),
    RGBColor(174, 199, 232),
    RGBColor(158, 218, 229),
    RGBColor(188, 189, 34),
    RGBColor(127, 127, 127),
];

/// Median longest streak against hold time, both on log scales, one line per peer.
fn chart(path: &Path, rows: &[Summary]) -> Result<(), Box<dyn std::error::Error>> {
    let max_y = rows
        .iter()
        .map(|r| r.streak_median)
        .max()
        .unwrap_or(1)
        .max(10) as f64
        * 4.0;
    let root = SVGBackend::new(path, (760, 460)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut c = ChartBuilder::on(&root)
        .caption(
            "Longest run of acquisitions by one thread, median (2 threads, 1 permit)",
            ("sans-serif", 18),
        )
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(56)
        .build_cartesian_2d((8f64..1300f64).log_scale(), (1f64..max_y).log_scale())?;
    c.configure_mesh()
        .light_line_style(TRANSPARENT)
        .x_desc("hold time h, µs")
        .y_desc("longest streak")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.0}"))
        .draw()?;
    for (i, peer) in PEERS.iter().enumerate() {
        let line: Vec<(f64, f64)> = rows
            .iter()
            .filter(|r| r.peer == *peer)
            .map(|r| (r.hold_us as f64, r.streak_median.max(1) as f64))
            .collect();
        let color = COLORS[i % COLORS.len()];
        let width = if peer.starts_with("parksema") { 3 } else { 1 };
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
