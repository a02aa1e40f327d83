//! A tiny JSON object writer for one event line.
//!
//! The shim formats an event into a byte buffer with this writer and hands
//! the finished line to a single `write(2)`. It never panics and does not
//! allocate beyond the buffer it is given to grow. Strings are escaped per
//! RFC 8259. Linux paths and arguments are bytes: valid UTF-8 is written as
//! it is, and each byte that is not part of valid UTF-8 as the escape
//! `\udcNN` (NN its value, 80 to ff): a lone low surrogate, the code
//! Python's `surrogateescape` and PEP 383 use for such bytes, so that
//! `os.fsencode(json.loads(line)["path"])` gives the bytes back, and the
//! typed reader ([`crate::read`]) does too. No valid UTF-8 text produces
//! that escape, so nothing is ambiguous.

/// Builds one JSON object (one trace line) into a `Vec<u8>`.
pub struct Line<'a> {
    buf: &'a mut Vec<u8>,
    first: bool,
}

impl<'a> Line<'a> {
    /// Starts a line; clears `buf`.
    pub fn new(buf: &'a mut Vec<u8>) -> Self {
        buf.clear();
        buf.push(b'{');
        Line { buf, first: true }
    }

    /// Starts a list of fields without the object's braces (clears `buf`):
    /// fields rendered once and inserted into several lines with [`Line::raw`].
    pub fn fields(buf: &'a mut Vec<u8>) -> Self {
        buf.clear();
        Line { buf, first: true }
    }

    /// Appends fields rendered by [`Line::fields`] (nothing when empty).
    pub fn raw(&mut self, fields: &[u8]) -> &mut Self {
        if fields.is_empty() {
            return self;
        }
        if !self.first {
            self.buf.push(b',');
        }
        self.first = false;
        self.buf.extend_from_slice(fields);
        self
    }

    fn key(&mut self, k: &str) {
        if !self.first {
            self.buf.push(b',');
        }
        self.first = false;
        write_str(self.buf, k.as_bytes());
        self.buf.push(b':');
    }

    pub fn str(&mut self, k: &str, v: &str) -> &mut Self {
        self.bytes(k, v.as_bytes())
    }

    /// A string value from raw bytes (a path): bytes that are not UTF-8 are
    /// written as `\udcNN` (see the module docs).
    pub fn bytes(&mut self, k: &str, v: &[u8]) -> &mut Self {
        self.key(k);
        write_str(self.buf, v);
        self
    }

    /// A string, or `null` when absent.
    pub fn opt_bytes(&mut self, k: &str, v: Option<&[u8]>) -> &mut Self {
        match v {
            Some(v) => self.bytes(k, v),
            None => self.null(k),
        }
    }

    /// A string, or `null` when absent.
    pub fn opt_str(&mut self, k: &str, v: Option<&str>) -> &mut Self {
        self.opt_bytes(k, v.map(str::as_bytes))
    }

    /// A number, or `null` when absent.
    pub fn opt_i64(&mut self, k: &str, v: Option<i64>) -> &mut Self {
        match v {
            Some(v) => self.i64(k, v),
            None => self.null(k),
        }
    }

    /// A number, or `null` when absent.
    pub fn opt_u64(&mut self, k: &str, v: Option<u64>) -> &mut Self {
        match v {
            Some(v) => self.u64(k, v),
            None => self.null(k),
        }
    }

    pub fn u64(&mut self, k: &str, v: u64) -> &mut Self {
        self.key(k);
        write_u64(self.buf, v);
        self
    }

    /// A number followed by spaces up to `width` bytes in all (JSON allows
    /// whitespace after a value): a field that can be rewritten in place,
    /// on disk, without moving what follows it.
    pub fn padded_u64(&mut self, k: &str, v: u64, width: usize) -> &mut Self {
        self.key(k);
        let start = self.buf.len();
        write_u64(self.buf, v);
        while self.buf.len() < start + width {
            self.buf.push(b' ');
        }
        self
    }

    pub fn i64(&mut self, k: &str, v: i64) -> &mut Self {
        self.key(k);
        if v < 0 {
            self.buf.push(b'-');
        }
        write_u64(self.buf, v.unsigned_abs());
        self
    }

    pub fn bool(&mut self, k: &str, v: bool) -> &mut Self {
        self.key(k);
        self.buf
            .extend_from_slice(if v { b"true" } else { b"false" });
        self
    }

    pub fn null(&mut self, k: &str) -> &mut Self {
        self.key(k);
        self.buf.extend_from_slice(b"null");
        self
    }

