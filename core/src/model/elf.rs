//! A small ELF reader: the header (class, byte order, type, machine), the
//! program headers, and the dynamic section (DT_NEEDED, DT_SONAME, DT_RPATH,
//! DT_RUNPATH). The one reader for the launcher's look at the program
//! (`launch::target`: PT_INTERP, class and machine), the pin directory's check
//! (`machine::pin`: a shared library this machine can load) and the findings (the
//! directories a requester's RPATH/RUNPATH would have searched, CDT008).
//!
//! Only the parts needed are read (headers, the dynamic segment, the strings
//! it names), with seeks, so a 1 GB `libtorch_cuda.so` costs a few reads.
//! Any inconsistency gives `None` or stops early; nothing panics.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// What the dynamic section says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DynInfo {
    pub soname: Option<String>,
    pub needed: Vec<String>,
    /// DT_RPATH entries, in order (`$ORIGIN` not expanded).
    pub rpath: Vec<String>,
    /// DT_RUNPATH entries, in order.
    pub runpath: Vec<String>,
}

/// The first bytes of every ELF file.
pub const MAGIC: &[u8] = b"\x7fELF";

/// `e_type` values.
pub const ET_REL: u16 = 1;
pub const ET_EXEC: u16 = 2;
pub const ET_DYN: u16 = 3;
pub const ET_CORE: u16 = 4;

pub const PT_LOAD: u32 = 1;
pub const PT_DYNAMIC: u32 = 2;
pub const PT_INTERP: u32 = 3;
pub const PT_NOTE: u32 = 4;
const NT_GNU_BUILD_ID: u32 = 3;
/// Most bytes read from one PT_NOTE segment.
const MAX_NOTE_BYTES: u64 = 64 << 10;
const DT_NULL: u64 = 0;
const DT_NEEDED: u64 = 1;
const DT_STRTAB: u64 = 5;
const DT_SONAME: u64 = 14;
const DT_RPATH: u64 = 15;
const DT_RUNPATH: u64 = 29;

/// Bounds against hostile or broken files.
const MAX_PHNUM: usize = 4096;
const MAX_DYN_BYTES: u64 = 1 << 20;
const MAX_STRING: usize = 64 << 10;

/// `x86-64`, `aarch64`, … for an `e_machine` value; `machine N` for others.
pub fn machine_name(m: u16) -> String {
    match m {
        3 => "i386".into(),
        62 => "x86-64".into(),
        183 => "aarch64".into(),
        40 => "arm".into(),
        21 => "ppc64".into(),
        243 => "riscv".into(),
        _ => format!("machine {m}"),
    }
}

/// `64-bit x86-64`, `32-bit machine 99`: an ELF class and machine in words.
pub fn arch_name(class64: bool, machine: u16) -> String {
    let bits = if class64 { "64-bit" } else { "32-bit" };
    format!("{bits} {}", machine_name(machine))
}

/// The class (ELF64 or ELF32) and byte order of a file, from `e_ident`;
/// reads the fields whose size and order depend on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elf {
    pub class64: bool,
    pub le: bool,
}

impl Elf {
    /// From a file's first bytes: None when they do not start with the ELF
    /// magic and the class and byte-order bytes.
    pub fn ident(head: &[u8]) -> Option<Elf> {
        (head.starts_with(MAGIC) && head.len() > 5).then(|| Elf {
            class64: head[4] == 2,
            le: head[5] != 2,
        })
    }

    pub fn u16(&self, b: &[u8], o: usize) -> Option<u16> {
        let v: [u8; 2] = b.get(o..o + 2)?.try_into().ok()?;
        Some(if self.le {
            u16::from_le_bytes(v)
        } else {
            u16::from_be_bytes(v)
        })
    }
    pub fn u32(&self, b: &[u8], o: usize) -> Option<u32> {
        let v: [u8; 4] = b.get(o..o + 4)?.try_into().ok()?;
        Some(if self.le {
            u32::from_le_bytes(v)
        } else {
            u32::from_be_bytes(v)
        })
    }
    pub fn u64(&self, b: &[u8], o: usize) -> Option<u64> {
        let v: [u8; 8] = b.get(o..o + 8)?.try_into().ok()?;
        Some(if self.le {
            u64::from_le_bytes(v)
        } else {
            u64::from_be_bytes(v)
        })
    }
    /// A word: 8 bytes in ELF64, 4 in ELF32.
    fn word(&self, b: &[u8], o: usize) -> Option<u64> {
        if self.class64 {
            self.u64(b, o)
        } else {
            self.u32(b, o).map(u64::from)
        }
    }
}

