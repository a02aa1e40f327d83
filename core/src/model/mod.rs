//! The model: what a trace says, read-only. Reading trace directories and
//! files forgivingly (a damaged line is a [`Problem`], never a panic), the
//! launcher's record and the program's captured stderr next to them, the
//! `version` and `call` events in the form the analysis uses, ELF dynamic
//! sections, and version numbers.
//!
//! Nothing here knows about the machine the report runs on or about what is
//! wrong: those are the `machine` and `analysis` layers above.

pub mod elf;
pub mod events;
pub mod files;
pub mod json;
pub mod name_version;
pub mod path;
pub mod record;
pub mod trace;
pub mod version;

pub use path::{basename, dirname, stem};
pub use record::{
    captured_stderr, signal_name, FindingsRecord, LauncherRecord, OutlivedRecord, PinRecord,
    LAUNCHER_FILE,
};
pub use trace::{read_paths, Failed, Image, Problem, TraceSet};
pub use version::Ver;

use std::path::Path;

/// An I/O error as the rest of a message: `permission denied`, not Rust's
/// `Permission denied (os error 13)`. The "(os error N)" suffix is std's,
/// not the user's concern, and the capital of `strerror`'s text reads as a
/// new sentence after `PATH: `. Every message that shows an I/O error goes
/// through this (or [`io_err`]).
pub fn io_msg(e: &std::io::Error) -> String {
    let s = e.to_string();
    let s = match s.find(" (os error ") {
        Some(i) => &s[..i],
        None => &s,
    };
    lower_first(s)
}

/// `No such file` → `no such file`; an initialism (`ELF header`, `I/O
/// error`) keeps its capitals.
fn lower_first(s: &str) -> String {
    let mut chars = s.chars();
    match (chars.next(), chars.next()) {
        (Some(a), Some(b)) if a.is_ascii_uppercase() && !b.is_uppercase() && b != '/' => {
            a.to_ascii_lowercase().to_string() + &s[1..]
        }
        _ => s.to_string(),
    }
}

/// `PATH: error text`, the error without its "(os error N)" suffix.
pub fn io_err(p: &Path, e: &std::io::Error) -> String {
    format!("{}: {}", p.display(), io_msg(e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Error, ErrorKind};

    #[test]
    fn io_errors_read_as_part_of_a_message() {
        let denied = Error::from_raw_os_error(libc::EACCES);
        assert!(denied.to_string().ends_with("(os error 13)"));
        assert_eq!(io_msg(&denied), "permission denied");
        assert_eq!(
            io_err(Path::new("/x"), &Error::from_raw_os_error(libc::ENOENT)),
            "/x: no such file or directory"
        );
        assert_eq!(
            io_msg(&Error::from_raw_os_error(libc::EIO)),
            "input/output error"
        );
        // Texts that are not strerror's keep their initialisms.
        assert_eq!(
            io_msg(&Error::other("ELF header too short")),
            "ELF header too short"
        );
        assert_eq!(io_msg(&Error::other("I/O stalled")), "I/O stalled");
        assert_eq!(
            io_msg(&Error::from(ErrorKind::UnexpectedEof)),
            "unexpected end of file"
        );
    }
}
