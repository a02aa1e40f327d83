//! Declarations glibc provides but the `libc` crate does not: the rtld-audit
//! constants (`<link.h>`, rtld-audit(7)); `struct link_map` and the dynamic
//! section come from `cdtrace_abi::elf`, shared with the preload helper.

use core::ffi::c_char;

pub use cdtrace_abi::elf::{LinkMap, DT_RPATH, DT_RUNPATH, DT_SONAME};

/// The highest rtld-audit interface version this module implements.
/// Version 2 (glibc 2.35) changed nothing for the callbacks used here.
pub const LAV_CURRENT: u32 = 2;

// `la_objsearch` flags: which step of the search offered a name.
pub const LA_SER_ORIG: u32 = 0x01;
pub const LA_SER_LIBPATH: u32 = 0x02;
/// Used by glibc for both DT_RPATH and DT_RUNPATH directories.
pub const LA_SER_RUNPATH: u32 = 0x04;
pub const LA_SER_CONFIG: u32 = 0x08;
pub const LA_SER_DEFAULT: u32 = 0x40;
pub const LA_SER_SECURE: u32 = 0x80;

// `la_objopen` return flags (`<link.h>`): audit symbol bindings to / from
// this object (`la_symbind64`).
pub const LA_FLG_BINDTO: u32 = 0x01;
pub const LA_FLG_BINDFROM: u32 = 0x02;
/// `la_symbind64` flag: the binding is a `dlsym` result, not a PLT entry.
pub const LA_SYMB_DLSYM: u32 = 0x08;

/// `Elf64_Sym` (`<elf.h>`), as `la_symbind64` receives it: `st_value` holds
/// the address the binding resolved to.
#[repr(C)]
pub struct Elf64Sym {
    pub st_name: u32,
    pub st_info: u8,
    pub st_other: u8,
    pub st_shndx: u16,
    pub st_value: u64,
    pub st_size: u64,
}

// `la_activity` flags.
pub const LA_ACT_CONSISTENT: u32 = 0;
pub const LA_ACT_DELETE: u32 = 2;

extern "C" {
    /// glibc's version string ("2.36").
    pub fn gnu_get_libc_version() -> *const c_char;
}

/// Whether the running glibc is `major.minor` or later.
pub fn glibc_at_least(major: u32, minor: u32) -> bool {
    // SAFETY: glibc returns a static string.
    let v = unsafe { core::ffi::CStr::from_ptr(gnu_get_libc_version()) }.to_bytes();
    cudnn_trace_format::glibc_at_least(v, (major, minor))
}

/// Whether an object whose file name is `name` is loaded in the shim's own
/// (audit) namespace. `dl_iterate_phdr` lists the caller's namespace; it is
/// no dlfcn function, so calling it from `la_version` is safe on every
/// glibc (unlike `dladdr`, BZ #29078).
pub fn own_namespace_has(name: &[u8]) -> bool {
    unsafe extern "C" fn each(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        data: *mut core::ffi::c_void,
    ) -> core::ffi::c_int {
        // SAFETY: glibc passes a valid record; `data` is the name below.
        unsafe {
            let want = &*(data as *const &[u8]);
            let path = (*info).dlpi_name;
            if path.is_null() {
                return 0;
            }
            let path = core::ffi::CStr::from_ptr(path).to_bytes();
            core::ffi::c_int::from(cudnn_trace_format::basename(path) == *want)
        }
    }
    let mut want: &[u8] = name;
    // SAFETY: the callback reads the records and `want` only.
    unsafe { libc::dl_iterate_phdr(Some(each), (&mut want as *mut &[u8]).cast()) != 0 }
}
