//! The requests already recorded as served by an object in place
//! (`already-loaded`/`same-file` events), by (requester, name) fingerprint,
//! so that a program that opens the same library in a loop (cuDNN does)
//! costs one event.
//!
//! The question is asked on every re-open, right after the loader has
//! compared the name with every object of the namespace: with a thousand
//! objects that walk evicts the caches, and each line the shim touches
//! afterwards comes from far away (issue 10's dlopen-heavy program:
//! 5,500 L1 misses per bare re-open; a sorted list searched by halves cost
//! seven more). So the set is an open-addressed table of 64-bit
//! fingerprints, where a lookup reads one line, and the fingerprint is taken
//! a word at a time.

/// Slots in the table (a power of two); allocated at the first insertion.
const SLOTS: usize = 8192;
/// Entries kept before the set starts over (a repeat is then recorded again,
/// rather than later requests never being recorded): half the slots, so
/// that probes stay short.
const LIMIT: usize = SLOTS / 2;

use crate::lock::ForkSafeLock;
use core::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

/// The set. Asking reads it without a lock: a re-open in a loop on many
/// threads takes no lock at all. Adding takes one, and so does starting over.
/// A reader racing with a start-over may miss a key being cleared, and then
/// one more event is written for that pair: never a wrong answer the other
/// way, because a slot only ever holds a key that was added.
pub struct Reuses {
    /// `SLOTS` fingerprints (0: empty), allocated at the first insertion and
    /// never freed while the set lives: a reader may hold it at any time.
    table: AtomicPtr<AtomicU64>,
    /// Keys held, counted by whoever adds one.
    len: ForkSafeLock<usize>,
}

impl Reuses {
    pub const fn new() -> Self {
        Reuses {
            table: AtomicPtr::new(core::ptr::null_mut()),
            len: ForkSafeLock::new(0),
        }
    }

    fn slots(&self) -> Option<&[AtomicU64]> {
        let p = self.table.load(Ordering::Acquire);
        // SAFETY: published (Release) once fully zeroed, SLOTS long, freed
        // only by `drop`, which no reader can outlive.
        (!p.is_null()).then(|| unsafe { core::slice::from_raw_parts(p, SLOTS) })
    }

    /// The table, made at the first insertion (the caller holds `len`).
    fn allocate(&self) -> &[AtomicU64] {
        let t: Box<[AtomicU64]> = (0..SLOTS).map(|_| AtomicU64::new(0)).collect();
        let p = Box::into_raw(t) as *mut AtomicU64;
        self.table.store(p, Ordering::Release);
        // SAFETY: as in `slots`.
        unsafe { core::slice::from_raw_parts(p, SLOTS) }
    }

    /// Starts bringing `key`'s slot into the cache, for a [`contains`]
    /// after the loader's walk: asked before the walk (a request's start),
    /// the line stays in the second-level cache through it, where asked
    /// only after, it comes from memory (the table is 64 KiB, the walk over
    /// a thousand objects evicts it). A hint only: it reads nothing and
    /// cannot fault.
    ///
    /// [`contains`]: Reuses::contains
    pub fn prefetch(&self, key: u64) {
        let Some(t) = self.slots() else {
            return;
        };
        let slot: *const AtomicU64 = &t[home(t, key)];
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch hint on an address in the table.
        unsafe {
            core::arch::x86_64::_mm_prefetch(slot.cast::<i8>(), core::arch::x86_64::_MM_HINT_T0)
        };
        #[cfg(not(target_arch = "x86_64"))]
        let _ = slot;
    }

    pub fn contains(&self, key: u64) -> bool {
        self.slots().is_some_and(|t| find(t, key).is_ok())
    }

    /// Adds `key`; false if it was there already.
    pub fn insert(&self, key: u64) -> bool {
        self.len.with(|len| {
            let t = match self.slots() {
                Some(t) => t,
                None => self.allocate(),
            };
            if find(t, key).is_ok() {
                return false;
            }
            if *len >= LIMIT {
                t.iter().for_each(|k| k.store(0, Ordering::Relaxed));
                *len = 0;
            }
            let Err(at) = find(t, key) else {
                return false;
            };
            t[at].store(key, Ordering::Release);
            *len += 1;
            true
        })
    }
}

impl Drop for Reuses {
    fn drop(&mut self) {
        let p = *self.table.get_mut();
        if !p.is_null() {
            // SAFETY: allocated in `insert` as a boxed slice of SLOTS.
            drop(unsafe { Box::from_raw(core::ptr::slice_from_raw_parts_mut(p, SLOTS)) });
        }
    }
}

/// The slot where `key`'s probe starts (the table's length is a power of
/// two).
fn home(t: &[AtomicU64], key: u64) -> usize {
    key as usize & (t.len() - 1)
}

