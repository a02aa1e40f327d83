//! Text for a terminal: untrusted strings from traces escaped, shell
//! quoting, argv on one line, paths as the user would type them.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::Path;

/// Untrusted text from a trace (argv, paths, names, error texts), safe to
/// print on a terminal: control characters (C0 including newline and tab,
/// DEL, and C1 U+0080–U+009F) are written as `\x1b`, `\u{9b}`; the
/// bidirectional and invisible format characters a terminal shows out of
/// order or not at all (U+202E RIGHT-TO-LEFT OVERRIDE, U+200B, …:
/// `cudnn_trace_format::escape::invisible`) as `\u{202e}`; and a byte that
/// is not UTF-8 (`cudnn_trace_format::escape::RAW_BYTE_BASE`) as `\xff`.
pub fn esc(s: &str) -> Cow<'_, str> {
    escape_where(s, |_| true)
}

/// [`esc`] for text of several lines: newlines are kept.
pub fn esc_lines(s: &str) -> Cow<'_, str> {
    escape_where(s, |c| c != '\n')
}

fn escape_where(s: &str, escape: impl Fn(char) -> bool) -> Cow<'_, str> {
    use cudnn_trace_format::escape::{invisible, raw_byte};
    let bad = |c: char| ((c.is_control() || invisible(c)) && escape(c)) || raw_byte(c).is_some();
    if !s.chars().any(bad) {
        return Cow::Borrowed(s);
    }
    let mut t = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !bad(c) {
            t.push(c);
        } else if let Some(b) = raw_byte(c) {
            let _ = write!(t, "\\x{b:02x}");
        } else if (c as u32) < 0x80 {
            let _ = write!(t, "\\x{:02x}", c as u32);
        } else {
            let _ = write!(t, "\\u{{{:x}}}", c as u32);
        }
    }
    Cow::Owned(t)
}

/// Characters a POSIX shell takes literally outside quotes.
fn shell_plain(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c)
}

/// A shell word: as is when plain, else in single quotes (in which nothing
/// is special but the quote itself, written `'\''`).
pub fn sh_quote(v: &str) -> String {
    if !v.is_empty() && v.chars().all(shell_plain) {
        return v.to_string();
    }
    format!("'{}'", v.replace('\'', r"'\''"))
}

/// argv for one line: quoted where needed, cut at `max` characters.
pub fn argv_text(argv: &[String], max: usize) -> String {
    let s = argv
        .iter()
        .map(|a| sh_quote(a))
        .collect::<Vec<_>>()
        .join(" ");
    let s = s.replace(['\n', '\r', '\t'], " ");
    let s = esc(&s);
    if s.chars().count() > max {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    } else {
        s.into_owned()
    }
}

/// `s` with every path that starts with `prefix` (a directory, ending in
/// `/`) written `…/rest`: the summary's legend, applied to free text.
/// Only where a path starts: `/x/opt/a/` does not hold `/opt/a/`.
pub fn legend<'a>(s: &'a str, prefix: Option<&str>) -> Cow<'a, str> {
    let Some(pre) = prefix.filter(|p| p.len() > 1 && s.contains(*p)) else {
        return Cow::Borrowed(s);
    };
    let path_char = |c: char| c.is_alphanumeric() || "/._-+~@".contains(c);
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(pre) {
        let boundary = !rest[..i].chars().next_back().is_some_and(path_char);
        let after = &rest[i + pre.len()..];
        out.push_str(&rest[..i]);
        if boundary && !after.is_empty() && !after.starts_with(char::is_whitespace) {
            out.push_str("…/");
        } else {
            out.push_str(pre);
        }
        rest = after;
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// A path as the user would type it: relative to the current directory when
/// it is below it.
pub fn display_path(p: &Path) -> String {
    if let Ok(cwd) = std::env::current_dir() {
        if let Ok(rel) = p.strip_prefix(&cwd) {
            if !rel.as_os_str().is_empty() {
                return rel.display().to_string();
            }
        }
    }
    p.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv_abbreviation() {
        let v: Vec<String> = vec!["python".into(), "-c".into(), "print('hi there')".into()];
        assert_eq!(argv_text(&v, 100), r#"python -c 'print('\''hi there'\'')'"#);
        let long: Vec<String> = vec!["x".repeat(50), "y".repeat(50)];
        let t = argv_text(&long, 20);
        assert_eq!(t.chars().count(), 20);
        assert!(t.ends_with('…'));
    }

    #[test]
    fn legend_shortens_paths_where_they_start() {
        let p = Some("/opt/venv/lib/");
        assert_eq!(
            legend("remove /opt/venv/lib/a from X, or /opt/venv/lib/b", p),
            "remove …/a from X, or …/b"
        );
        assert_eq!(legend("/x/opt/venv/lib/a", p), "/x/opt/venv/lib/a");
        assert_eq!(
            legend("LD_LIBRARY_PATH=/opt/venv/lib/a:/opt/venv/lib/b", p),
            "LD_LIBRARY_PATH=…/a:…/b"
        );
        assert_eq!(legend("/opt/venv/lib/ itself", p), "/opt/venv/lib/ itself");
        assert!(matches!(legend("nothing", p), Cow::Borrowed(_)));
        assert_eq!(legend("/opt/venv/lib/a", None), "/opt/venv/lib/a");
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(esc("plain …/ü"), "plain …/ü");
        assert!(matches!(esc("plain"), Cow::Borrowed(_)));
        assert_eq!(esc("a\u{1b}[31mb\n\t\u{0}"), r"a\x1b[31mb\x0a\x09\x00");
        assert_eq!(
            esc("\u{7f}\u{80}\u{9b}\u{9f}\u{a0}"),
            "\\x7f\\u{80}\\u{9b}\\u{9f}\u{a0}"
        );
        assert_eq!(esc_lines("a\u{1b}\nb\r\n"), "a\\x1b\nb\\x0d\n");
    }

    #[test]
    fn bidi_invisible_and_raw_bytes_are_escaped() {
        let raw = cudnn_trace_format::escape::from_bytes(b"a\xffb");
        assert_eq!(esc(&raw), r"a\xffb");
        assert_eq!(esc("rtl\u{202e}txt\u{200b}"), r"rtl\u{202e}txt\u{200b}");
        assert_eq!(esc_lines("x\u{2066}\ny"), "x\\u{2066}\ny");
    }
}
