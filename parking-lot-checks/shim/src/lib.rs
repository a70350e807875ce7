//! What the generated modules import in place of `core`/`std` in the `use` lines that name
//! atomics: `core` and `std` themselves, but for `sync::atomic`, which is the checker's under
//! loom and shuttle; and what their models share: a plain data cell ([`DataCell`]) and the
//! runner (`check`, under a checker feature, and `failure`).
//!
//! The checker's atomics cannot be built in a `const` (parking_lot's `RawMutex::INIT`, a
//! `const`, holds an `AtomicU8`; `Once::new` and `Condvar::new` are `const fn`s). So each
//! atomic here keeps its initial value and creates the checker's atomic from it on first use.
//! Objects are built inside the model (never statics), so the checker's atomic belongs to
//! the execution that uses it. The first use may be by a thread other than the one that
//! built the object; its initial value is then the first store in the checker's history of
//! it (a value every thread may read, as it could read the initializing store of a real
//! atomic that was published to it).

// Each generated file uses a few of these names; the rest are there so that any `use` of
// `core` or `std` resolves as it would unshimmed.
#![allow(
    unused_imports,
    dead_code,
    reason = "the full API, of which each version's files use a part"
)]

/// Runs a model under this build's checker: loom (every interleaving within `bound`
/// preemptions; `None`: unbounded) or shuttle (`schedules` random and as many PCT schedules,
/// depth 3). Returns the executions or schedules run.
#[cfg(any(feature = "loom", feature = "shuttle"))]
pub fn check(
    bound: Option<usize>,
    schedules: usize,
    body: impl Fn() + Send + Sync + 'static,
) -> usize {
    let runs = ::std::sync::Arc::new(::std::sync::atomic::AtomicUsize::new(0));
    let counted = {
        let runs = ::std::sync::Arc::clone(&runs);
        move || {
            runs.fetch_add(1, ::std::sync::atomic::Ordering::Relaxed);
            body();
        }
    };
    #[cfg(feature = "loom")]
    {
        let _ = schedules;
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = bound;
        builder.check(counted);
    }
    #[cfg(all(feature = "shuttle", not(feature = "loom")))]
    {
        let _ = bound;
        let counted = ::std::sync::Arc::new(counted);
        let random = ::std::sync::Arc::clone(&counted);
        shuttle::check_random(move || random(), schedules);
        shuttle::check_pct(move || counted(), schedules, 3);
    }
    runs.load(::std::sync::atomic::Ordering::Relaxed)
}

/// The message of the failure `run` ends in (a checker's report is a panic), `None` if it
/// passed.
pub fn failure(run: impl FnOnce()) -> Option<String> {
    ::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(run))
        .err()
        .map(|p| {
            p.downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_string()))
                .unwrap_or_default()
        })
}

/// A plain cell for the data a checked primitive protects, in the models: loom's
/// `UnsafeCell` under loom (each access checked against every other for an ordering: two
/// unordered ones are a race it reports), an `UnsafeCell` otherwise (shuttle models no memory
/// ordering: a lost update shows in the counts instead).
#[derive(Debug, Default)]
pub struct DataCell(
    #[cfg(feature = "loom")] loom::cell::UnsafeCell<usize>,
    #[cfg(not(feature = "loom"))] ::std::cell::UnsafeCell<usize>,
);

// SAFETY: a model makes every access under the primitive it checks, or publishes the cell
// through it (that is the property under test: loom's race report when two accesses are not
// ordered).
unsafe impl Sync for DataCell {}

impl DataCell {
    /// A cell holding 0.
    pub fn new() -> DataCell {
        DataCell::default()
    }

    /// Sets it to `v`; the caller's access is ordered by what the model checks.
    pub fn set(&self, v: usize) {
        #[cfg(feature = "loom")]
        // SAFETY: ordered by the checked primitive (the property the model checks).
        self.0.with_mut(|p| unsafe { *p = v });
        #[cfg(not(feature = "loom"))]
        // SAFETY: as above.
        unsafe {
            *self.0.get() = v
        };
    }

    /// Adds one, as [`set`](DataCell::set).
    pub fn bump(&self) {
        self.set(self.get() + 1);
    }