/// `Ok(slot)` holding `key`, or `Err(slot)`: the empty slot where it goes.
/// Linear probing. The table never holds more than `LIMIT` keys, half its
/// slots, so an empty slot ends every probe, even one racing with writers;
/// the bound is only there so that nothing can ever loop.
fn find(t: &[AtomicU64], key: u64) -> Result<usize, usize> {
    let mask = t.len() - 1;
    let mut at = home(t, key);
    for _ in 0..t.len() {
        match t[at].load(Ordering::Acquire) {
            0 => return Err(at),
            k if k == key => return Ok(at),
            _ => at = (at + 1) & mask,
        }
    }
    Err(at)
}

/// Fingerprint of (requester, name), never 0. Two pairs that share one would
/// make the second's reuse go unrecorded (about one chance in 2^64 / 4096
/// per pair, for a well-mixed 64-bit value).
pub fn fingerprint(requester: usize, name: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mix = |h: u64, w: u64| {
        let h = (h ^ w).wrapping_mul(K);
        h ^ (h >> 29)
    };
    let mut h = mix(requester as u64, name.len() as u64);
    let mut words = name.chunks_exact(8);
    for w in &mut words {
        h = mix(h, u64::from_le_bytes(w.try_into().unwrap_or_default()));
    }
    let mut tail = [0u8; 8];
    tail[..words.remainder().len()].copy_from_slice(words.remainder());
    h = mix(h, u64::from_le_bytes(tail));
    // fmix64 (MurmurHash3): every input bit reaches the low bits, which
    // pick the slot.
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^= h >> 33;
    h.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_is_new_once() {
        let r = Reuses::new();
        let a = fingerprint(1, b"libcudnn.so.9");
        assert!(!r.contains(a));
        assert!(r.insert(a));
        assert!(r.contains(a));
        assert!(!r.insert(a));
        // Another requester, or another name, is another pair.
        for other in [
            fingerprint(2, b"libcudnn.so.9"),
            fingerprint(1, b"libcudnn.so.8"),
        ] {
            assert_ne!(other, a);
            assert!(!r.contains(other));
        }
    }

    #[test]
    fn names_differing_anywhere_differ() {
        // Length, tail bytes and whole words all count.
        let names: [&[u8]; 6] = [
            b"",
            b"a",
            b"a\0",
            b"/lib/libcudnn.so.9",
            b"/lib/libcudnn.so.8",
            b"/lib/libcudnn_ops.so.9",
        ];
        let keys: Vec<u64> = names.iter().map(|n| fingerprint(7, n)).collect();
        for (i, a) in keys.iter().enumerate() {
            assert_ne!(*a, 0);
            for b in &keys[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }

    #[test]
    fn a_full_set_starts_over() {
        let r = Reuses::new();
        let keys: Vec<u64> = (0..LIMIT)
            .map(|i| fingerprint(i, b"libcublas.so.12"))
            .collect();
        for &k in &keys {
            assert!(r.insert(k));
        }
        assert!(keys.iter().all(|&k| r.contains(k)));
        let next = fingerprint(LIMIT, b"libcublas.so.12");
        assert!(r.insert(next));
        assert!(r.contains(next));
        assert_eq!(r.len.with(|n| *n), 1);
        assert!(!r.contains(keys[0]));
    }

    #[test]
    fn readers_racing_start_overs_neither_hang_nor_see_a_key_not_added() {
        // Writers start the set over several times while readers probe it
        // without the lock: every probe must end (a probe that never meets an
        // empty slot would hang this test), and a key never added must always
        // be absent (a slot holds only whole keys that were added).
        let r = Reuses::new();
        std::thread::scope(|s| {
            for w in 0..2usize {
                let r = &r;
                s.spawn(move || {
                    for i in 0..3 * LIMIT {
                        r.insert(fingerprint(i * 2 + w, b"libcudnn.so.9"));
                    }
                });
            }
            for _ in 0..2 {
                let r = &r;
                s.spawn(move || {
                    for i in 0..3 * LIMIT {
                        assert!(!r.contains(fingerprint(i, b"never added")));
                    }
                });
            }
        });
        assert!(r.len.with(|n| *n) <= LIMIT);
    }

    #[test]
    fn colliding_slots_probe_on() {
        // Keys that pick the same slot are all kept.
        let r = Reuses::new();
        let same_slot = [5u64, 5 + SLOTS as u64, 5 + 2 * SLOTS as u64];
        for k in same_slot {
            assert!(r.insert(k));
        }
        assert!(same_slot.iter().all(|&k| r.contains(k)));
        assert!(!r.contains(5 + 3 * SLOTS as u64));
    }
}
