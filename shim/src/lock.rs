//! A tiny lock that a forked child can always take.
//!
//! `std::sync::Mutex` would deadlock a child forked while another thread of
//! the parent held it (the holder does not exist in the child). This lock
//! records the holder's pid: a child that finds it held by a pid that is not
//! its own knows the holder is gone and takes it over. It is held only for
//! short bookkeeping, never across a call into the loader or the program.

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicU32, Ordering};

pub struct ForkSafeLock<T> {
    holder: AtomicU32,
    value: UnsafeCell<T>,
}

// SAFETY: access to `value` is serialised by `holder` (see `with`).
unsafe impl<T: Send> Sync for ForkSafeLock<T> {}

impl<T> ForkSafeLock<T> {
    pub const fn new(value: T) -> Self {
        ForkSafeLock {
            holder: AtomicU32::new(0),
            value: UnsafeCell::new(value),
        }
    }

    /// Runs `f` with exclusive access. Must not be re-entered on one thread
    /// (it would spin forever); callers keep `f` free of callbacks.
    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let me = crate::trace::pid();
        loop {
            match self
                .holder
                .compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) => break,
                // Held by a thread of another process image: we are a forked
                // child and that thread is gone. Take the lock over.
                Err(h) if h != me => {
                    if self
                        .holder
                        .compare_exchange(h, me, Ordering::Acquire, Ordering::Relaxed)
                        .is_ok()
                    {
                        break;
                    }
                }
                Err(_) => std::thread::yield_now(),
            }
        }
        // SAFETY: we hold the lock.
        let r = f(unsafe { &mut *self.value.get() });
        self.holder.store(0, Ordering::Release);
        r
    }
}
