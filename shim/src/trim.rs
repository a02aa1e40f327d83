//! Gives back the audit namespace's read-only pages once start-up is over.
//!
//! glibc loads the shim into a namespace of its own, with a second `libc.so.6`
//! (on glibc before 2.34 also `libpthread`, `libdl`, `librt`; `libgcc_s.so.1`
//! too, before the shim linked its unwinder in). Relocating and starting them,
//! and the shim's own start-up, touch their code and read-only data here and
//! there, and the kernel maps up to 64 KiB of cached file pages around each
//! touched page (fault-around): a small program ends up with about 1.4 MB more
//! resident, most of it pages that no later call needs (issue 10 measured
//! +1.5 MB RSS, +0.5 MB private, against targets of 1 MB and 0.3 MB).
//!
//! In `la_preinit`, when every start-up object is loaded and the shim's
//! start-up work is done, [`after_startup`] unmaps (`MADV_DONTNEED`) the
//! pages of the namespace's read-only, file-backed segments. They hold
//! nothing but the file's own bytes, so this discards nothing: the pages
//! stay in the page cache (shared with the program's own libc for the second
//! libc), and whatever the shim runs later faults its pages back in. What
//! it never changes:
//!
//! - the program's objects (other namespaces are not listed) and the
//!   dynamic loader, whose one mapping every namespace shares;
//! - writable segments, RELRO (relocated: private copies of the file), the
//!   heap, TLS and stacks;
//! - an object with text relocations (its "read-only" pages were written).

use cdtrace_abi::elf::{dyn_entries_at, Dyn};
use core::ffi::{c_int, c_void};

const DT_TEXTREL: i64 = 22;
const DT_FLAGS: i64 = 30;
const DF_TEXTREL: u64 = 0x4;

/// One program header, the fields that matter here.
#[derive(Clone, Copy, Debug)]
struct Segment {
    kind: u32,
    flags: u32,
    vaddr: usize,
    filesz: usize,
    memsz: usize,
}

impl Segment {
    fn from_phdr(p: &libc::Elf64_Phdr) -> Segment {
        Segment {
            kind: p.p_type,
            flags: p.p_flags,
            vaddr: p.p_vaddr as usize,
            filesz: p.p_filesz as usize,
            memsz: p.p_memsz as usize,
        }
    }
}

/// Unmaps the clean file pages of every object of the shim's namespace but
/// the loader (see the module docs). Call once, from `la_preinit`.
///
/// The ranges are collected first and unmapped after `dl_iterate_phdr`
/// returns, with the system call made here rather than through libc: the
/// code that runs after a range is unmapped faults its pages back in, and
/// that is then only this function's own page.
pub fn after_startup() {
    // SAFETY: getauxval has no preconditions.
    let mut found = unsafe {
        Found {
            loader: libc::getauxval(libc::AT_BASE) as usize,
            vdso: libc::getauxval(libc::AT_SYSINFO_EHDR) as usize,
            page: libc::getauxval(libc::AT_PAGESZ) as usize,
            ranges: [(0, 0); MAX_RANGES],
            n: 0,
        }
    };
    if !found.page.is_power_of_two() {
        return;
    }
    // SAFETY: the callback reads the records glibc passes and writes `found`.
    unsafe { libc::dl_iterate_phdr(Some(each), (&mut found as *mut Found).cast()) };
    for &(start, len) in found.ranges.iter().take(found.n) {
        // SAFETY: a whole-page range of a read-only file mapping of this
        // namespace: its contents come back from the file on the next touch.
        unsafe { dont_need(start, len) };
    }
}

/// Read-only segments of a namespace's objects: a few each.
const MAX_RANGES: usize = 32;

struct Found {
    loader: usize,
    vdso: usize,
    page: usize,
    ranges: [(usize, usize); MAX_RANGES],
    n: usize,
}

unsafe extern "C" fn each(info: *mut libc::dl_phdr_info, _size: usize, data: *mut c_void) -> c_int {
    // SAFETY: glibc passes a valid record with `dlpi_phnum` headers at
    // `dlpi_phdr`; `data` is the `Found` of `after_startup`.
    let (info, found) = unsafe { (&*info, &mut *(data as *mut Found)) };
    let bias = info.dlpi_addr as usize;
    if info.dlpi_phdr.is_null() || bias == found.loader || bias == found.vdso || bias == 0 {
        return 0;
    }
    // SAFETY: as above.
    let phdrs =
        unsafe { core::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) };
    let segments = phdrs.iter().map(Segment::from_phdr);
    // SAFETY: PT_DYNAMIC of a loaded object is mapped and ends with DT_NULL.
    if segments
        .clone()
        .any(|s| s.kind == libc::PT_DYNAMIC && unsafe { text_relocated(bias + s.vaddr) })
    {
        return 0;
    }
    clean_ranges(bias, segments, found.page, |start, len| {
        if let Some(slot) = found.ranges.get_mut(found.n) {
            *slot = (start, len);
            found.n += 1;
        }
    });
    0
}

