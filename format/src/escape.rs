//! Bytes made safe for a terminal or a log line: what the shim prints on a
//! program's stderr and the CLI prints in its summaries.
//!
//! A path, an argv element or a program's message can hold anything but
//! NUL: a newline (a forged second line), an escape sequence (colours, a
//! cursor move, a title change), a byte that is not UTF-8, or a Unicode
//! bidirectional control such as U+202E RIGHT-TO-LEFT OVERRIDE, which makes
//! a terminal show text in another order than it is (CVE-2021-42574,
//! "Trojan Source"). [`escape`] keeps printable text as it is and writes
//! every such character as a visible escape, so the output is one line of
//! valid UTF-8 whose meaning a reader can see.

/// Characters a terminal shows in another order or not at all: the
/// Unicode bidirectional formatting characters (UAX #9: LRM, RLM, ALM, the
/// embeddings, overrides and isolates) and the zero-width and invisible
/// format characters that can hide text (ZWSP, ZWNJ, ZWJ, word joiner,
/// BOM).
pub fn invisible(c: char) -> bool {
    matches!(
        c,
        '\u{061c}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{feff}'
    )
}

/// Bytes that are not UTF-8 in a Rust `String` read from a trace: the
/// reader turns the trace's `\udcNN` escape ([`crate::json`]) into the
/// character `U+10FF00 + NN` (Supplementary Private Use Area-B, which no
/// path uses), so that text stays a `String` and every byte survives:
/// [`to_bytes`] gives the bytes back, [`escape`] shows `\xNN`, and the
/// CLI's JSON output writes `\udcNN` again.
pub const RAW_BYTE_BASE: u32 = 0x10_ff00;

/// The byte a character of [`RAW_BYTE_BASE`] stands for.
pub fn raw_byte(c: char) -> Option<u8> {
    let v = (c as u32).checked_sub(RAW_BYTE_BASE)?;
    (0x80..=0xff).contains(&v).then_some(v as u8)
}

/// `bytes` as a `String`: valid UTF-8 as it is, each other byte as its
/// [`RAW_BYTE_BASE`] character.
pub fn from_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for &b in chunk.invalid() {
            out.extend(char::from_u32(RAW_BYTE_BASE + u32::from(b)));
        }
    }
    out
}

/// The bytes a `String` from [`from_bytes`] (or the trace reader) stands
/// for: a path to open, an argument to pass.
pub fn to_bytes(s: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    for c in s.chars() {
        match raw_byte(c) {
            Some(b) => out.push(b),
            None => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    out
}

/// `bytes` as one line of printable UTF-8: `\n`, `\r`, `\t` and `\\` for
/// those, `\xNN` for other control bytes (C0, DEL) and for bytes that are
/// not UTF-8, `\u{NNNN}` for C1 controls and the characters of
/// [`invisible`]. Everything else, any script included, is kept.
pub fn escape(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\\' => out.push_str("\\\\"),
                c if (c as u32) < 0x20 || c == '\u{7f}' => {
                    out.push_str(&format!("\\x{:02x}", c as u32))
                }
                c if ('\u{80}'..='\u{9f}').contains(&c) || invisible(c) => {
                    out.push_str(&format!("\\u{{{:04x}}}", c as u32))
                }
                c => match raw_byte(c) {
                    Some(b) => out.push_str(&format!("\\x{b:02x}")),
                    None => out.push(c),
                },
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{escape, from_bytes, to_bytes};

    #[test]
    fn printable_text_is_kept() {
        assert_eq!(escape(b"/opt/cudnn 9/lib"), "/opt/cudnn 9/lib");
        assert_eq!(escape("/données/モデル".as_bytes()), "/données/モデル");
    }

    #[test]
    fn controls_bytes_and_bidi_are_escaped() {
        assert_eq!(
            escape(b"a\nb\x1b[31mc\xff\\d\te"),
            "a\\nb\\x1b[31mc\\xff\\\\d\\te"
        );
        assert_eq!(
            escape("x\u{202e}y\u{2066}z".as_bytes()),
            "x\\u{202e}y\\u{2066}z"
        );
        assert_eq!(escape("\u{85}\u{7f}".as_bytes()), "\\u{0085}\\x7f");
        // A truncated multi-byte sequence is bytes, not a character.
        assert_eq!(escape(b"\xe2\x80"), "\\xe2\\x80");
    }

    #[test]
    fn bytes_survive_a_string() {
        let b = b"caf\xc3\xa9 \xff\xfe/x";
        let s = from_bytes(b);
        assert_eq!(to_bytes(&s), b);
        assert!(s.starts_with("caf\u{e9} "));
        assert_eq!(escape(s.as_bytes()), "caf\u{e9} \\xff\\xfe/x");
        assert_eq!(from_bytes("plain ü".as_bytes()), "plain ü");
    }

    #[test]
    fn the_result_is_one_line() {
        let all: Vec<u8> = (0..=255u8).collect();
        let e = escape(&all);
        assert!(!e.contains('\n') && !e.contains('\u{1b}') && !e.contains('\u{7f}'));
        assert!(e.chars().all(|c| !c.is_control()));
    }
}
