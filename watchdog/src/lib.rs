//! Stall detection for the semaphore's stress tests.
//!
//! A lost wakeup on real threads does not crash anything: a thread simply sleeps forever and the
//! test hangs. This crate turns such hangs into fast, clear failures, in two ways.
//!
//! * In process: [`Watchdog`] watches the workers of one scenario. Each worker reports its
//!   operations through a [`Worker`]; when none of them makes progress for the stall limit, the
//!   watchdog prints which operation every worker was last in, plus a description of the state
//!   under test, and exits the process with [`STALL_EXIT_CODE`].
//! * Around a whole command: the `watchdog` binary (logic in [`supervise`]) runs a command, for
//!   example `cargo test`, forwards its output, and when the command prints nothing for too long
//!   it captures a backtrace of every process in the command's process group with `gdb`, kills
//!   the group and exits with [`exit::STALL`].
//!
//! * For a verification report: [`report`] appends the records of each check to the file the
//!   variable `PARKSEMA_REPORT` names (every test target of the parksema workspace depends on
//!   this crate, so they all write through it).
//!
//! The in-process detector uses only `std` synchronization (atomics, `std::sync::Mutex`, `mpsc`),
//! never `parking_lot`: the primitive under test is built on `parking_lot_core`, and the
//! detector must keep working when that park table is wedged.
//!
//! ```
//! use std::time::Duration;
//!
//! let dog = watchdog::Watchdog::arm("example", watchdog::stall_limit(Duration::from_secs(30)));
//! dog.describe(|| "nothing interesting".to_string());
//! let worker = dog.worker("w0");
//! for _ in 0..1000 {
//!     worker.op("acquire");
//!     worker.op("release");
//! }
//! drop(dog);
//! ```

pub mod report;
mod stall;
pub mod supervise;

pub use stall::{Watchdog, Worker, stall_limit};

/// Exit code of a process ended by the in-process watchdog.
///
/// A test runner that re-executes a stress test in a child process can tell a detected stall
/// from an ordinary failure by this code.
///
/// ```
/// assert_eq!(watchdog::STALL_EXIT_CODE, 86);
/// ```
pub const STALL_EXIT_CODE: i32 = 86;

/// Codes of the `watchdog` supervisor binary.
///
/// | Code | Meaning |
/// |------|---------|
/// | 0    | The command exited successfully. |
/// | 87   | [`STALL`](exit::STALL): the command printed nothing for the stall limit. |
/// | 88   | [`OVERRUN`](exit::OVERRUN): the command ran longer than the total limit. |
/// | 89   | [`CHILD_FAILED`](exit::CHILD_FAILED): the command exited unsuccessfully or was killed by a signal. |
/// | 90   | [`SPAWN_FAILED`](exit::SPAWN_FAILED): the command could not be started. |
/// | 130  | [`INTERRUPTED`](exit::INTERRUPTED): the supervisor got SIGINT or SIGTERM. |
///
/// Command-line usage errors exit with 2, as usual for `clap`.
///
/// ```
/// use watchdog::exit;
///
/// let codes = [exit::STALL, exit::OVERRUN, exit::CHILD_FAILED, exit::SPAWN_FAILED, exit::INTERRUPTED];
/// assert!(codes.iter().all(|&code| code != 0 && code != watchdog::STALL_EXIT_CODE));
/// ```
pub mod exit {
    /// The command printed nothing for the stall limit; it was backtraced and killed.
    ///
    /// ```
    /// assert_eq!(watchdog::exit::STALL, 87);
    /// ```
    pub const STALL: i32 = 87;

    /// The command ran longer than the total limit (`--max`); it was backtraced and killed.
    ///
    /// ```
    /// assert_eq!(watchdog::exit::OVERRUN, 88);
    /// ```
    pub const OVERRUN: i32 = 88;

    /// The command exited with a non-zero code or was killed by a signal.
    ///
    /// ```
    /// assert_eq!(watchdog::exit::CHILD_FAILED, 89);
    /// ```
    pub const CHILD_FAILED: i32 = 89;

    /// The command could not be started, for example because it does not exist.
    ///
    /// ```
    /// assert_eq!(watchdog::exit::SPAWN_FAILED, 90);
    /// ```
    pub const SPAWN_FAILED: i32 = 90;

    /// The supervisor received SIGINT or SIGTERM; it killed the command's process group.
    ///
    /// ```
    /// assert_eq!(watchdog::exit::INTERRUPTED, 130);
    /// ```
    pub const INTERRUPTED: i32 = 130;
}