/// `madvise(start, len, MADV_DONTNEED)`, its result ignored (the pages then
/// simply stay).
///
/// # Safety
/// `start..start + len` holds no data that the file does not.
#[cfg(target_arch = "x86_64")]
unsafe fn dont_need(start: usize, len: usize) {
    // SAFETY: the caller's promise; the kernel clobbers rcx and r11.
    unsafe {
        core::arch::asm!(
            "syscall",
            inlateout("rax") libc::SYS_madvise => _,
            in("rdi") start,
            in("rsi") len,
            in("rdx") libc::MADV_DONTNEED,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
}

#[cfg(target_arch = "aarch64")]
unsafe fn dont_need(start: usize, len: usize) {
    // SAFETY: the caller's promise.
    unsafe {
        core::arch::asm!(
            "svc 0",
            in("x8") libc::SYS_madvise,
            inlateout("x0") start => _,
            in("x1") len,
            in("x2") libc::MADV_DONTNEED,
            options(nostack),
        );
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
unsafe fn dont_need(start: usize, len: usize) {
    // SAFETY: the caller's promise.
    unsafe { libc::madvise(start as *mut c_void, len, libc::MADV_DONTNEED) };
}

/// Whether the dynamic section at `dynamic` asks for text relocations.
///
/// # Safety
/// `dynamic` is a loaded object's dynamic section.
unsafe fn text_relocated(dynamic: usize) -> bool {
    // SAFETY: the caller's promise.
    unsafe { dyn_entries_at(dynamic as *const Dyn) }
        .any(|(tag, val)| tag == DT_TEXTREL || (tag == DT_FLAGS && val & DF_TEXTREL != 0))
}

/// Calls `out(start, len)` for each run of whole pages, at load bias
/// `bias`, that lies in a read-only PT_LOAD segment's file contents and
/// outside PT_GNU_RELRO.
fn clean_ranges(
    bias: usize,
    segments: impl Iterator<Item = Segment> + Clone,
    page: usize,
    mut out: impl FnMut(usize, usize),
) {
    let relro = segments
        .clone()
        .find(|s| s.kind == libc::PT_GNU_RELRO)
        .map_or((0, 0), |s| {
            let end = bias + s.vaddr + s.memsz;
            ((bias + s.vaddr) & !(page - 1), end.next_multiple_of(page))
        });
    for s in segments.filter(|s| s.kind == libc::PT_LOAD && s.flags & libc::PF_W == 0) {
        let start = (bias + s.vaddr).next_multiple_of(page);
        let end = (bias + s.vaddr + s.filesz.min(s.memsz)) & !(page - 1);
        // Around RELRO, should a linker ever put it in a read-only segment.
        for (a, b) in [(start, end.min(relro.0)), (start.max(relro.1), end)] {
            if a < b {
                out(a, b - a);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: u32 = libc::PF_R;
    const RX: u32 = libc::PF_R | libc::PF_X;
    const RW: u32 = libc::PF_R | libc::PF_W;

    fn load(flags: u32, vaddr: usize, filesz: usize, memsz: usize) -> Segment {
        Segment {
            kind: libc::PT_LOAD,
            flags,
            vaddr,
            filesz,
            memsz,
        }
    }

    fn relro(vaddr: usize, size: usize) -> Segment {
        Segment {
            kind: libc::PT_GNU_RELRO,
            flags: R,
            vaddr,
            filesz: size,
            memsz: size,
        }
    }

    fn ranges(bias: usize, segs: &[Segment]) -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        clean_ranges(bias, segs.iter().copied(), 0x1000, |a, n| {
            v.push((a, a + n))
        });
        v
    }

    #[test]
    fn read_only_segments_are_given_back_whole_pages_inward() {
        // The layout of `ld -z separate-code`: headers, text, rodata, data.
        let segs = [
            load(R, 0, 0x2f0, 0x2f0),
            load(RX, 0x1000, 0x5c5d8, 0x5c5d8),
            load(R, 0x5e000, 0x10a38, 0x10a38),
            load(RW, 0x6fc30, 0x3000, 0x8000),
            relro(0x6fc30, 0x23d0),
        ];
        let b = 0x7f00_0000_0000;
        // The headers' page is partial (0x2f0 bytes): kept. Text and rodata
        // end mid-page: the last partial page is kept. Nothing writable.
        assert_eq!(
            ranges(b, &segs),
            vec![(b + 0x1000, b + 0x5d000), (b + 0x5e000, b + 0x6e000)]
        );
    }

    #[test]
    fn writable_segments_and_relro_are_never_given_back() {
        let segs = [
            load(RW, 0x1000, 0x4000, 0x4000),
            load(R, 0x10000, 0x8000, 0x8000),
            relro(0x12100, 0x1e00),
        ];
        // RELRO's partial pages count as RELRO.
        assert_eq!(
            ranges(0, &segs),
            vec![(0x10000, 0x12000), (0x14000, 0x18000)]
        );
    }

    #[test]
    fn zero_fill_beyond_the_file_is_not_a_file_page() {
        let segs = [load(R, 0x1000, 0x3000, 0x9000)];
        assert_eq!(ranges(0, &segs), vec![(0x1000, 0x4000)]);
    }
}
