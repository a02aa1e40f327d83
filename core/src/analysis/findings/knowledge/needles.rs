//! The texts a message pattern cannot match without ("needles"), so that
//! recognising messages in a program's stderr compiles and runs only the
//! patterns that could match it. Compiling all of `frameworks.toml`'s
//! patterns cost about 67 M instructions (15–20 ms) at the end of every run
//! whose stderr was not blank (issue 10); looking for the needles costs a
//! few instructions per byte of stderr (`Knowledge::messages_possibly_in`).
//!
//! The needles are derived from the pattern itself (its syntax tree, as the
//! `regex` crate parses it), never written by hand: a set of strings such
//! that every match of the pattern contains at least one of them. `None`
//! when no such set is known (then the pattern is always run); a set is
//! never wrong, only more or less selective.
//!
//! This file is compiled twice: into the library, and into `core/build.rs`
//! (by `#[path]`), which embeds the needles of the built-in patterns; it may
//! use only `std` and `regex-syntax`.

use regex_syntax::hir::{Class, Hir, HirKind};

/// A pattern as the engine compiles it: multi-line, so that `^` and `$`
/// match at line ends in the multi-line stderr text.
pub fn multi_line(pattern: &str) -> String {
    format!("(?m){pattern}")
}

/// At most this many strings stand for one piece of a pattern (the cross
/// product of `[Cc]ould` and an alternation grows fast).
const MAX_SET: usize = 32;
/// A character class of at most this many characters is expanded.
const MAX_CLASS: usize = 4;

/// The needles of `pattern` (a complete regex, flags included): every match
/// contains one of them. `None` when the pattern does not parse or no
/// non-empty set is known.
pub fn of_pattern(pattern: &str) -> Option<Vec<Vec<u8>>> {
    let hir = regex_syntax::parse(pattern).ok()?;
    let mut set = required(&hir).filter(|set| usable(set))?;
    set.sort();
    set.dedup();
    Some(set)
}

/// A set every match of `h` contains a member of (as a substring).
fn required(h: &Hir) -> Option<Vec<Vec<u8>>> {
    if let Some(set) = finite(h).filter(|s| usable(s)) {
        return Some(set);
    }
    match h.kind() {
        HirKind::Capture(c) => required(&c.sub),
        HirKind::Repetition(r) if r.min >= 1 => required(&r.sub),
        HirKind::Alternation(alts) => {
            // Each branch must require something; a match is one branch's.
            let mut all = Vec::new();
            for a in alts {
                all.extend(required(a)?);
            }
            all.sort();
            all.dedup();
            Some(all)
        }
        HirKind::Concat(parts) => best(concat_candidates(parts)),
        _ => None,
    }
}

/// The sets a concatenation requires: each run of consecutive pieces of
/// finite language (their cross product: the text of the run is one of
/// them), and what each other piece requires on its own.
fn concat_candidates(parts: &[Hir]) -> Vec<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut run: Vec<Vec<u8>> = vec![Vec::new()];
    for p in parts {
        match finite(p) {
            Some(set) => match cross(&run, &set) {
                Some(longer) => run = longer,
                None => out.push(std::mem::replace(&mut run, set)),
            },
            None => {
                out.push(std::mem::replace(&mut run, vec![Vec::new()]));
                out.extend(required(p));
            }
        }
    }
    out.push(run);
    out.retain(|s| usable(s));
    out
}

/// The whole language of `h` when it is a small finite set of strings (a
/// superset of it for look-arounds, which match only the empty string).
fn finite(h: &Hir) -> Option<Vec<Vec<u8>>> {
    match h.kind() {
        HirKind::Empty | HirKind::Look(_) => Some(vec![Vec::new()]),
        HirKind::Literal(l) => Some(vec![l.0.to_vec()]),
        HirKind::Class(c) => class_members(c),
        HirKind::Capture(c) => finite(&c.sub),
        HirKind::Concat(parts) => parts
            .iter()
            .try_fold(vec![Vec::new()], |acc, p| cross(&acc, &finite(p)?)),
        HirKind::Alternation(alts) => {
            let mut all = Vec::new();
            for a in alts {
                all.extend(finite(a)?);
            }
            all.sort();
            all.dedup();
            (all.len() <= MAX_SET).then_some(all)
        }
        HirKind::Repetition(r) => {
            let max = r.max.filter(|&m| m <= 3)?;
            let one = finite(&r.sub)?;
            let mut all = Vec::new();
            let mut k_times = vec![Vec::new()];
            for k in 0..=max {
                if k >= r.min {
                    all.extend(k_times.iter().cloned());
                }
                k_times = cross(&k_times, &one)?;
            }
            all.sort();
            all.dedup();
            (all.len() <= MAX_SET).then_some(all)
        }
    }
}

/// The characters of a small class, each as its UTF-8 bytes (or bytes).
fn class_members(c: &Class) -> Option<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    match c {
        Class::Unicode(u) => {
            for r in u.ranges() {
                for ch in r.start()..=r.end() {
                    if out.len() == MAX_CLASS {
                        return None;
                    }
                    out.push(ch.to_string().into_bytes());
                }
            }
        }
        Class::Bytes(b) => {
            for r in b.ranges() {
                for byte in r.start()..=r.end() {
                    if out.len() == MAX_CLASS {
                        return None;
                    }
                    out.push(vec![byte]);
                }
            }
        }
    }
    Some(out)
}