/// The fields of the ELF header this tool reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub elf: Elf,
    pub e_type: u16,
    pub machine: u16,
    pub phoff: u64,
    pub phentsize: usize,
    pub phnum: usize,
}

impl Header {
    /// The ELF header at the start of `head`; None when `head` is not ELF
    /// or shorter than the header of its class (64 bytes, 52 in ELF32).
    pub fn parse(head: &[u8]) -> Option<Header> {
        let elf = Elf::ident(head)?;
        if head.len() < if elf.class64 { 64 } else { 52 } {
            return None;
        }
        let (phoff, phentsize, phnum) = if elf.class64 {
            (elf.u64(head, 32)?, elf.u16(head, 54)?, elf.u16(head, 56)?)
        } else {
            (
                u64::from(elf.u32(head, 28)?),
                elf.u16(head, 42)?,
                elf.u16(head, 44)?,
            )
        };
        Some(Header {
            elf,
            e_type: elf.u16(head, 16)?,
            machine: elf.u16(head, 18)?,
            phoff,
            phentsize: usize::from(phentsize),
            phnum: usize::from(phnum),
        })
    }
}

/// One program header: the segment's type, file range and address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub p_type: u32,
    pub offset: u64,
    pub vaddr: u64,
    pub filesz: u64,
}

/// Up to `max` bytes from the start of `r` (fewer when the file is shorter).
pub fn read_head<R: Read + Seek>(r: &mut R, max: u64) -> std::io::Result<Vec<u8>> {
    r.seek(SeekFrom::Start(0))?;
    let mut head = Vec::new();
    Read::take(&mut *r, max).read_to_end(&mut head)?;
    Ok(head)
}

/// The program headers `h` describes; None when its table cannot be read
/// or is implausible (no entries, PN_XNUM, more than a few thousand, or an
/// entry size no real file uses).
pub fn segments<R: Read + Seek>(r: &mut R, h: &Header) -> Option<Vec<Segment>> {
    let e = h.elf;
    // Real files use 56 (ELF64) or 32 (ELF32); a larger entry size would
    // only make a hostile header allocate a lot.
    let min_ph = if e.class64 { 56 } else { 32 };
    if h.phnum == 0 || h.phnum > MAX_PHNUM || h.phentsize < min_ph || h.phentsize > 256 {
        return None;
    }
    let table = read_at(r, h.phoff, h.phentsize.checked_mul(h.phnum)?)?;
    table
        .chunks_exact(h.phentsize)
        .map(|ph| {
            let (offset, vaddr, filesz) = if e.class64 {
                (e.u64(ph, 8)?, e.u64(ph, 16)?, e.u64(ph, 32)?)
            } else {
                (
                    u64::from(e.u32(ph, 4)?),
                    u64::from(e.u32(ph, 8)?),
                    u64::from(e.u32(ph, 16)?),
                )
            };
            Some(Segment {
                p_type: e.u32(ph, 0)?,
                offset,
                vaddr,
                filesz,
            })
        })
        .collect()
}

/// Reads the dynamic section of the ELF file at `path` (regular files only).
pub fn read_dynamic(path: &Path) -> Option<DynInfo> {
    let md = std::fs::metadata(path).ok()?;
    if !md.is_file() {
        return None;
    }
    let mut f = File::open(path).ok()?;
    parse(&mut f)
}

fn read_at<R: Read + Seek>(r: &mut R, off: u64, len: usize) -> Option<Vec<u8>> {
    r.seek(SeekFrom::Start(off)).ok()?;
    let mut buf = vec![0u8; len];
    r.read_exact(&mut buf).ok()?;
    Some(buf)
}

