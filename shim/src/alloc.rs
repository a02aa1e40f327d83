//! The shim's memory allocator.
//!
//! The audit role runs in its own namespace with its own libc, and that libc
//! never learns that one of the program's threads exited: its malloc keeps a
//! per-thread cache and arena attachment for every thread that ever called
//! it, about 4 KB per thread (a server spawning a thread per request that
//! dlopens grew by 81 MB over 20,000 threads). So the shim does not use that
//! malloc: small blocks come from lock-free size-class free lists carved out
//! of mmap'd slabs, large ones straight from mmap, with nothing per thread.
//!
//! Lock-free rather than locked: a lock here would cost a system call per
//! allocation to stay safe in a child forked while another thread held it
//! (see `lock.rs`); a compare-and-swap list cannot be left held. A class
//! with nothing freed takes its next never-used block from its newest slab
//! ([`FRESH`]), and slabs come the same way from arenas mapped a megabyte at
//! a time ([`ARENA`]), so only the memory really used is ever touched and a
//! process's start-up maps once. Slabs are never unmapped, so reading a
//! block's link is always safe, and a generation count in the head's upper
//! bits defeats ABA.

use core::alloc::{GlobalAlloc, Layout};
use core::sync::atomic::{AtomicU64, Ordering};

/// Size classes 16, 32, …, 4096 bytes.
const CLASSES: usize = 9;
const MIN_SHIFT: usize = 4;
const SLAB: usize = 64 * 1024;
/// User-space addresses fit in 48 bits on x86_64 and aarch64 (4-level
/// paging); the upper 16 bits of a list head count updates.
const ADDR_BITS: u32 = 48;
const ADDR_MASK: u64 = (1 << ADDR_BITS) - 1;

/// Head of each class's free list: block address | generation << 48.
static HEADS: [AtomicU64; CLASSES] = [const { AtomicU64::new(0) }; CLASSES];

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
    if p == libc::MAP_FAILED || (p as u64) & !ADDR_MASK != 0 {
        core::ptr::null_mut()
    } else {
        p.cast()
    }
}

/// Pushes the chain `first..=last` (already linked) onto class `c`.
unsafe fn push_chain(c: usize, first: *mut u8, last: *mut u8) {
    let head = &HEADS[c];
    let mut cur = head.load(Ordering::Acquire);
    loop {
        *(last as *mut u64) = cur & ADDR_MASK;
        let next = (first as u64) | ((cur >> ADDR_BITS).wrapping_add(1) << ADDR_BITS);
        match head.compare_exchange_weak(cur, next, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return,
            Err(seen) => cur = seen,
        }
    }
}

unsafe fn pop(c: usize) -> *mut u8 {
    let head = &HEADS[c];
    let mut cur = head.load(Ordering::Acquire);
    loop {
        let block = cur & ADDR_MASK;
        if block == 0 {
            return core::ptr::null_mut();
        }
        // The block may be popped and reused by another thread meanwhile:
        // its memory stays mapped, and the generation makes the CAS fail.
        let next = core::ptr::read_volatile(block as *const u64) & ADDR_MASK;
        let new = next | ((cur >> ADDR_BITS).wrapping_add(1) << ADDR_BITS);
        match head.compare_exchange_weak(cur, new, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return block as *mut u8,
            Err(seen) => cur = seen,
        }
    }
}

/// Per class, the next never-used block of the class's newest slab, or 0
/// when it is used up. Blocks are handed out from there one at a time, so a
/// slab's pages are touched (and become the process's private memory) only
/// as its blocks are used: linking a whole new slab into the free list at
/// once cost 64 KiB of private memory per size class in every traced
/// process (issue 10). Slabs are aligned to their size, so the block after
/// the last one is at a multiple of [`SLAB`].
static FRESH: [AtomicU64; CLASSES] = [const { AtomicU64::new(0) }; CLASSES];

/// Slabs are carved from arenas of this many bytes, each one mapping
/// aligned to its size. A traced process's start-up touches about eight
/// size classes: one mapping (and the two trims that align it) instead of
/// a mapping and two trims per slab, 3 system calls instead of about 17 in
/// every traced process. An arena's slabs that are never used cost no
/// memory (their pages are never touched).
const ARENA: usize = 16 * SLAB;

/// The next never-used slab of the newest arena, or 0 (see [`FRESH`]).
static ARENA_NEXT: AtomicU64 = AtomicU64::new(0);

/// `size` bytes aligned to `size` (a power of two), or null.
unsafe fn map_aligned(size: usize) -> *mut u8 {
    let p = map(2 * size);
    if p.is_null() {
        return p;
    }
    let start = p as usize;
    let aligned = (start + size - 1) & !(size - 1);
    let head = aligned - start;
    if head > 0 {
        libc::munmap(p.cast(), head);
    }
    let tail = size - head;
    if tail > 0 {
        libc::munmap((aligned + size) as *mut libc::c_void, tail);
    }
    aligned as *mut u8
}

unsafe fn map_arena() -> *mut u8 {
    map_aligned(ARENA)
}

/// A new slab of `SLAB` bytes aligned to `SLAB`, or null.
unsafe fn map_slab() -> *mut u8 {
    bump(&ARENA_NEXT, SLAB, ARENA, map_arena)
}

