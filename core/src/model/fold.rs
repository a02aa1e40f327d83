//! Repeated identical events, folded. A program that loads and unloads one
//! library a million times writes two million lines that differ only in
//! their `seq`, `t_ns` (and maybe `tid`); the model keeps each distinct
//! event once, with how often it happened and when it last did, so that the
//! memory a trace needs depends on what happened, not on how often.
//!
//! Two helpers: [`Folded`], an event with its count, and [`split_line`],
//! which finds the part of a line the shim writes that identifies an event
//! (everything but `seq`, `t_ns` and `tid`) without parsing it, so that a
//! repeat costs a hash lookup instead of a JSON parse.

use std::ops::{Deref, DerefMut};

/// An event and how many identical ones it stands for. It reads as the
/// event itself (`Deref`): the first occurrence, with its `seq` and `t_ns`.
#[derive(Debug, Clone)]
pub struct Folded<T> {
    pub ev: T,
    /// How many identical events (only `seq`, `t_ns`, `tid` differing) were
    /// folded into this one: 1 for an event seen once.
    pub count: u64,
    /// `seq` and `t_ns` of the last of them (the first's for one event).
    pub last_seq: u64,
    pub last_t_ns: u64,
}

impl<T> Folded<T> {
    /// One event seen once, at `seq` and `t_ns`.
    pub fn one(ev: T, seq: u64, t_ns: u64) -> Self {
        Folded {
            ev,
            count: 1,
            last_seq: seq,
            last_t_ns: t_ns,
        }
    }

    /// One more occurrence, at `seq` and `t_ns`.
    pub fn again(&mut self, seq: u64, t_ns: u64) {
        self.count += 1;
        // Lines of one file are in write order, and seq grows with it; a
        // file joined after a reopen could go back: keep the latest.
        if seq >= self.last_seq {
            self.last_seq = seq;
            self.last_t_ns = t_ns;
        }
    }
}

impl<T> Deref for Folded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.ev
    }
}

impl<T> DerefMut for Folded<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.ev
    }
}

/// What [`split_line`] found in a line laid out as the shim writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split<'a> {
    /// The event kind (`load`, `unload`, …).
    pub kind: &'a [u8],
    pub seq: u64,
    pub t_ns: u64,
    pub pid: u32,
    pub ppid: u32,
    pub tid: u32,
    /// A trailing `t_start_ns` (a load's search start), left out of `rest`.
    pub t_start_ns: Option<u64>,
    /// Everything after `tid`: with `kind`, what makes two events the
    /// same event (`pid` and `ppid` are the file's own).
    pub rest: &'a [u8],
}

/// Splits a line the shim wrote, `{"ev":"K","seq":N,"t_ns":N,"pid":N,
/// "ppid":N,"tid":N,…}` (docs/trace-format.md: this order is the shim's),
/// without parsing the rest. None for any other layout (a hand-written
/// trace, another writer): such a line is simply parsed and not folded.
pub fn split_line(line: &[u8]) -> Option<Split<'_>> {
    let s = line.strip_prefix(b"{\"ev\":\"")?;
    let end = memchr::memchr(b'"', s)?;
    let (kind, s) = (&s[..end], &s[end + 1..]);
    let (seq, s) = number(s, b",\"seq\":")?;
    let (t_ns, s) = number(s, b",\"t_ns\":")?;
    let (pid, s) = number(s, b",\"pid\":")?;
    let (ppid, s) = number(s, b",\"ppid\":")?;
    let (tid, rest) = number(s, b",\"tid\":")?;
    let tid = u32::try_from(tid).ok()?;
    let pid = u32::try_from(pid).ok()?;
    let ppid = u32::try_from(ppid).ok()?;
    // The key must be the whole rest of an object: a comma or the end.
    if !(rest.starts_with(b",") || rest.starts_with(b"}")) {
        return None;
    }
    let (rest, t_start_ns) = without_start_time(rest);
    Some(Split {
        kind,
        seq,
        t_ns,
        pid,
        ppid,
        tid,
        t_start_ns,
        rest,
    })
}

