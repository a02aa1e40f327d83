//! The shim's memory allocator.
//!
//! The audit role runs in its own namespace with its own libc, and that libc
//! never learns that one of the program's threads exited: its malloc keeps a
//! per-thread cache and arena attachment for every thread that ever called
//! it, about 4 KB per thread (a server spawning a thread per request that
//! dlopens grew by 81 MB over 20,000 threads). So the shim does not use that
//! malloc: small blocks come from size-class free lists carved out of mmap'd
//! slabs, large ones straight from mmap, all under one fork-safe lock, with
//! nothing kept per thread.

use crate::lock::ForkSafeLock;
use core::alloc::{GlobalAlloc, Layout};

/// Size classes 16, 32, …, 4096 bytes.
const CLASSES: usize = 9;
const MIN_SHIFT: usize = 4;
const SLAB: usize = 64 * 1024;

struct Lists {
    free: [usize; CLASSES],
}

static LISTS: ForkSafeLock<Lists> = ForkSafeLock::new(Lists { free: [0; CLASSES] });

fn class_of(size: usize) -> Option<usize> {
    let size = size.max(1 << MIN_SHIFT).next_power_of_two();
    let shift = size.trailing_zeros() as usize;
    (shift - MIN_SHIFT < CLASSES).then_some(shift - MIN_SHIFT)
}

unsafe fn map(len: usize) -> *mut u8 {
    let p = libc::mmap(
        core::ptr::null_mut(),
        len,
        libc::PROT_READ | libc::PROT_WRITE,
        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
        -1,
        0,
    );
    if p == libc::MAP_FAILED {
        core::ptr::null_mut()
    } else {
        p.cast()
    }
}

pub struct ShimAlloc;

unsafe impl GlobalAlloc for ShimAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // A block of a class is aligned to its size (slabs are page aligned),
        // so asking for max(size, align) covers any alignment up to 4096.
        let want = layout.size().max(layout.align());
        let Some(c) = class_of(want) else {
            // Large: its own mapping, page aligned.
            return map(layout.size());
        };
        let size = 1usize << (c + MIN_SHIFT);
        LISTS.with(|l| {
            if l.free[c] == 0 {
                let slab = map(SLAB);
                if slab.is_null() {
                    return core::ptr::null_mut();
                }
                // Thread the new slab's blocks onto the free list.
                let n = SLAB / size;
                for i in (0..n).rev() {
                    let b = slab.add(i * size);
                    *(b as *mut usize) = l.free[c];
                    l.free[c] = b as usize;
                }
            }
            let b = l.free[c] as *mut u8;
            l.free[c] = *(b as *const usize);
            b
        })
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let want = layout.size().max(layout.align());
        match class_of(want) {
            None => {
                libc::munmap(ptr.cast(), layout.size());
            }
            Some(c) => LISTS.with(|l| {
                *(ptr as *mut usize) = l.free[c];
                l.free[c] = ptr as usize;
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        assert_eq!(class_of(1), Some(0));
        assert_eq!(class_of(16), Some(0));
        assert_eq!(class_of(17), Some(1));
        assert_eq!(class_of(4096), Some(8));
        assert_eq!(class_of(4097), None);
    }
}
