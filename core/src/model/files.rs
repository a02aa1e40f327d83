//! Reading the files of a trace directory, which other people's programs
//! wrote (and, in a root run's directory, other users could add to):
//! never blocking on a FIFO or device, never through a symlink or a hard
//! link that may lead to any file of the machine.

use super::io_msg;
use std::fs;
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// Why a file was not read.
#[derive(Debug)]
pub enum ReadError {
    Io(std::io::Error),
    /// A FIFO, device, socket or directory: reading it could block forever.
    NotRegular(&'static str),
    /// A symlink, or a file with more than one name (a hard link): in a
    /// directory others can write (a root run's is, `launch::record`),
    /// either may lead to any file of the machine, which must not be read
    /// and quoted.
    Linked(&'static str),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io(e) => write!(f, "cannot read: {}", io_msg(e)),
            ReadError::NotRegular(kind) => {
                write!(f, "not a regular file ({kind}); skipped")
            }
            ReadError::Linked(kind) => write!(
                f,
                "{kind}, not a file the shim wrote (it may lead to any file); not read"
            ),
        }
    }
}

fn kind_of(ft: fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_dir() {
        "a directory"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_socket() {
        "a socket"
    } else if ft.is_char_device() || ft.is_block_device() {
        "a device"
    } else {
        "not a plain file"
    }
}

/// Reads a regular file, at most `cap` bytes; the flag tells whether there
/// was more. Never blocks on a FIFO or device: those are refused before they
/// are opened, and the open itself is non-blocking (the file could be
/// swapped between the two) and checked again with fstat. Never reads
/// through a symlink (`O_NOFOLLOW`) nor a file with another name elsewhere
/// (a hard link), see [`ReadError::Linked`].
pub fn read_regular(path: &Path, cap: u64) -> Result<(Vec<u8>, bool), ReadError> {
    let md = fs::symlink_metadata(path).map_err(ReadError::Io)?;
    if md.file_type().is_symlink() {
        return Err(ReadError::Linked("a symlink"));
    }
    if !md.is_file() {
        return Err(ReadError::NotRegular(kind_of(md.file_type())));
    }
    let f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC | libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => ReadError::Linked("a symlink"),
            _ => ReadError::Io(e),
        })?;
    let md = f.metadata().map_err(ReadError::Io)?;
    if !md.is_file() {
        return Err(ReadError::NotRegular(kind_of(md.file_type())));
    }
    if md.nlink() > 1 {
        return Err(ReadError::Linked("a hard link"));
    }
    let mut bytes = Vec::with_capacity(md.size().min(cap) as usize);
    f.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    let more = bytes.len() as u64 > cap;
    bytes.truncate(cap as usize);
    Ok((bytes, more))
}

/// The first `cap` bytes of a regular file read as [`read_regular`] reads
/// it; None when it cannot be.
pub fn read_small(path: &Path, cap: u64) -> Option<Vec<u8>> {
    read_regular(path, cap).ok().map(|(b, _)| b)
}