/// A NUL-terminated string at `off` (at most [`MAX_STRING`] bytes).
fn string_at<R: Read + Seek>(r: &mut R, off: u64) -> Option<String> {
    r.seek(SeekFrom::Start(off)).ok()?;
    let mut out = Vec::new();
    let mut chunk = [0u8; 256];
    while out.len() < MAX_STRING {
        let n = r.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        if let Some(z) = chunk[..n].iter().position(|&c| c == 0) {
            out.extend_from_slice(&chunk[..z]);
            return Some(String::from_utf8_lossy(&out).into_owned());
        }
        out.extend_from_slice(&chunk[..n]);
    }
    None
}

/// Parses the dynamic section from any seekable reader.
pub fn parse<R: Read + Seek>(r: &mut R) -> Option<DynInfo> {
    let head = read_head(r, 64).ok()?;
    let h = Header::parse(&head)?;
    let e = h.elf;
    let segs = segments(r, &h)?;
    // The PT_DYNAMIC's file range (the last one, if several).
    let dynamic = segs.iter().rfind(|s| s.p_type == PT_DYNAMIC)?;
    let dsize = dynamic.filesz.min(MAX_DYN_BYTES) as usize;
    let dyn_bytes = read_at(r, dynamic.offset, dsize)?;
    let entsize = if e.class64 { 16 } else { 8 };
    let half = entsize / 2;
    let mut strtab = None;
    let mut entries: Vec<(u64, u64)> = Vec::new();
    for ent in dyn_bytes.chunks_exact(entsize) {
        let tag = e.word(ent, 0)?;
        let val = e.word(ent, half)?;
        match tag {
            DT_NULL => break,
            DT_STRTAB => strtab = Some(val),
            DT_NEEDED | DT_SONAME | DT_RPATH | DT_RUNPATH => entries.push((tag, val)),
            _ => {}
        }
    }
    // DT_STRTAB is an address: find the file offset through the PT_LOADs.
    let strtab = strtab?;
    let str_off = segs.iter().filter(|s| s.p_type == PT_LOAD).find_map(|s| {
        (strtab >= s.vaddr && strtab - s.vaddr < s.filesz).then(|| strtab - s.vaddr + s.offset)
    })?;
    let mut info = DynInfo::default();
    for (tag, val) in entries {
        let Some(s) = str_off.checked_add(val).and_then(|o| string_at(r, o)) else {
            continue;
        };
        let split = |s: &str| -> Vec<String> {
            s.split(':')
                .filter(|x| !x.is_empty())
                .map(str::to_string)
                .collect()
        };
        match tag {
            DT_NEEDED => info.needed.push(s),
            DT_SONAME => info.soname = Some(s),
            DT_RPATH => info.rpath.extend(split(&s)),
            DT_RUNPATH => info.runpath.extend(split(&s)),
            _ => {}
        }
    }
    Some(info)
}

/// The GNU build-id of an ELF file (its `NT_GNU_BUILD_ID` note), as
/// lowercase hex: the same value, found the same way (the first such note
/// of a PT_NOTE segment, notes 4-byte aligned), as the shim records in a
/// `load` event's `build_id`, so that the two can be compared.
pub fn build_id<R: Read + Seek>(r: &mut R) -> Option<String> {
    let head = read_head(r, 64).ok()?;
    let h = Header::parse(&head)?;
    let e = h.elf;
    for s in segments(r, &h)?.iter().filter(|s| s.p_type == PT_NOTE) {
        if s.filesz == 0 || s.filesz > MAX_NOTE_BYTES {
            continue;
        }
        let Some(notes) = read_at(r, s.offset, s.filesz as usize) else {
            continue;
        };
        let mut o = 0usize;
        while o + 12 <= notes.len() {
            let namesz = e.u32(&notes, o)? as usize;
            let descsz = e.u32(&notes, o + 4)? as usize;
            let name_at = o + 12;
            let desc_at = name_at.checked_add(namesz.div_ceil(4) * 4)?;
            let next = desc_at.checked_add(descsz.div_ceil(4) * 4)?;
            if next > notes.len() {
                break;
            }
            if e.u32(&notes, o + 8)? == NT_GNU_BUILD_ID
                && &notes[name_at..name_at + namesz] == b"GNU\0"
            {
                return Some(cudnn_trace_format::hex(&notes[desc_at..desc_at + descsz]));
            }
            o = next;
        }
    }
    None
}