    /// Reads it, as [`set`](DataCell::set).
    pub fn get(&self) -> usize {
        #[cfg(feature = "loom")]
        // SAFETY: ordered by the checked primitive (the property the model checks).
        return self.0.with(|p| unsafe { *p });
        #[cfg(not(feature = "loom"))]
        // SAFETY: as above.
        unsafe {
            *self.0.get()
        }
    }
}

pub mod core {
    pub use ::core::*;
    /// `core::sync`, with the checker's atomics.
    pub mod sync {
        pub use super::super::atomic;
        pub use ::core::sync::*;
    }
}

pub mod std {
    pub use ::std::*;
    /// `std::sync`, with the checker's atomics.
    pub mod sync {
        pub use super::super::atomic;
        pub use ::std::sync::*;
    }
}

/// The real build's atomics: std's.
#[cfg(not(any(feature = "loom", feature = "shuttle")))]
pub mod atomic {
    pub use ::std::sync::atomic::*;
}

/// The checker's atomics, each created on first use from a `const`-built initial value.
#[cfg(any(feature = "loom", feature = "shuttle"))]
pub mod atomic {
    #[cfg(feature = "loom")]
    use loom::sync::atomic as checker;
    #[cfg(all(feature = "shuttle", not(feature = "loom")))]
    use shuttle::sync::atomic as checker;

    pub use checker::Ordering;

    use std::cell::Cell;
    use std::sync::OnceLock;

    std::thread_local! {
        /// Whether the deliberate flaw of [`with_relaxed_orderings`] is on (for the run on this
        /// OS thread: the checkers run every model thread on the one that called them).
        static RELAXED: Cell<bool> = const { Cell::new(false) };
    }

    /// Runs `f` (a checker run) with a deliberate flaw in every shimmed atomic: each ordering
    /// is `Relaxed` and each fence is dropped, as if the checked code had none. For showing
    /// that a model catches missing orderings (loom's race report on its plain cell); never
    /// for checking code.
    pub fn with_relaxed_orderings<R>(f: impl FnOnce() -> R) -> R {
        struct Restore(bool);
        impl Drop for Restore {
            fn drop(&mut self) {
                RELAXED.with(|r| r.set(self.0));
            }
        }
        let _restore = Restore(RELAXED.with(|r| r.replace(true)));
        f()
    }

    /// `order`, or `Relaxed` under [`with_relaxed_orderings`].
    fn ord(order: Ordering) -> Ordering {
        if RELAXED.with(Cell::get) {
            Ordering::Relaxed
        } else {
            order
        }
    }

    /// The checker's fence, dropped under [`with_relaxed_orderings`].
    pub fn fence(order: Ordering) {
        if !RELAXED.with(Cell::get) {
            checker::fence(order);
        }
    }

