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

#[derive(Default)]
pub struct Reuses {
    /// Fingerprints; 0 marks an empty slot (no fingerprint is 0).
    slots: Vec<u64>,
    len: usize,
}

impl Reuses {
    pub const fn new() -> Self {
        Reuses {
            slots: Vec::new(),
            len: 0,
        }
    }

    /// Whether `key` (a [`fingerprint`]) is in the set.
    pub fn contains(&self, key: u64) -> bool {
        self.find(key).is_ok()
    }

    /// Adds `key`; false when it was there already. A full set starts over
    /// with `key` alone.
    pub fn insert(&mut self, key: u64) -> bool {
        if self.find(key).is_ok() {
            return false;
        }
        if self.slots.is_empty() {
            self.slots = vec![0; SLOTS];
        } else if self.len >= LIMIT {
            self.slots.fill(0);
            self.len = 0;
        }
        let Err(at) = self.find(key) else {
            return false;
        };
        self.slots[at] = key;
        self.len += 1;
        true
    }

    /// `Ok(slot)` holding `key`, or `Err(slot)`: the empty slot where it goes
    /// (`Err(0)` before the table exists).
    fn find(&self, key: u64) -> Result<usize, usize> {
        if self.slots.is_empty() {
            return Err(0);
        }
        let mask = self.slots.len() - 1;
        let mut at = key as usize & mask;
        // Linear probing; the table is never more than half full, so an
        // empty slot ends every probe.
        loop {
            match self.slots[at] {
                0 => return Err(at),
                k if k == key => return Ok(at),
                _ => at = (at + 1) & mask,
            }
        }
    }
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
        let mut r = Reuses::new();
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
        let mut r = Reuses::new();
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
        assert_eq!(r.len, 1);
        assert!(!r.contains(keys[0]));
    }

    #[test]
    fn colliding_slots_probe_on() {
        // Keys that pick the same slot are all kept.
        let mut r = Reuses::new();
        let same_slot = [5u64, 5 + SLOTS as u64, 5 + 2 * SLOTS as u64];
        for k in same_slot {
            assert!(r.insert(k));
        }
        assert!(same_slot.iter().all(|&k| r.contains(k)));
        assert!(!r.contains(5 + 3 * SLOTS as u64));
    }
}
