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
