//! `parksema-bench`: the contention matrix, wake latency and sizes, written next to the
//! criterion medians as one markdown report, CSV files and SVG charts.
//!
//! Run it through `cargo xtask bench` (which runs the criterion benchmarks first).

use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Parser;
use parksema_bench::contention::{self, Cell, Work};
use parksema_bench::latency;
use parksema_bench::peers::{
    AsyncLock, CondvarSem, ParkFloor, Parksema, ParksemaBarging, ParksemaFifo, Peer, PlFairMutex,
    PlFairMutex012, PlMutex, PlMutex012, PlUnlockFair, PlUnlockFair012, PosixSem, RsEvents, Signal,
    StdMutex,
};
use parksema_bench::report::{self, ContentionRow, LatencyRow, SizeRow};

#[derive(Parser, Debug)]
#[command(about = "Contention, wake-latency and size benchmarks of parksema against its peers")]
struct Args {
    /// A smoke run of a few seconds: two thread counts, no work, short cells. Its numbers
    /// are not meant to be read.
    #[arg(long)]
    quick: bool,
    /// Where the report, CSV files and charts go.
    #[arg(long, default_value = "target/bench-report")]
    out: PathBuf,
    /// Criterion's output directory, read for the micro-benchmark table.
    #[arg(long, default_value = "target/criterion")]
    criterion: PathBuf,
    /// Largest thread count of the contention matrix (powers of two from 1).
    #[arg(long, default_value_t = 32)]
    max_threads: usize,
    /// Length of one contention cell, in milliseconds (default: 200, quick: 20).
    #[arg(long)]
    cell_ms: Option<u64>,
    /// Runs per peer and cell; the median by throughput is reported (default: 3, quick: 1).
    #[arg(long)]
    reps: Option<usize>,
    /// Work while holding, in nanoseconds, one matrix column per value (default: 0, 100,
    /// 1000; quick: 0).
    #[arg(long, value_delimiter = ',')]
    holds_ns: Vec<u64>,
    /// Work between acquisitions, in nanoseconds (default: 0, 1000; quick: 0).
    #[arg(long, value_delimiter = ',')]
    betweens_ns: Vec<u64>,
    /// Only the contention matrix: no wake latency, no large request behind small ones.
    #[arg(long)]
    contention_only: bool,
    /// Only these peers in the contention matrix (their names as the report prints them,
    /// comma-separated; default: all), e.g. for an A/B run of a change to parksema against
    /// the peers it trails.
    #[arg(long, value_delimiter = ',')]
    peers: Vec<String>,
    /// Only cells with at most this many permits.
    #[arg(long)]
    max_permits: Option<usize>,
}

/// The peers of the contention matrix, in table order.
const PEERS: [&str; 14] = [
    <Parksema as Peer>::NAME,
    <ParksemaFifo as Peer>::NAME,
    <ParksemaBarging as Peer>::NAME,
    <PosixSem as Peer>::NAME,
    <CondvarSem as Peer>::NAME,
    <RsEvents as Peer>::NAME,
    <AsyncLock as Peer>::NAME,
    <PlMutex012 as Peer>::NAME,
    <PlFairMutex012 as Peer>::NAME,
    <PlUnlockFair012 as Peer>::NAME,
    <PlMutex as Peer>::NAME,
    <PlFairMutex as Peer>::NAME,
    <PlUnlockFair as Peer>::NAME,
    <StdMutex as Peer>::NAME,
];

/// `Fifo` and the peers that promise what it does: every release that finds a thread waiting
/// hands over to it.
const FAIR_PEERS: [&str; 5] = [
    <ParksemaFifo as Peer>::NAME,
    <PlFairMutex012 as Peer>::NAME,
    <PlUnlockFair012 as Peer>::NAME,
    <PlFairMutex as Peer>::NAME,
    <PlUnlockFair as Peer>::NAME,
];