/// `rest` without a trailing `,"t_start_ns":N` (a load's search start, the
/// shim's last field), and N: a time, like `t_ns`, is no part of what
/// makes two events the same.
fn without_start_time(rest: &[u8]) -> (&[u8], Option<u64>) {
    const FIELD: &[u8] = b",\"t_start_ns\":";
    let Some(body) = rest.strip_suffix(b"}") else {
        return (rest, None);
    };
    let digits = body.iter().rev().take_while(|c| c.is_ascii_digit()).count();
    let head = &body[..body.len() - digits];
    // ASCII digits: valid UTF-8; a number past u64 is left in `rest`.
    let value = std::str::from_utf8(&body[head.len()..])
        .ok()
        .and_then(|n| n.parse::<u64>().ok());
    match (head.strip_suffix(FIELD), value) {
        (Some(key), Some(v)) => (key, Some(v)),
        _ => (rest, None),
    }
}

/// `field` then a decimal number (at most 19 digits: no overflow).
fn number<'a>(s: &'a [u8], field: &[u8]) -> Option<(u64, &'a [u8])> {
    let s = s.strip_prefix(field)?;
    let n = s.iter().take_while(|c| c.is_ascii_digit()).count();
    if n == 0 || n > 19 {
        return None;
    }
    let v = s[..n]
        .iter()
        .fold(0u64, |v, &c| v * 10 + u64::from(c - b'0'));
    Some((v, &s[n..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shim_line_splits_into_its_identity() {
        let l = br#"{"ev":"unload","seq":17,"t_ns":123456,"pid":42,"ppid":1,"tid":43,"path":"/l/libcudnn.so.9","lmid":0,"family":"cudnn"}"#;
        let s = split_line(l).unwrap();
        assert_eq!(s.kind, b"unload");
        assert_eq!((s.seq, s.t_ns, s.tid), (17, 123456, 43));
        assert_eq!(
            s.rest,
            br#","path":"/l/libcudnn.so.9","lmid":0,"family":"cudnn"}"#
        );
        // The same event later, from another thread: the same identity.
        let m = br#"{"ev":"unload","seq":99,"t_ns":999999,"pid":42,"ppid":1,"tid":44,"path":"/l/libcudnn.so.9","lmid":0,"family":"cudnn"}"#;
        assert_eq!(split_line(m).unwrap().rest, s.rest);
    }

    #[test]
    fn a_load_s_search_start_is_no_part_of_its_identity() {
        let a = br#"{"ev":"load","seq":5,"t_ns":900,"pid":42,"ppid":1,"tid":43,"path":"/l/libcudnn.so.9","new":true,"t_start_ns":800}"#;
        let b = br#"{"ev":"load","seq":9,"t_ns":1900,"pid":42,"ppid":1,"tid":43,"path":"/l/libcudnn.so.9","new":true,"t_start_ns":1700}"#;
        let c = br#"{"ev":"load","seq":9,"t_ns":1900,"pid":42,"ppid":1,"tid":43,"path":"/l/libcudnn.so.8","new":true,"t_start_ns":1700}"#;
        let key = |l: &[u8]| split_line(l).unwrap().rest.to_vec();
        assert_eq!(key(a), key(b));
        assert_ne!(key(a), key(c));
        assert_eq!(key(a), br#","path":"/l/libcudnn.so.9","new":true"#.to_vec());
    }

    #[test]
    fn other_layouts_are_not_split() {
        for l in [
            &br#"{"seq":1,"ev":"load","t_ns":1,"pid":1,"ppid":0,"tid":1}"#[..],
            br#"{"ev":"load","seq":1,"t_ns":1,"pid":1,"tid":1,"ppid":0}"#,
            br#"{"ev":"load","seq":-1,"t_ns":1,"pid":1,"ppid":0,"tid":1}"#,
            br#"{"ev":"load","seq":1,"t_ns":1,"pid":1,"ppid":0,"tid":1x}"#,
            br#"{"ev":"load","seq":99999999999999999999,"t_ns":1,"pid":1,"ppid":0,"tid":1}"#,
            br#"{"ev":"load","seq":1,"t_ns":1,"pid":1,"ppid":0,"tid":99999999999}"#,
            br#"{"ev":"load"#,
            b"",
        ] {
            assert_eq!(split_line(l), None, "{}", String::from_utf8_lossy(l));
        }
    }

    #[test]
    fn folded_counts_and_keeps_the_first_and_the_last() {
        let mut f = Folded::one("x", 5, 50);
        f.again(9, 90);
        f.again(7, 70);
        assert_eq!((f.count, f.last_seq, f.last_t_ns), (3, 9, 90));
        assert_eq!(*f, "x");
    }
}
