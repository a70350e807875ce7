//! The progress display: a bar on a terminal (elapsed time, round, operations, operations
//! per second, violations), plain lines elsewhere, or nothing (`--quiet`).
//!
//! The display thread only reads the soak's counters; it is not a watchdog worker, so its
//! output never counts as progress of the semaphore.

use std::io::{IsTerminal as _, Write as _};
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use indicatif::{HumanCount, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::duration::human;
use crate::soak::Soak;

/// How progress is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Show {
    /// A bar if stderr is a terminal, else lines.
    Auto,
    /// A bar, drawn with terminal escapes even if stderr is a pipe (`cargo xtask soak` asks
    /// for it when its own stderr is a terminal: the supervisor forwards the bytes).
    Bar,
    /// A line every ten seconds.
    Lines,
    /// Nothing but violations, stalls and the final report.
    None,
}

/// How often a line is printed in [`Show::Lines`]: often enough that a log shows the soak
/// alive and that the `watchdog` supervisor, which kills a command silent for its stall
/// limit (`cargo xtask soak` gives it at least 60 s), never mistakes a healthy soak for a
/// hung one.
const LINE_EVERY: Duration = Duration::from_secs(10);

/// How often the bar is refreshed.
const TICK: Duration = Duration::from_millis(250);

/// The display.
#[derive(Debug)]
pub(crate) struct Progress {
    /// The bar, if one is drawn.
    bar: Mutex<Option<ProgressBar>>,
    /// Lines instead of a bar.
    lines: bool,
    /// Set when the display must stop.
    stopped: AtomicBool,
}

impl Progress {
    /// A display of the kind `show` for a soak of `duration` (`None`: no known end, so the
    /// bar shows no fraction done).
    pub(crate) fn new(show: Show, duration: Option<Duration>) -> Progress {
        let terminal = std::io::stderr().is_terminal();
        let (bar, lines) = match show {
            Show::None => (None, false),
            Show::Lines => (None, true),
            Show::Auto if !terminal => (None, true),
            Show::Auto | Show::Bar => {
                let target = if terminal {
                    ProgressDrawTarget::stderr_with_hz(4)
                } else {
                    ProgressDrawTarget::term_like_with_hz(Box::new(console::Term::stderr()), 4)
                };
                let bar = ProgressBar::with_draw_target(
                    duration.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
                    target,
                );
                bar.set_style(
                    ProgressStyle::with_template(
                        "{spinner} [{elapsed_precise}] [{wide_bar}] {percent:>3}% {msg}",
                    )
                    .expect("the template is valid")
                    .progress_chars("=> "),
                );
                (Some(bar), false)
            }
        };
        Progress {
            bar: Mutex::new(bar),
            lines,
            stopped: AtomicBool::new(false),
        }
    }

    /// Prints a line to stderr, above the bar if there is one.
    pub(crate) fn say(&self, line: &str) {
        let bar = self
            .bar
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        match bar {
            Some(bar) if !bar.is_hidden() => bar.suspend(|| eprintln!("{line}")),
            _ => {
                let mut err = std::io::stderr().lock();
                let _ = writeln!(err, "{line}");
                let _ = err.flush();
            }
        }
    }

    /// Stops drawing without erasing anything (the watchdog's stall report is being
    /// written to the same terminal).
    pub(crate) fn hide(&self) {
        self.stopped.store(true, SeqCst);
        if let Some(bar) = self
            .bar
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            bar.set_draw_target(ProgressDrawTarget::hidden());
            eprintln!();
        }
    }

    /// Stops the display and erases the bar.
    pub(crate) fn stop(&self) {
        self.stopped.store(true, SeqCst);
        if let Some(bar) = self
            .bar
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            bar.finish_and_clear();
            bar.set_draw_target(ProgressDrawTarget::hidden());
        }
    }

    /// Starts the display thread of `soak`.
    pub(crate) fn start(soak: &Arc<Soak>) -> Option<JoinHandle<()>> {
        let p = &soak.progress;
        if p.lines
            || p.bar
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .is_some()
        {
            let soak = Arc::clone(soak);
            thread::Builder::new()
                .name("soak progress".into())
                .spawn(move || run(&soak))
                .ok()
        } else {
            None
        }
    }
}

/// The display thread: refreshes the bar every [`TICK`], or prints a line every
/// [`LINE_EVERY`].
fn run(soak: &Soak) {
    let p = &soak.progress;
    // Samples of (time, operations) for the rate over the last few seconds.
    let mut samples: Vec<(Instant, u64)> = Vec::new();
    let mut last_line = Instant::now();
    while !p.stopped.load(SeqCst) {
        thread::sleep(TICK);
        let now = Instant::now();
        let ops = soak.operations();
        samples.push((now, ops));
        samples.retain(|&(t, _)| now.duration_since(t) <= Duration::from_secs(3));
        let (t0, ops0) = samples[0];
        let span = now.duration_since(t0).as_secs_f64();
        let rate = if span > 0.0 {
            (ops - ops0) as f64 / span
        } else {
            0.0
        };
        let round = soak.current_round();
        let violations = soak.violation_count();
        let elapsed = soak.start.elapsed();
        if p.lines {
            if now.duration_since(last_line) >= LINE_EVERY {
                last_line = now;
                p.say(&format!(
                    "parksema-soak: {} of {}, round {round}, {} operations, {}/s, violations {violations}",
                    human(elapsed),
                    human(soak.cfg.duration),
                    HumanCount(ops),
                    HumanCount(rate as u64),
                ));
            }
        } else if let Some(bar) = p
            .bar
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
        {
            bar.set_position(u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX));
            bar.set_message(format!(
                "round {round} · {} ops · {}/s · violations {violations}",
                HumanCount(ops),
                HumanCount(rate as u64)
            ));
        }
    }
}