    macro_rules! lazy_atomic {
        ($name:ident, $int:ty) => {
            /// The checker's atomic of this name, created on first use.
            pub struct $name {
                init: $int,
                inner: OnceLock<checker::$name>,
            }

            impl $name {
                /// An atomic that starts at `value`.
                pub const fn new(value: $int) -> Self {
                    Self {
                        init: value,
                        inner: OnceLock::new(),
                    }
                }

                fn get(&self) -> &checker::$name {
                    self.inner.get_or_init(|| checker::$name::new(self.init))
                }

                pub fn load(&self, order: Ordering) -> $int {
                    self.get().load(ord(order))
                }

                pub fn store(&self, value: $int, order: Ordering) {
                    self.get().store(value, ord(order))
                }

                pub fn swap(&self, value: $int, order: Ordering) -> $int {
                    self.get().swap(value, ord(order))
                }

                pub fn compare_exchange(
                    &self,
                    current: $int,
                    new: $int,
                    success: Ordering,
                    failure: Ordering,
                ) -> Result<$int, $int> {
                    self.get()
                        .compare_exchange(current, new, ord(success), ord(failure))
                }

                pub fn compare_exchange_weak(
                    &self,
                    current: $int,
                    new: $int,
                    success: Ordering,
                    failure: Ordering,
                ) -> Result<$int, $int> {
                    self.get()
                        .compare_exchange_weak(current, new, ord(success), ord(failure))
                }

                pub fn fetch_add(&self, value: $int, order: Ordering) -> $int {
                    self.get().fetch_add(value, ord(order))
                }

                pub fn fetch_sub(&self, value: $int, order: Ordering) -> $int {
                    self.get().fetch_sub(value, ord(order))
                }

                pub fn fetch_and(&self, value: $int, order: Ordering) -> $int {
                    self.get().fetch_and(value, ord(order))
                }

                pub fn fetch_or(&self, value: $int, order: Ordering) -> $int {
                    self.get().fetch_or(value, ord(order))
                }

                /// std's `try_update` (`fetch_update`): a load, then `compare_exchange_weak`
                /// with what `f` makes of the value, until one succeeds or `f` says no.
                pub fn try_update(
                    &self,
                    set_order: Ordering,
                    fetch_order: Ordering,
                    mut f: impl FnMut($int) -> Option<$int>,
                ) -> Result<$int, $int> {
                    let mut prev = self.load(fetch_order);
                    while let Some(next) = f(prev) {
                        match self.compare_exchange_weak(prev, next, set_order, fetch_order) {
                            Ok(value) => return Ok(value),
                            Err(actual) => prev = actual,
                        }
                    }
                    Err(prev)
                }

                /// std's older name of [`Self::try_update`].
                pub fn fetch_update(
                    &self,
                    set_order: Ordering,
                    fetch_order: Ordering,
                    f: impl FnMut($int) -> Option<$int>,
                ) -> Result<$int, $int> {
                    self.try_update(set_order, fetch_order, f)
                }
            }

            impl ::core::fmt::Debug for $name {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    f.debug_struct(stringify!($name)).finish_non_exhaustive()
                }
            }
        };
    }

    lazy_atomic!(AtomicU8, u8);
    lazy_atomic!(AtomicUsize, usize);

    /// The checker's `AtomicPtr`, created on first use.
    pub struct AtomicPtr<T> {
        init: *mut T,
        inner: OnceLock<checker::AtomicPtr<T>>,
    }

    // SAFETY: `init` is a pointer value that is only ever handed to the checker's
    // `AtomicPtr`, which is `Send` and `Sync` for every `T`, as std's is; this type never
    // dereferences it.
    unsafe impl<T> Send for AtomicPtr<T> {}
    // SAFETY: as for `Send`: shared access only reads `init` (a `Copy` value) once, inside
    // `OnceLock::get_or_init`.
    unsafe impl<T> Sync for AtomicPtr<T> {}

    impl<T> AtomicPtr<T> {
        /// An atomic pointer that starts at `value`.
        pub const fn new(value: *mut T) -> Self {
            Self {
                init: value,
                inner: OnceLock::new(),
            }
        }

        fn get(&self) -> &checker::AtomicPtr<T> {
            self.inner
                .get_or_init(|| checker::AtomicPtr::new(self.init))
        }

        pub fn load(&self, order: Ordering) -> *mut T {
            self.get().load(ord(order))
        }

        pub fn store(&self, value: *mut T, order: Ordering) {
            self.get().store(value, ord(order))
        }

        pub fn swap(&self, value: *mut T, order: Ordering) -> *mut T {
            self.get().swap(value, ord(order))
        }

        pub fn compare_exchange(
            &self,
            current: *mut T,
            new: *mut T,
            success: Ordering,
            failure: Ordering,
        ) -> Result<*mut T, *mut T> {
            self.get()
                .compare_exchange(current, new, ord(success), ord(failure))
        }

        pub fn compare_exchange_weak(
            &self,
            current: *mut T,
            new: *mut T,
            success: Ordering,
            failure: Ordering,
        ) -> Result<*mut T, *mut T> {
            self.get()
                .compare_exchange_weak(current, new, ord(success), ord(failure))
        }
    }

    impl<T> ::core::fmt::Debug for AtomicPtr<T> {
        fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
            f.debug_struct("AtomicPtr").finish_non_exhaustive()
        }
    }
}