fn measure<P: Peer>(cell: Cell, reps: usize, only: &[String]) -> Option<ContentionRow> {
    if P::ONE_PERMIT_ONLY && cell.permits != 1 {
        return None;
    }
    if !only.is_empty() && !only.iter().any(|name| name == P::NAME) {
        return None;
    }
    let mut runs: Vec<contention::Outcome> =
        (0..reps).map(|_| contention::run::<P>(cell)).collect();
    runs.sort_by(|a, b| a.ops_per_sec.total_cmp(&b.ops_per_sec));
    let o = runs.swap_remove(runs.len() / 2);
    let n = o.per_thread.len();
    Some(ContentionRow {
        threads: cell.threads,
        permits: cell.permits,
        hold_ns: cell.hold.nominal_ns,
        between_ns: cell.between.nominal_ns,
        peer: P::NAME.to_string(),
        ops_per_sec: o.ops_per_sec,
        thread_min: o.per_thread[0],
        thread_median: o.per_thread[n / 2],
        thread_max: o.per_thread[n - 1],
        wait_p50_ns: o.wait_ns[0],
        wait_p99_ns: o.wait_ns[1],
        wait_p999_ns: o.wait_ns[2],
        longest_streak: o.longest_streak,
        cpu_ns_per_op: o.cpu_ns_per_op,
        voluntary_switches_per_op: o.switches_per_op.0,
        involuntary_switches_per_op: o.switches_per_op.1,
        futex_per_op: o.futex_per_op,
        spins_per_op: o.own_per_op.map(|c| c.spins),
        parks_per_op: o.own_per_op.map(|c| c.parks),
        wasted_wakeups_per_op: o.own_per_op.map(|c| c.wakeups_without_permits),
        handoffs_per_op: o.own_per_op.map(|c| c.handoffs),
    })
}

/// The (threads, permits) pairs: T in powers of two, P in {1, 2, T/2}, keeping P <= T.
fn shapes(max_threads: usize, quick: bool) -> Vec<(usize, usize)> {
    let ts: Vec<usize> = if quick {
        vec![1, 4]
    } else {
        std::iter::successors(Some(1usize), |t| Some(t * 2))
            .take_while(|t| *t <= max_threads)
            .collect()
    };
    let mut out = Vec::new();
    for t in ts {
        let mut ps = vec![1, 2, t / 2];
        ps.retain(|p| *p >= 1 && *p <= t);
        ps.sort_unstable();
        ps.dedup();
        out.extend(ps.into_iter().map(|p| (t, p)));
    }
    out
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
    let cores = cores();
    let kernel = fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!(
        "{cpu}, {cores} hardware threads available, Linux {}",
        kernel.trim()
    )
}

