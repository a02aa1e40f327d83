//! JSON the launcher and `report` write, and read back: safe on a
//! terminal, every byte kept (docs/trace-format.md: a byte that is not UTF-8
//! is `\udcNN`).

use serde::Serialize;

/// A JSON document (`launcher.json`) with its `\udcNN` escapes made
/// readable (`cudnn_trace_format::read::decode_byte_escapes`).
pub fn decode(bytes: &[u8]) -> Vec<u8> {
    match std::str::from_utf8(bytes) {
        Ok(t) => cudnn_trace_format::read::decode_byte_escapes(t)
            .into_owned()
            .into_bytes(),
        Err(_) => bytes.to_vec(),
    }
}

/// JSON that is safe on a terminal and keeps every byte: `v` pretty-printed,
/// with each character a terminal would act on or hide written as a JSON
/// escape: DEL and the C1 controls, the bidi and invisible format
/// characters (`cudnn_trace_format::escape::invisible`), and a byte that is
/// not UTF-8 (a trace's `\udcNN`, read as
/// `cudnn_trace_format::escape::RAW_BYTE_BASE`) as `\udcNN` again.
/// serde_json already escapes the C0 controls. Any JSON reader gets the
/// same text as from plain output; Python's `os.fsencode` gives the bytes.
pub fn to_pretty<T: Serialize + ?Sized>(v: &T) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(4096);
    write_pretty(&mut out, v)?;
    Ok(out)
}

/// [`to_pretty`] written to `w` as it is made (a large document is never
/// held whole; give `w` a buffer).
pub fn write_pretty<W: std::io::Write, T: Serialize + ?Sized>(
    w: W,
    v: &T,
) -> serde_json::Result<()> {
    let mut ser =
        serde_json::Serializer::with_formatter(w, Safe(serde_json::ser::PrettyFormatter::new()));
    v.serialize(&mut ser)
}

/// [`to_pretty`]'s formatter: a pretty one whose strings are escaped.
struct Safe<F>(F);

impl<F: serde_json::ser::Formatter> serde_json::ser::Formatter for Safe<F> {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        use cudnn_trace_format::escape::{invisible, raw_byte};
        // Every character escaped here is DEL or beyond ASCII; paths and
        // names almost always are plain ASCII (a quick scan of bytes).
        if fragment.bytes().all(|b| b < 0x7f) {
            return w.write_all(fragment.as_bytes());
        }
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            let escape = if let Some(b) = raw_byte(c) {
                Some(format!("\\udc{b:02x}"))
            } else if c == '\u{7f}' || ('\u{80}'..='\u{9f}').contains(&c) || invisible(c) {
                Some(format!("\\u{:04x}", c as u32))
            } else {
                None
            };
            if let Some(e) = escape {
                w.write_all(&fragment.as_bytes()[start..i])?;
                w.write_all(e.as_bytes())?;
                start = i + c.len_utf8();
            }
        }
        w.write_all(&fragment.as_bytes()[start..])
    }

    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::to_pretty;

    #[test]
    fn strings_are_escaped_and_keep_their_bytes() {
        let raw = cudnn_trace_format::escape::from_bytes(b"a\xffb");
        let v = serde_json::json!({"argv": [raw, "rtl\u{202e}x\u{7f}\u{9b}", "caf\u{e9}\n"]});
        let out = String::from_utf8(to_pretty(&v).unwrap()).unwrap();
        assert!(out.contains(r#""a\udcffb""#), "{out}");
        assert!(out.contains(r#""rtl\u202ex\u007f\u009b""#), "{out}");
        assert!(out.contains(r#""café\n""#), "{out}");
        assert!(out.contains("\n  \"argv\": [\n"), "pretty: {out}");
        // The same text for any JSON reader (bytes come back through the
        // trace reader's decoding).
        let back: serde_json::Value =
            serde_json::from_str(&cudnn_trace_format::read::decode_byte_escapes(&out)).unwrap();
        assert_eq!(back, v);
    }
}