    /// An array of strings.
    pub fn str_array<'i, I: IntoIterator<Item = &'i [u8]>>(
        &mut self,
        k: &str,
        items: I,
    ) -> &mut Self {
        self.key(k);
        self.buf.push(b'[');
        for (i, s) in items.into_iter().enumerate() {
            if i > 0 {
                self.buf.push(b',');
            }
            write_str(self.buf, s);
        }
        self.buf.push(b']');
        self
    }

    /// A nested value written by `f` (an object or array built with [`Line`]
    /// helpers on the same buffer via [`Nested`]).
    pub fn nested(&mut self, k: &str, f: impl FnOnce(&mut Nested<'_>)) -> &mut Self {
        self.key(k);
        let mut n = Nested { buf: self.buf };
        f(&mut n);
        self
    }

    /// Finishes the object and appends the newline. The buffer then holds
    /// exactly one trace line.
    pub fn finish(self) {
        self.buf.extend_from_slice(b"}\n");
    }
}

/// Writer for nested arrays and objects inside a [`Line`].
pub struct Nested<'a> {
    buf: &'a mut Vec<u8>,
}

impl Nested<'_> {
    /// Writes an array whose elements are objects, each built by `each`.
    pub fn array_of_objects<T>(&mut self, items: &[T], mut each: impl FnMut(&mut Line<'_>, &T)) {
        self.buf.push(b'[');
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.buf.push(b',');
            }
            self.buf.push(b'{');
            let mut obj = Line {
                buf: self.buf,
                first: true,
            };
            each(&mut obj, item);
            self.buf.push(b'}');
        }
        self.buf.push(b']');
    }

    /// Writes an object whose members are built by `f`.
    pub fn object(&mut self, f: impl FnOnce(&mut Line<'_>)) {
        self.buf.push(b'{');
        let mut obj = Line {
            buf: self.buf,
            first: true,
        };
        f(&mut obj);
        self.buf.push(b'}');
    }
}

fn write_u64(buf: &mut Vec<u8>, mut v: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    buf.extend_from_slice(&tmp[i..]);
}

/// Whether every byte of `s` is printable ASCII other than `"` and `\\`,
/// so that it goes into a JSON string as it is. Eight bytes at a time: the
/// shim writes every path of every event through here (issue 10: a byte at
/// a time, with UTF-8 validation, was about 14,000 instructions an event).
fn plain_ascii(s: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // A byte of `w` below `n` (n <= 128), exactly (Hacker's Delight 6-1).
    let below = |w: u64, n: u64| w.wrapping_sub(ONES * n) & !w & HIGH;
    let zero = |w: u64| below(w, 1);
    let needs_escape = |w: u64| {
        below(w, 0x20)
            | zero(w ^ (ONES * b'"' as u64))
            | zero(w ^ (ONES * b'\\' as u64))
            | zero(w ^ (ONES * 0x7f))
            | (w & HIGH)
    };
    let mut words = s.chunks_exact(8);
    let word = |c: &[u8]| u64::from_le_bytes(c.try_into().unwrap_or([0; 8]));
    words.all(|c| needs_escape(word(c)) == 0)
        && words
            .remainder()
            .iter()
            .all(|&c| (0x20..0x7f).contains(&c) && c != b'"' && c != b'\\')
}

