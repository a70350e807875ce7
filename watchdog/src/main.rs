//! The `watchdog` supervisor binary; see [`watchdog::supervise`] for what it does and its exit
//! codes.

use clap::Parser as _;

fn main() {
    let args = watchdog::supervise::Args::parse();
    std::process::exit(watchdog::supervise::run(&args));
}