/// The next fresh block of class `c` (of `size` bytes), mapping a new slab
/// when the class has none left.
unsafe fn fresh(c: usize, size: usize) -> *mut u8 {
    bump(&FRESH[c], size, SLAB, map_slab)
}

/// The next `unit` bytes of the region `cell` points into, or of a new one
/// from `new_region` when it is used up (`cell` 0). Regions are `region`
/// bytes aligned to `region`, so the unit after a region's last one is at a
/// multiple of `region`.
unsafe fn bump(
    cell: &AtomicU64,
    unit: usize,
    region: usize,
    new_region: unsafe fn() -> *mut u8,
) -> *mut u8 {
    let after = |at: u64| {
        let next = at + unit as u64;
        if next.is_multiple_of(region as u64) {
            0
        } else {
            next
        }
    };
    loop {
        let cur = cell.load(Ordering::Acquire);
        if cur == 0 {
            let fresh = new_region();
            if fresh.is_null() {
                return fresh;
            }
            // The first unit is ours; the rest are fresh for everyone.
            match cell.compare_exchange(0, after(fresh as u64), Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return fresh,
                Err(_) => {
                    // Another thread published a region meanwhile. (A slab
                    // given back this way leaves a hole in its arena, which
                    // is never handed out again.)
                    libc::munmap(fresh.cast(), region);
                    continue;
                }
            }
        }
        // No ABA: a region's fresh pointer only grows, and a used-up region
        // is never handed out again (regions are never unmapped once
        // published).
        if cell
            .compare_exchange_weak(cur, after(cur), Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            return cur as *mut u8;
        }
    }
}

pub struct ShimAlloc;

unsafe impl GlobalAlloc for ShimAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // A block of a class is aligned to its size (slabs are aligned to
        // theirs), so asking for max(size, align) covers any alignment up
        // to 4096.
        let want = layout.size().max(layout.align());
        let Some(c) = class_of(want) else {
            // Large: its own mapping, page aligned.
            return map(layout.size());
        };
        let b = pop(c);
        if !b.is_null() {
            return b;
        }
        fresh(c, 1usize << (c + MIN_SHIFT))
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let want = layout.size().max(layout.align());
        match class_of(want) {
            None => {
                libc::munmap(ptr.cast(), layout.size());
            }
            Some(c) => push_chain(c, ptr, ptr),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_blocks_are_distinct_aligned_and_span_slabs() {
        // SAFETY: blocks of a class we only compare and write to.
        unsafe {
            let c = 8; // 4096-byte blocks: 16 per slab.
            let mut seen = Vec::new();
            for _ in 0..40 {
                let b = fresh(c, 4096);
                assert!(!b.is_null());
                assert_eq!(b as usize % 4096, 0);
                b.write_bytes(0xa5, 4096);
                seen.push(b as usize);
            }
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), 40);
        }
    }

    #[test]
    fn slabs_are_aligned_distinct_and_come_from_arenas() {
        // SAFETY: slabs we only compare and write to.
        unsafe {
            let mut seen = Vec::new();
            for _ in 0..(2 * ARENA / SLAB + 3) {
                let s = map_slab();
                assert!(!s.is_null());
                assert_eq!(s as usize % SLAB, 0);
                s.write_bytes(0x5a, SLAB);
                seen.push(s as usize);
            }
            // Slabs are handed out in order through an arena: most come
            // right after the one before (not all: other tests' threads may
            // take some meanwhile). Mappings of their own would not: the
            // kernel places each new mapping below the last.
            let n = seen.len();
            let next = seen.windows(2).filter(|w| w[1] == w[0] + SLAB).count();
            assert!(next >= n / 2, "{next} of {n} slabs follow the one before");
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), n);
            // Slabs of one arena are neighbours: far fewer arenas than
            // slabs.
            let mut arenas: Vec<usize> = seen.iter().map(|s| s / ARENA).collect();
            arenas.dedup();
            let a = arenas.len();
            assert!(a <= n / 4, "{a} arenas for {n} slabs");
        }
    }

    /// `bump` on a region provider of the test's own: one new region per
    /// `region / unit` units, handed out in order, none twice.
    #[test]
    fn bump_carves_each_region_in_order_before_taking_another() {
        static REGIONS: AtomicU64 = AtomicU64::new(0);
        unsafe fn region() -> *mut u8 {
            REGIONS.fetch_add(1, Ordering::Relaxed);
            map_aligned(ARENA)
        }
        let cell = AtomicU64::new(0);
        let per = ARENA / SLAB;
        // SAFETY: slabs of our own regions, only compared.
        let got: Vec<usize> = (0..2 * per + 3)
            .map(|_| unsafe { bump(&cell, SLAB, ARENA, region) } as usize)
            .collect();
        assert_eq!(REGIONS.load(Ordering::Relaxed), 3);
        for (i, w) in got.windows(2).enumerate() {
            if (i + 1) % per == 0 {
                assert_eq!(w[1] % ARENA, 0, "slab {} starts a region", i + 1);
            } else {
                assert_eq!(w[1], w[0] + SLAB, "slab {} follows the one before", i + 1);
            }
        }
        assert_eq!(got[0] % ARENA, 0);
    }

    #[test]
    fn classes() {
        assert_eq!(class_of(1), Some(0));
        assert_eq!(class_of(16), Some(0));
        assert_eq!(class_of(17), Some(1));
        assert_eq!(class_of(4096), Some(8));
        assert_eq!(class_of(4097), None);
    }
}