/// Writes `s` as a JSON string literal.
pub fn write_str(buf: &mut Vec<u8>, s: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    buf.reserve(s.len() + 2);
    buf.push(b'"');
    if plain_ascii(s) {
        buf.extend_from_slice(s);
        buf.push(b'"');
        return;
    }
    let mut rest = s;
    while !rest.is_empty() {
        let (valid, bad) = match core::str::from_utf8(rest) {
            Ok(v) => (v, 0),
            Err(e) => {
                let (v, _) = rest.split_at(e.valid_up_to());
                // SAFETY-free: from_utf8 told us this prefix is valid.
                let v = core::str::from_utf8(v).unwrap_or("");
                (v, e.error_len().unwrap_or(rest.len() - e.valid_up_to()))
            }
        };
        // Runs that need no escape (almost every byte of a path) are
        // copied whole: this runs for every field of every event.
        let bytes = valid.as_bytes();
        let mut run = 0;
        for (i, &c) in bytes.iter().enumerate() {
            if c >= 0x20 && c != 0x7f && c != b'"' && c != b'\\' {
                continue;
            }
            buf.extend_from_slice(&bytes[run..i]);
            run = i + 1;
            match c {
                b'"' => buf.extend_from_slice(b"\\\""),
                b'\\' => buf.extend_from_slice(b"\\\\"),
                b'\n' => buf.extend_from_slice(b"\\n"),
                b'\r' => buf.extend_from_slice(b"\\r"),
                b'\t' => buf.extend_from_slice(b"\\t"),
                c => {
                    buf.extend_from_slice(b"\\u00");
                    buf.push(HEX[(c >> 4) as usize]);
                    buf.push(HEX[(c & 15) as usize]);
                }
            }
        }
        buf.extend_from_slice(&bytes[run..]);
        rest = &rest[valid.len()..];
        for &b in &rest[..bad.min(rest.len())] {
            buf.extend_from_slice(b"\\udc");
            buf.push(HEX[(b >> 4) as usize]);
            buf.push(HEX[(b & 15) as usize]);
        }
        rest = &rest[bad.min(rest.len())..];
    }
    buf.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_ascii_finds_any_byte_to_escape_at_any_position() {
        let base = *b"/usr/lib/x86_64-linux-gnu/libcudnn.so.9";
        assert!(plain_ascii(&base));
        assert!(plain_ascii(b""));
        for pos in 0..base.len() {
            for bad in [0u8, 0x1f, b'"', b'\\', 0x7f, 0x80, 0xc3, 0xff] {
                let mut s = base;
                s[pos] = bad;
                assert!(!plain_ascii(&s), "{bad:#x} at {pos}");
            }
            // The neighbours of the bytes it looks for are plain.
            for ok in [0x20u8, b'!', b'#', b'[', b']', b'~'] {
                let mut s = base;
                s[pos] = ok;
                assert!(plain_ascii(&s), "{ok:#x} at {pos}");
            }
        }
    }

    #[test]
    fn strings_are_escaped_between_plain_runs() {
        let mut buf = Vec::new();
        write_str(&mut buf, b"caf\xc3\xa9/\x7f\"x\\\xff/end\t");
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            "\"caf\u{e9}/\\u007f\\\"x\\\\\\udcff/end\\t\""
        );
        let mut buf = Vec::new();
        write_str(&mut buf, b"");
        assert_eq!(buf, b"\"\"");
    }

    #[test]
    fn writes_one_line_with_escapes() {
        let mut buf = Vec::new();
        let mut l = Line::new(&mut buf);
        l.str("ev", "load")
            .bytes("path", b"/a \"b\"\\c\n\x01")
            .u64("n", 0)
            .i64("neg", -42)
            .bool("ok", true)
            .null("none")
            .str_array("argv", [&b"x"[..], b"y"])
            .nested("tried", |n| {
                n.array_of_objects(&[1u64, 2], |o, v| {
                    o.u64("i", *v);
                })
            });
        l.finish();
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            "{\"ev\":\"load\",\"path\":\"/a \\\"b\\\"\\\\c\\n\\u0001\",\"n\":0,\"neg\":-42,\
             \"ok\":true,\"none\":null,\"argv\":[\"x\",\"y\"],\"tried\":[{\"i\":1},{\"i\":2}]}\n"
        );
    }

    #[test]
    fn fields_rendered_once_and_inserted() {
        let mut body = Vec::new();
        Line::fields(&mut body).str("name", "x").u64("n", 2);
        assert_eq!(body, br#""name":"x","n":2"#);
        let mut buf = Vec::new();
        let mut l = Line::new(&mut buf);
        l.str("ev", "e").raw(&body).raw(b"");
        l.finish();
        assert_eq!(buf, b"{\"ev\":\"e\",\"name\":\"x\",\"n\":2}\n");
    }

    #[test]
    fn optional_values() {
        let mut buf = Vec::new();
        let mut l = Line::new(&mut buf);
        l.opt_str("a", Some("x"))
            .opt_str("b", None)
            .opt_i64("c", Some(-1))
            .opt_i64("d", None)
            .opt_u64("e", Some(7))
            .opt_u64("f", None);
        l.finish();
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            "{\"a\":\"x\",\"b\":null,\"c\":-1,\"d\":null,\"e\":7,\"f\":null}\n"
        );
    }

    #[test]
    fn bytes_that_are_not_utf8_become_surrogate_escapes() {
        let mut buf = Vec::new();
        write_str(&mut buf, b"a\xffb\xc3\xa9\xe2\x80");
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            "\"a\\udcffb\u{e9}\\udce2\\udc80\""
        );
    }

    #[test]
    fn padded_numbers_are_json() {
        let mut buf = Vec::new();
        let mut l = Line::new(&mut buf);
        l.padded_u64("lost", 12, 6).u64("v", 1);
        l.finish();
        assert_eq!(buf, b"{\"lost\":12    ,\"v\":1}\n");
    }

    #[test]
    fn u64_extremes() {
        let mut buf = Vec::new();
        write_u64(&mut buf, u64::MAX);
        assert_eq!(buf, b"18446744073709551615");
    }
}
