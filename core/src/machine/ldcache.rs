//! The ld.so cache (`/etc/ld.so.cache`, else `ldconfig -p`): the
//! `(name, path)` pairs the loader consults after `LD_LIBRARY_PATH` and
//! RUNPATH.

/// The cache as `(name, path)` pairs: the file parsed, else `ldconfig -p`,
/// else empty.
pub fn read() -> Vec<(String, String)> {
    // Refuse anything but a regular file (a FIFO would block).
    let ok = std::fs::metadata("/etc/ld.so.cache").is_ok_and(|m| m.is_file() && m.len() < 64 << 20);
    let parsed = if ok {
        std::fs::read("/etc/ld.so.cache")
            .ok()
            .and_then(|b| parse_ld_cache(&b))
    } else {
        None
    };
    parsed.or_else(ldconfig_p).unwrap_or_default()
}

/// Parses `/etc/ld.so.cache` in glibc's "new" format (`glibc-ld.so.cache1.1`,
/// the only one written since glibc 2.32), also when it follows an old-format
/// (`ld.so-1.7.0`) table. Returns None when the bytes are not such a cache.
///
/// Layout (glibc `dl-cache.h`): 20-byte magic+version, nlibs u32,
/// len_strings u32, flags u8, 3 padding, extension_offset u32, 3 unused u32
/// (48 bytes), then nlibs entries of 24 bytes: flags i32, key u32, value u32,
/// osversion u32, hwcap u64. key/value are offsets of NUL-terminated strings
/// from the start of the new-format header.
pub fn parse_ld_cache(b: &[u8]) -> Option<Vec<(String, String)>> {
    const NEW: &[u8] = b"glibc-ld.so.cache1.1";
    const OLD: &[u8] = b"ld.so-1.7.0";
    let start = if b.starts_with(NEW) {
        0
    } else if b.starts_with(OLD) {
        // Old header: magic (11) + pad to 12 + nlibs u32; entries of 12 bytes;
        // the new table follows, 8-aligned.
        let n = u32::from_le_bytes(b.get(12..16)?.try_into().ok()?) as usize;
        let end = 16usize.checked_add(n.checked_mul(12)?)?;
        let aligned = (end + 7) & !7;
        if b.get(aligned..)?.starts_with(NEW) {
            aligned
        } else {
            return None;
        }
    } else {
        return None;
    };
    let h = b.get(start..)?;
    let u32_at =
        |o: usize| -> Option<u32> { Some(u32::from_le_bytes(h.get(o..o + 4)?.try_into().ok()?)) };
    let nlibs = u32_at(20)? as usize;
    if nlibs > 1_000_000 {
        return None;
    }
    let string = |off: u32| -> Option<String> {
        let s = h.get(off as usize..)?;
        let end = s.iter().position(|&c| c == 0)?;
        std::str::from_utf8(&s[..end]).ok().map(str::to_string)
    };
    let mut out = Vec::with_capacity(nlibs);
    for i in 0..nlibs {
        let e = 48 + i * 24;
        let key = u32_at(e + 4)?;
        let value = u32_at(e + 8)?;
        if let (Some(k), Some(v)) = (string(key), string(value)) {
            out.push((k, v));
        }
    }
    Some(out)
}

/// `ldconfig -p`, parsed, when the cache file could not be read.
pub(crate) fn ldconfig_p() -> Option<Vec<(String, String)>> {
    for prog in ["/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"] {
        let Ok(out) = std::process::Command::new(prog)
            .arg("-p")
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
        else {
            continue;
        };
        if !out.status.success() {
            continue;
        }
        return Some(parse_ldconfig_p(&String::from_utf8_lossy(&out.stdout)));
    }
    None
}

/// `\tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1` lines.
pub fn parse_ldconfig_p(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| {
            let (left, path) = l.split_once(" => ")?;
            let name = left.trim().split(' ').next()?;
            Some((name.to_string(), path.trim().to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn real_ld_cache_matches_ldconfig() {
        let Ok(bytes) = std::fs::read("/etc/ld.so.cache") else {
            return; // no cache on this machine
        };
        let parsed = parse_ld_cache(&bytes).expect("a glibc ld.so.cache");
        assert!(!parsed.is_empty());
        if let Some(p) = ldconfig_p() {
            let a: BTreeSet<_> = parsed.iter().collect();
            let b: BTreeSet<_> = p.iter().collect();
            assert_eq!(a, b);
        }
        assert!(parsed
            .iter()
            .all(|(n, p)| n.contains(".so") && p.starts_with('/')));
        assert!(!read().is_empty());
    }

    #[test]
    fn cache_parser_refuses_garbage() {
        assert!(parse_ld_cache(b"").is_none());
        assert!(parse_ld_cache(b"hello").is_none());
        let mut b = b"glibc-ld.so.cache1.1".to_vec();
        b.extend_from_slice(&5u32.to_le_bytes()); // 5 entries, no data
        assert!(parse_ld_cache(&b).is_none());
        // A well-formed one-entry cache.
        let mut c = b"glibc-ld.so.cache1.1".to_vec();
        c.extend_from_slice(&1u32.to_le_bytes());
        c.extend_from_slice(&[0u8; 24]); // len_strings, flags, pad, ext, unused
        let strings = 48 + 24;
        let mut e = Vec::new();
        e.extend_from_slice(&0x303i32.to_le_bytes());
        e.extend_from_slice(&(strings as u32).to_le_bytes());
        e.extend_from_slice(&(strings as u32 + 10).to_le_bytes());
        e.extend_from_slice(&[0u8; 12]);
        c.extend_from_slice(&e);
        c.extend_from_slice(b"libx.so.1\0/l/libx.so.1\0");
        assert_eq!(
            parse_ld_cache(&c).unwrap(),
            vec![("libx.so.1".to_string(), "/l/libx.so.1".to_string())]
        );
        assert_eq!(
            parse_ldconfig_p("2 libs found\n\tlibz.so.1 (libc6,x86-64) => /lib/libz.so.1\n"),
            vec![("libz.so.1".to_string(), "/lib/libz.so.1".to_string())]
        );
    }
}