/// A minimal ELF64 little-endian shared object with the given dynamic
/// strings, for tests (here and in the rules' tests).
#[cfg(test)]
pub fn synthetic_elf(
    soname: &str,
    needed: &[&str],
    rpath: Option<&str>,
    runpath: Option<&str>,
) -> Vec<u8> {
    // Layout: ELF header (64) | 2 program headers (2*56) | dynamic | strtab.
    let mut strtab = vec![0u8];
    let mut add = |s: &str| {
        let off = strtab.len() as u64;
        strtab.extend_from_slice(s.as_bytes());
        strtab.push(0);
        off
    };
    let mut dyns: Vec<(u64, u64)> = Vec::new();
    for n in needed {
        dyns.push((DT_NEEDED, add(n)));
    }
    dyns.push((DT_SONAME, add(soname)));
    if let Some(r) = rpath {
        dyns.push((DT_RPATH, add(r)));
    }
    if let Some(r) = runpath {
        dyns.push((DT_RUNPATH, add(r)));
    }
    let phoff = 64u64;
    let dyn_off = phoff + 2 * 56;
    let dyn_size = (dyns.len() as u64 + 2) * 16;
    let str_off = dyn_off + dyn_size;
    // The strtab address differs from its offset, as in real files.
    let vaddr_base = 0x1000u64;
    dyns.push((DT_STRTAB, vaddr_base + str_off));
    dyns.push((DT_NULL, 0));
    let total = str_off + strtab.len() as u64;
    let mut b = Vec::new();
    b.extend_from_slice(b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0");
    b.extend_from_slice(&3u16.to_le_bytes()); // ET_DYN
    b.extend_from_slice(&62u16.to_le_bytes()); // x86-64
    b.extend_from_slice(&1u32.to_le_bytes());
    b.extend_from_slice(&0u64.to_le_bytes()); // entry
    b.extend_from_slice(&phoff.to_le_bytes());
    b.extend_from_slice(&0u64.to_le_bytes()); // shoff
    b.extend_from_slice(&0u32.to_le_bytes()); // flags
    b.extend_from_slice(&64u16.to_le_bytes()); // ehsize
    b.extend_from_slice(&56u16.to_le_bytes()); // phentsize
    b.extend_from_slice(&2u16.to_le_bytes()); // phnum
    b.extend_from_slice(&[0u8; 6]); // shentsize, shnum, shstrndx
    let ph = |b: &mut Vec<u8>, t: u32, off: u64, vaddr: u64, size: u64| {
        b.extend_from_slice(&t.to_le_bytes());
        b.extend_from_slice(&4u32.to_le_bytes());
        b.extend_from_slice(&off.to_le_bytes());
        b.extend_from_slice(&vaddr.to_le_bytes());
        b.extend_from_slice(&vaddr.to_le_bytes());
        b.extend_from_slice(&size.to_le_bytes());
        b.extend_from_slice(&size.to_le_bytes());
        b.extend_from_slice(&8u64.to_le_bytes());
    };
    ph(&mut b, PT_LOAD, 0, vaddr_base, total);
    ph(&mut b, PT_DYNAMIC, dyn_off, vaddr_base + dyn_off, dyn_size);
    for (t, v) in dyns {
        b.extend_from_slice(&t.to_le_bytes());
        b.extend_from_slice(&v.to_le_bytes());
    }
    b.extend_from_slice(&strtab);
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    #[test]
    fn synthetic_library() {
        let b = synthetic_elf(
            "libcudnn.so.9",
            &["libc.so.6", "libdl.so.2"],
            None,
            Some("$ORIGIN:$ORIGIN/../../cublas/lib"),
        );
        let d = parse(&mut Cursor::new(b)).unwrap();
        assert_eq!(d.soname.as_deref(), Some("libcudnn.so.9"));
        assert_eq!(d.needed, vec!["libc.so.6", "libdl.so.2"]);
        assert!(d.rpath.is_empty());
        assert_eq!(d.runpath, vec!["$ORIGIN", "$ORIGIN/../../cublas/lib"]);
        let b = synthetic_elf(
            "libtorch_cuda.so",
            &["libcudnn.so.9"],
            Some("$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN"),
            None,
        );
        let d = parse(&mut Cursor::new(b)).unwrap();
        assert_eq!(d.rpath, vec!["$ORIGIN/../../nvidia/cudnn/lib", "$ORIGIN"]);
    }

    #[test]
    fn real_files() {
        // The test binary is a dynamic executable that needs libc.
        let me = std::env::current_exe().unwrap();
        let d = read_dynamic(&me).unwrap();
        assert!(d.needed.iter().any(|n| n.starts_with("libc.so")), "{d:?}");
    }

    #[test]
    fn build_id_of_a_real_file() {
        // The test binary is linked with a build-id (rustc passes
        // --build-id on Linux); `file`-like tools show the same hex.
        let me = std::env::current_exe().unwrap();
        let id = build_id(&mut File::open(&me).unwrap());
        if let Some(id) = id {
            assert!(
                id.len() >= 16 && id.bytes().all(|c| c.is_ascii_hexdigit()),
                "{id}"
            );
        }
        // A note segment with another note first, then the build-id.
        let mut notes = Vec::new();
        for (name, ty, desc) in [
            (&b"XYZ\0"[..], 1u32, &[1u8, 2, 3][..]),
            (b"GNU\0", 3, &[0xab, 0x01, 0xff, 0x10]),
        ] {
            notes.extend_from_slice(&(name.len() as u32).to_le_bytes());
            notes.extend_from_slice(&(desc.len() as u32).to_le_bytes());
            notes.extend_from_slice(&ty.to_le_bytes());
            notes.extend_from_slice(name);
            notes.extend_from_slice(desc);
            notes.resize(notes.len().div_ceil(4) * 4, 0);
        }
        let mut b = synthetic_elf("x.so", &[], None, None);
        let at = b.len() as u64;
        b.extend_from_slice(&notes);
        // Turn the PT_DYNAMIC header (the second) into a PT_NOTE over them.
        let ph = 64 + 56;
        b[ph..ph + 4].copy_from_slice(&PT_NOTE.to_le_bytes());
        b[ph + 8..ph + 16].copy_from_slice(&at.to_le_bytes());
        b[ph + 32..ph + 40].copy_from_slice(&(notes.len() as u64).to_le_bytes());
        assert_eq!(build_id(&mut Cursor::new(b)).as_deref(), Some("ab01ff10"));
        // A file without notes has none; garbage is no panic.
        let b = synthetic_elf("x.so", &[], None, None);
        assert_eq!(build_id(&mut Cursor::new(b)), None);
        assert_eq!(build_id(&mut Cursor::new(b"\x7fELF junk".to_vec())), None);
    }

    #[test]
    fn garbage_and_truncation_give_none() {
        assert!(parse(&mut Cursor::new(b"not an elf at all".to_vec())).is_none());
        assert!(parse(&mut Cursor::new(Vec::new())).is_none());
        let full = synthetic_elf("x.so", &["a.so"], None, Some("/r"));
        for cut in [10, 63, 100, 200, full.len() - 3] {
            // Must not panic; may or may not find something.
            let _ = parse(&mut Cursor::new(full[..cut].to_vec()));
        }
        // A header claiming absurd program headers.
        let mut bad = full.clone();
        bad[56] = 0xff;
        bad[57] = 0xff;
        assert!(parse(&mut Cursor::new(bad)).is_none());
        assert!(read_dynamic(Path::new("/nonexistent")).is_none());
        assert!(read_dynamic(Path::new("/")).is_none());
    }
}