/// Every `a` followed by every `b`, unless that is more than [`MAX_SET`].
fn cross(a: &[Vec<u8>], b: &[Vec<u8>]) -> Option<Vec<Vec<u8>>> {
    if a.len() * b.len() > MAX_SET {
        return None;
    }
    let mut out = Vec::with_capacity(a.len() * b.len());
    for x in a {
        for y in b {
            out.push([x.as_slice(), y.as_slice()].concat());
        }
    }
    Some(out)
}

/// A set that can stand as needles: not empty, no empty string in it (the
/// empty string is in every text).
fn usable(set: &[Vec<u8>]) -> bool {
    !set.is_empty() && set.iter().all(|s| !s.is_empty())
}

/// The most selective set: the longest shortest member, then the fewest.
fn best(candidates: Vec<Vec<Vec<u8>>>) -> Option<Vec<Vec<u8>>> {
    candidates.into_iter().max_by_key(|s| {
        let shortest = s.iter().map(Vec::len).min().unwrap_or(0);
        (shortest, std::cmp::Reverse(s.len()))
    })
}

#[cfg(test)]
mod tests {
    use super::of_pattern;

    fn needles(p: &str) -> Option<Vec<String>> {
        of_pattern(p).map(|set| {
            set.into_iter()
                .map(|s| String::from_utf8(s).unwrap())
                .collect()
        })
    }

    #[test]
    fn literal_runs_and_small_classes() {
        assert_eq!(
            needles(r"[Cc]ould not create cudnn handle: (?P<status>CUDNN_STATUS_\w+)"),
            Some(vec![
                "Could not create cudnn handle: ".into(),
                "could not create cudnn handle: ".into(),
            ])
        );
        // The literal after a variable prefix; look-arounds are no gap.
        assert_eq!(
            needles(r"(?m)^(?P<path>\S+\.so[.\d]*): undefined symbol: \b(?P<s>\w+)"),
            Some(vec![": undefined symbol: ".into()])
        );
        // Case-insensitive text is a class per letter: expanded while small.
        assert_eq!(needles(r"(?i)ab").map(|s| s.len()), Some(4));
    }

    #[test]
    fn alternations_need_a_needle_in_every_branch() {
        assert_eq!(
            needles(r"CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH|CUDNN_STATUS_VERSION_MISMATCH"),
            Some(vec![
                "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH".into(),
                "CUDNN_STATUS_VERSION_MISMATCH".into(),
            ])
        );
        // A branch with nothing required: no needle for the whole.
        assert_eq!(needles(r"error: \d+|\d+ failed|\w+"), None);
        // The most selective of the pieces: the longest shortest needle.
        assert_eq!(
            needles(r"(?:cuDNN error: \d+|\d+ failed) now"),
            Some(vec![" failed".into(), "cuDNN error: ".into()])
        );
        assert_eq!(
            needles(r"(?:error \d+|\d+ failed): CUDNN_"),
            Some(vec![": CUDNN_".into()])
        );
    }

    #[test]
    fn optional_and_repeated_parts() {
        assert_eq!(needles(r"\d+"), None);
        assert_eq!(needles(r"(?:abc)?"), None);
        assert_eq!(needles(r"(?:abc)*"), None);
        let around = needles(r"x(?:abc)*y").unwrap();
        assert!(around == ["x"] || around == ["y"], "{around:?}");
        assert_eq!(needles(r"(?:abc)+\d"), Some(vec!["abc".into()]));
        assert_eq!(needles(r"ab?c"), Some(vec!["abc".into(), "ac".into()]));
        assert_eq!(needles(r"(?:ab){2}"), Some(vec!["abab".into()]));
        assert_eq!(needles(r"not a (regex"), None);
    }

    /// Every match of each pattern contains one of its needles, in texts
    /// built to dodge them (the soundness the prefilter rests on).
    #[test]
    fn every_match_contains_a_needle() {
        let cases: &[(&str, &[&str])] = &[
            (r"(?i)could NOT load", &["COULD not LOAD", "could not load"]),
            (r"\ba(?:x|yz)?b\b", &["ab", "ayzb", "x axb"]),
            (r"(?:foo|)bar\s*\n\s*baz", &["bar\n baz", "foobar \nbaz"]),
            (r"v(?:\d|x){1,3}\.so", &["v1.so", "vxx9.so"]),
            (
                r"lib(?:cud|cublas)\w*\.so[.\d]*: cannot",
                &["libcudnn.so.9: cannot"],
            ),
        ];
        for (p, texts) in cases {
            let set = of_pattern(p).unwrap_or_else(|| panic!("{p}: no needles"));
            let re = regex::Regex::new(p).unwrap();
            for t in *texts {
                let m = re.find(t).unwrap_or_else(|| panic!("{p} must match {t:?}"));
                let found = m.as_str().as_bytes();
                assert!(
                    set.iter().any(|n| found.windows(n.len()).any(|w| w == n)),
                    "{p}: match {:?} has none of {set:?}",
                    m.as_str()
                );
            }
        }
    }
}