/// The hardware threads this process may run on (0 where unknown).
fn cores() -> usize {
    std::thread::available_parallelism().map_or(0, |n| n.get())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    // 200 ms cells, median of 3: the full matrix (84 cells, up to 7 peers) then takes about
    // 330 s here; between two such runs single ratios still moved by up to ~15 % on this
    // shared machine, so longer cells would buy little. Quick: 20 ms, one run, about 1 s.
    let cell_ms = args.cell_ms.unwrap_or(if args.quick { 20 } else { 200 });
    let reps = args.reps.unwrap_or(if args.quick { 1 } else { 3 }).max(1);
    fs::create_dir_all(&args.out)?;
    let started = Instant::now();

    // Sizes.
    let sizes = vec![
        SizeRow {
            peer: "parksema".into(),
            bytes: size_of::<parksema::Semaphore>(),
            note: "the state word and the fairness timer; waiters live in parking_lot_core's global table".into(),
        },
        SizeRow {
            peer: "sem_t".into(),
            bytes: size_of::<libc::sem_t>(),
            note: "glibc; must not move once initialized (boxed here)".into(),
        },
        SizeRow {
            peer: "Mutex+Condvar".into(),
            bytes: size_of::<CondvarSem>(),
            note: "std futex Mutex<usize> + Condvar".into(),
        },
        SizeRow {
            peer: "rsevents-extra".into(),
            bytes: size_of::<rsevents_extra::Semaphore>(),
            note: "counts are u16 (at most 65 535 permits)".into(),
        },
        SizeRow {
            peer: "async-lock".into(),
            bytes: size_of::<async_lock::Semaphore>(),
            note: "plus an event-listener allocation once anyone waits".into(),
        },
        SizeRow {
            peer: "parking_lot 0.12 Mutex".into(),
            bytes: size_of::<parking_lot_0_12::Mutex<()>>(),
            note: "one permit only".into(),
        },
        SizeRow {
            peer: "parking_lot 0.13 Mutex".into(),
            bytes: size_of::<parking_lot::Mutex<()>>(),
            note: "one permit only".into(),
        },
        SizeRow {
            peer: "std::sync::Mutex".into(),
            bytes: size_of::<std::sync::Mutex<()>>(),
            note: "one permit only".into(),
        },
    ];

    // Wake latency: the ping-pong, and wakes from a sleep 200 µs after the taker blocked
    // (longer than any peer spins before sleeping: parksema's SpinWait gives up after
    // 3 spin rounds and 7 yields, a few microseconds).
    // 50 000 round trips x 5 runs and 2 000 sleeping wakes (each 200 µs apart) per peer:
    // about 20 s for the six peers here; the quick sizes take well under a second.
    let (trips, lreps, wakes) = if args.quick {
        (2_000, 1, 200)
    } else {
        (50_000, 5, 2_000)
    };
    let gap = Duration::from_micros(200);
    eprintln!(
        "wake latency: {trips} round trips x {lreps} runs, then {wakes} wakes from sleep, per peer"
    );
    fn row<S: Signal>(trips: u64, reps: usize, wakes: usize, gap: Duration) -> LatencyRow {
        let (parked_p50_ns, parked_p99_ns) = latency::parked_wake::<S>(wakes, gap);
        LatencyRow {
            peer: S::NAME.to_string(),
            ns_per_wake: latency::ping_pong::<S>(trips, reps),
            parked_p50_ns,
            parked_p99_ns,
        }
    }
    let latency = if args.contention_only {
        Vec::new()
    } else {
        vec![
            row::<Parksema>(trips, lreps, wakes, gap),
            row::<ParkFloor>(trips, lreps, wakes, gap),
            row::<PosixSem>(trips, lreps, wakes, gap),
            row::<CondvarSem>(trips, lreps, wakes, gap),
            row::<RsEvents>(trips, lreps, wakes, gap),
            row::<AsyncLock>(trips, lreps, wakes, gap),
        ]
    };

    // A large request behind a stream of small ones (parksema only: the peers cannot take
    // several permits at once), in each fairness mode. Four permits; 1, 3 and 7 small
    // threads holding 1 µs with 1 µs between (with none between, on two cores, the small
    // threads never all let go at once). 500 ms a shape (quick: 20 ms): 9 shapes, 4.5 s.
    let starve_window = Duration::from_millis(if args.quick { 20 } else { 500 });
    let starve_work = Work::calibrate(1_000);
    eprintln!("large request behind small ones: 9 shapes x {starve_window:?}");
    let modes = if args.contention_only {
        Vec::new()
    } else {
        vec![
            parksema::Fairness::Eventual,
            parksema::Fairness::Fifo,
            parksema::Fairness::Barging,
        ]
    };
    let starvation: Vec<parksema_bench::starvation::Row> = modes
        .into_iter()
        .flat_map(|mode| [1, 3, 7].into_iter().map(move |small| (mode, small)))
        .map(|(mode, small)| {
            parksema_bench::starvation::run(mode, 4, small, starve_work, starve_work, starve_window)
        })
        .collect();

    // Contention.
    let pick = |given: &[u64], default: &[u64], quick: &[u64]| -> Vec<Work> {
        let ns = if !given.is_empty() {
            given
        } else if args.quick {
            quick
        } else {
            default
        };
        ns.iter().map(|&ns| Work::calibrate(ns)).collect()
    };
    let works = pick(&args.holds_ns, &[0, 100, 1_000], &[0]);
    let betweens = pick(&args.betweens_ns, &[0, 1_000], &[0]);
    let mut shapes = shapes(args.max_threads, args.quick);
    shapes.retain(|&(_, p)| args.max_permits.is_none_or(|most| p <= most));
    if let Some(unknown) = args
        .peers
        .iter()
        .find(|name| !PEERS.contains(&name.as_str()))
    {
        return Err(format!("--peers: no peer is named {unknown:?}; the peers: {PEERS:?}").into());
    }
    let total_cells = shapes.len() * works.len() * betweens.len();
    eprintln!(
        "contention: {total_cells} cells x up to {} peers x {reps} runs x {cell_ms} ms",
        PEERS.len()
    );
    let mut rows = Vec::new();
    // Hidden when stderr is not a terminal (CI logs get the summary line only).
    let progress = indicatif::ProgressBar::new(total_cells as u64).with_style(
        indicatif::ProgressStyle::with_template(
            "  {bar:40} {pos}/{len} cells, {elapsed} (eta {eta}) {msg}",
        )
        .expect("a valid progress template"),
    );
    for &(threads, permits) in &shapes {
        for &hold in &works {
            for &between in &betweens {
                let cell = Cell {
                    threads,
                    permits,
                    hold,
                    between,
                    duration: Duration::from_millis(cell_ms),
                };
                rows.extend(measure::<Parksema>(cell, reps, &args.peers));
                rows.extend(measure::<ParksemaFifo>(cell, reps, &args.peers));
                rows.extend(measure::<ParksemaBarging>(cell, reps, &args.peers));
                rows.extend(measure::<PosixSem>(cell, reps, &args.peers));
                rows.extend(measure::<CondvarSem>(cell, reps, &args.peers));
                rows.extend(measure::<RsEvents>(cell, reps, &args.peers));
                rows.extend(measure::<AsyncLock>(cell, reps, &args.peers));
                rows.extend(measure::<PlMutex012>(cell, reps, &args.peers));
                rows.extend(measure::<PlFairMutex012>(cell, reps, &args.peers));
                rows.extend(measure::<PlUnlockFair012>(cell, reps, &args.peers));
                rows.extend(measure::<PlMutex>(cell, reps, &args.peers));
                rows.extend(measure::<PlFairMutex>(cell, reps, &args.peers));
                rows.extend(measure::<PlUnlockFair>(cell, reps, &args.peers));
                rows.extend(measure::<StdMutex>(cell, reps, &args.peers));
                progress.set_message(format!("T = {threads}, P = {permits}"));
                progress.inc(1);
            }
        }
    }
    progress.finish_and_clear();
    eprintln!(
        "contention: {total_cells} cells in {:.0} s",
        started.elapsed().as_secs_f64()
    );

    let micro = report::read_criterion(&args.criterion);
    report::write_csv(&args.out.join("contention.csv"), &rows)?;
    report::write_csv(&args.out.join("latency.csv"), &latency)?;
    report::write_csv(&args.out.join("sizes.csv"), &sizes)?;
    report::write_csv(&args.out.join("micro.csv"), &micro)?;
    report::write_csv(&args.out.join("starvation.csv"), &starvation)?;

    // Charts: throughput against threads, per permit shape and hold time, no work between.
    let mut charts = Vec::new();
    for &hold in &works {
        for (label, file, pick) in [
            ("P = 1", "p1", 0usize),
            ("P = 2", "p2", 1),
            ("P = T/2", "phalf", 2),
        ] {
            let name = format!("throughput-{file}-hold{}.svg", hold.nominal_ns);
            let title = format!("{label}, hold {} ns, nothing between", hold.nominal_ns);
            report::chart(&args.out.join(&name), &title, &rows, &PEERS, |r| {
                r.hold_ns == hold.nominal_ns
                    && r.between_ns == 0
                    && match pick {
                        0 => r.permits == 1,
                        1 => r.permits == 2.min(r.threads),
                        _ => r.permits == (r.threads / 2).max(1),
                    }
            })?;
            charts.push(name);
        }
    }

    let mut md = String::new();
    let _ = writeln!(md, "# parksema benchmarks\n");
    let _ = writeln!(md, "Machine: {}.", machine());
    let _ = writeln!(
        md,
        "Mode: {}; contention cells of {cell_ms} ms, median of {reps} run(s) by throughput; total {:.0} s.\n",
        if args.quick {
            "quick (smoke run: do not read the numbers)"
        } else {
            "full"
        },
        started.elapsed().as_secs_f64()
    );
    let _ = writeln!(md, "## Uncontended (criterion)\n");
    if micro.is_empty() {
        let _ = writeln!(
            md,
            "No criterion results under `{}`: run `cargo xtask bench`.",
            args.criterion.display()
        );
    } else {
        md.push_str(&report::micro_table(&micro, &PEERS));
    }
    let _ = writeln!(
        md,
        "\n## Wake latency (below 1 means parksema wakes faster)\n"
    );
    let _ = writeln!(
        md,
        "Ping-pong: two threads bounce a permit through two empty semaphores ({trips} round \
         trips, median of {lreps} runs); a waiter may still be spinning when its permit comes. \
         Wake from sleep: the giver waits {} µs after the taker blocked, then gives; the time \
         from the give to the taker's return ({wakes} wakes).\n",
        gap.as_micros()
    );
    md.push_str(&report::latency_table(&latency));
    let _ = writeln!(
        md,
        "\n## A large request behind small ones (parksema, each fairness mode)\n"
    );
    let _ = writeln!(
        md,
        "One thread takes all 4 permits at once with `acquire_many(4)`, again and again; the \
         small threads take one each. Barging (`Barging`, and `Eventual` between its handoffs) \
         lets a small request take a free permit while the large one waits, so the large one \
         gets in only when every small holder is out at once; under `Fifo` the small requests \
         queue behind the parked large one. Measured, not bounded.\n"
    );
    md.push_str(&parksema_bench::starvation::table(&starvation));
    let _ = writeln!(md, "\n## Size\n");
    md.push_str(&report::size_table(&sizes));
    let _ = writeln!(
        md,
        "\n## Contention: throughput, parksema ÷ peer (above 1 means parksema does more operations per second)\n"
    );
    let _ = writeln!(
        md,
        "T threads, P permits; `·`: the peer has no such cell (a mutex has one permit).\n"
    );
    md.push_str(&report::contention_table(
        &rows,
        "parksema",
        &PEERS,
        cores(),
        |_| true,
    ));
    let _ = writeln!(
        md,
        "\n## Contention: `Fifo` against the mutexes that hand over on every unlock \
         (one permit; above 1 means `Fifo` does more operations per second)\n"
    );
    md.push_str(&report::contention_table(
        &rows,
        <ParksemaFifo as Peer>::NAME,
        &FAIR_PEERS,
        cores(),
        |r| r.permits == 1,
    ));
    let _ = writeln!(
        md,
        "\n## Contention: what each operation costs, 1 000 ns held, none between\n\n\
         Per operation, in the run whose throughput was the median: the worker threads' \
         context switches (`getrusage(RUSAGE_THREAD)`), the process's futex calls (the \
         kernel's `sys_enter_futex` tracepoint; `·` where the kernel does not count them), and \
         parksema's own counts where it was built with `--features profile` (`·` otherwise).\n"
    );
    md.push_str(&report::counters_table(&rows, |r| {
        r.hold_ns == 1_000 && r.between_ns == 0
    }));
    let _ = writeln!(md, "\n## Contention: every metric in selected cells\n");
    let detail_hold = works.get(1).map_or(0, |w| w.nominal_ns);
    for (t, p) in [(8, 1), (8, 4), (4, 1), (4, 2)] {
        if let Some(table) = report::detail_table(&rows, t, p, detail_hold, 0) {
            md.push_str(&table);
            md.push('\n');
        }
    }
    let _ = writeln!(md, "## Charts\n");
    for c in &charts {
        if args.out.join(c).exists() {
            let _ = writeln!(md, "![{c}]({c})");
        }
    }
    fs::write(args.out.join("report.md"), &md)?;

    // The summary benches/README.md shows: everything but the contention matrix, which is cut to
    // one work setting, and one chart.
    let mut summary = String::new();
    let _ = writeln!(summary, "Machine: {}.", machine());
    let _ = writeln!(
        summary,
        "Command: `cargo xtask bench --out benches/results`; the full report, CSV files and charts are beside this file ([`report.md`](report.md)).\n"
    );
    let _ = writeln!(summary, "Uncontended, one thread (criterion):");
    summary.push_str(&report::micro_table(&micro, &PEERS));
    let _ = writeln!(
        summary,
        "\nWake latency (below 1 means parksema wakes faster):\n"
    );
    summary.push_str(&report::latency_table(&latency));
    let _ = writeln!(
        summary,
        "\nA large request (`acquire_many(4)` of 4 permits) behind small ones, per fairness mode:\n"
    );
    summary.push_str(&parksema_bench::starvation::table(&starvation));
    let _ = writeln!(summary, "\nSize:\n");
    summary.push_str(&report::size_table(&sizes));
    let _ = writeln!(
        summary,
        "\nContention, {detail_hold} ns of work while holding and none between (throughput, \
         parksema ÷ peer: above 1 means parksema does more operations per second; the full \
         matrix adds 0 and 1 000 ns of holding and 1 000 ns between):\n"
    );
    summary.push_str(&report::contention_table(
        &rows,
        "parksema",
        &PEERS,
        cores(),
        |r| r.hold_ns == detail_hold && r.between_ns == 0,
    ));
    let chart = format!("throughput-p1-hold{detail_hold}.svg");
    if args.out.join(&chart).exists() {
        let _ = writeln!(summary, "\n![Throughput at one permit]({chart})");
    }
    fs::write(args.out.join("summary.md"), &summary)?;
    println!("{md}");
    eprintln!("report, CSV files and charts in {}", args.out.display());
    Ok(())
}
