//! The mutex's data cell: loom's `UnsafeCell` under `loom`, so that loom tracks every access
//! to the protected value and reports two accesses not ordered by happens-before (two holders
//! at once, or a holder not ordered after the previous one's writes) as a causality
//! violation; std's `UnsafeCell` otherwise (shuttle checks schedules, not the memory model).
//!
//! Under loom each pointer is taken inside `with`/`with_mut`, so each deref of a guard is one
//! tracked access at the moment it is made (the reference handed out outlives the tracked
//! window, as it must for `Deref`). A race is always between two accesses, so tracking each
//! access at its moment is enough for loom to see it.

/// The protected value.
pub(crate) struct Cell<T> {
    #[cfg(feature = "loom")]
    inner: loom::cell::UnsafeCell<T>,
    #[cfg(not(feature = "loom"))]
    inner: std::cell::UnsafeCell<T>,
}

impl<T> Cell<T> {
    parkcheck::const_fn! {
        /// A cell holding `value` (`const` in the real build).
        pub(crate) fn new(value: T) -> Cell<T> {
            Cell {
                #[cfg(feature = "loom")]
                inner: loom::cell::UnsafeCell::new(value),
                #[cfg(not(feature = "loom"))]
                inner: std::cell::UnsafeCell::new(value),
            }
        }
    }

    /// The value, out of the cell.
    pub(crate) fn into_inner(self) -> T {
        self.inner.into_inner()
    }

    /// A pointer for reading the value; under loom, recorded as a read access now.
    pub(crate) fn read_ptr(&self) -> *const T {
        #[cfg(feature = "loom")]
        return self.inner.with(|p| p);
        #[cfg(not(feature = "loom"))]
        self.inner.get()
    }

    /// A pointer for writing the value; under loom, recorded as a write access now.
    pub(crate) fn write_ptr(&self) -> *mut T {
        #[cfg(feature = "loom")]
        return self.inner.with_mut(|p| p);
        #[cfg(not(feature = "loom"))]
        self.inner.get()
    }

    /// The value through an exclusive borrow of the cell (no other access can exist).
    pub(crate) fn get_mut(&mut self) -> &mut T {
        #[cfg(feature = "loom")]
        // SAFETY:
        // - `&mut self` proves no other reference to the value exists, so the pointer loom
        //   hands out for this tracked write may be turned into the one exclusive reference,
        //   which borrows `self` and so cannot outlive the cell.
        return self.inner.with_mut(|p| unsafe { &mut *p });
        #[cfg(not(feature = "loom"))]
        self.inner.get_mut()
    }
}
