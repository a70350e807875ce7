//! Seed 004's fairness experiment, for every fairness mode of parksema and the locks seed 004
//! compared: two threads, each "acquire, hold h (busy), release, re-acquire at once", one
//! permit, h in {10 µs, 100 µs, 1 ms}. Prints a markdown table and writes it with a CSV file
//! and an SVG chart (longest streak against h) to `--out`.
//!
//! `cargo run --release -p parksema-bench --bin fairness -- --out benches/results`

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Parser;
use parksema_bench::contention::Work;
use parksema_bench::fairness::{self, Row};
use parksema_bench::peers::{
    Parksema, ParksemaBarging, ParksemaFifo, ParksemaReleaseFair, Peer, PlFairMutex, PlMutex,
    StdMutex,
};
use plotters::prelude::*;

#[derive(Parser, Debug)]
#[command(about = "Seed 004's fairness experiment: who re-acquires a lock it just released")]
struct Args {
    /// A smoke run: 50 ms cells. Its numbers are not meant to be read.
    #[arg(long)]
    quick: bool,
    /// Where fairness.md, fairness.csv and fairness.svg go.
    #[arg(long, default_value = "target/bench-report")]
    out: PathBuf,
    /// Length of one cell, in milliseconds (default 2000; quick: 50).
    #[arg(long)]
    window_ms: Option<u64>,
}

/// The peers, in table order.
const PEERS: [&str; 7] = [
    <Parksema as Peer>::NAME,
    <ParksemaBarging as Peer>::NAME,
    <ParksemaReleaseFair as Peer>::NAME,
    <ParksemaFifo as Peer>::NAME,
    <PlMutex as Peer>::NAME,
    <PlFairMutex as Peer>::NAME,
    <StdMutex as Peer>::NAME,
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    // 2 s a cell: at h = 1 ms that is 2 000 acquisitions, enough for a streak of 1 ms / h
    // to show many times over; 7 peers x 3 holds = 42 s in all.
    let window =
        Duration::from_millis(args.window_ms.unwrap_or(if args.quick { 50 } else { 2000 }));
    fs::create_dir_all(&args.out)?;
    let mut rows = Vec::new();
    for hold_us in [10, 100, 1000] {
        let hold = Work::calibrate(hold_us * 1_000);
        eprintln!(
            "fairness: h = {hold_us} µs, {} peers x {window:?}",
            PEERS.len()
        );
        rows.push(fairness::run::<Parksema>(hold, window));
        rows.push(fairness::run::<ParksemaBarging>(hold, window));
        rows.push(fairness::run::<ParksemaReleaseFair>(hold, window));
        rows.push(fairness::run::<ParksemaFifo>(hold, window));
        rows.push(fairness::run::<PlMutex>(hold, window));
        rows.push(fairness::run::<PlFairMutex>(hold, window));
        rows.push(fairness::run::<StdMutex>(hold, window));
    }
    let table = table(&rows);
    println!("{table}");
    let machine = machine();
    let md = format!(
        "# Fairness: who re-acquires a lock it just released\n\n\
         Seed 004's experiment: two threads, each \"acquire, hold h (busy), release, \
         re-acquire at once\", one permit, {} ms per cell. `same thread` is the fraction of \
         acquisitions by the thread that had the lock just before; `longest streak` the most \
         acquisitions in a row by one thread; the shares are each thread's part of all \
         acquisitions.\n\nMachine: {machine}. Command: `cargo run --release -p parksema-bench \
         --bin fairness -- --out benches/results`.\n\n{table}\n\n![longest streak](fairness.svg)\n",
        window.as_millis()
    );
    fs::write(args.out.join("fairness.md"), md)?;
    let mut csv = csv::Writer::from_path(args.out.join("fairness.csv"))?;
    for r in &rows {
        csv.serialize(r)?;
    }
    csv.flush()?;
    chart(&args.out.join("fairness.svg"), &rows)?;
    eprintln!("fairness: wrote {}", args.out.join("fairness.md").display());
    Ok(())
}

/// The markdown table of `rows`.
fn table(rows: &[Row]) -> String {
    let mut t = String::from(
        "| peer | h | acquisitions | same thread | longest streak | shares |\n\
         |---|---:|---:|---:|---:|---|\n",
    );
    for r in rows {
        let _ = writeln!(
            t,
            "| {} | {} µs | {} | {:.3} | {} | {:.2} / {:.2} |",
            r.peer,
            r.hold_us,
            r.acquisitions,
            r.same_thread,
            r.longest_streak,
            r.share_a,
            r.share_b
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

const COLORS: [RGBColor; 7] = [
    RGBColor(214, 39, 40),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(44, 160, 44),
    RGBColor(31, 119, 180),
    RGBColor(23, 190, 207),
    RGBColor(127, 127, 127),
];

/// Longest streak against hold time, both on log scales, one line per peer.
fn chart(path: &Path, rows: &[Row]) -> Result<(), Box<dyn std::error::Error>> {
    let max_y = rows
        .iter()
        .map(|r| r.longest_streak)
        .max()
        .unwrap_or(1)
        .max(10) as f64
        * 4.0;
    let root = SVGBackend::new(path, (760, 460)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut c = ChartBuilder::on(&root)
        .caption(
            "Longest run of acquisitions by one thread (2 threads, 1 permit)",
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
            .map(|r| (r.hold_us as f64, r.longest_streak.max(1) as f64))
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
