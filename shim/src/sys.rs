//! Declarations glibc provides but the `libc` crate does not: the public part
//! of `struct link_map` and the rtld-audit constants (`<link.h>`, rtld-audit(7)).

use core::ffi::c_char;

/// The public prefix of glibc's `struct link_map` (`<link.h>`). A `dlopen`
/// handle in glibc is a pointer to this structure, and rtld-audit callbacks
/// receive it; only these five fields are ABI.
#[repr(C)]
pub struct LinkMap {
    /// Difference between the addresses in the ELF file and in memory.
    pub l_addr: usize,
    /// Absolute (or as-given) file name; empty for the main program.
    pub l_name: *const c_char,
    /// The dynamic section, in memory.
    pub l_ld: *const Dyn,
    pub l_next: *mut LinkMap,
    pub l_prev: *mut LinkMap,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Dyn {
    pub d_tag: i64,
    pub d_val: u64,
}

pub const DT_NULL: i64 = 0;
pub const DT_NEEDED: i64 = 1;
pub const DT_STRTAB: i64 = 5;
pub const DT_INIT: i64 = 12;
pub const DT_FINI: i64 = 13;
pub const DT_SONAME: i64 = 14;
pub const DT_RPATH: i64 = 15;
pub const DT_RUNPATH: i64 = 29;

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

/// `dladdr1` flag asking for the `struct link_map *`.
pub const RTLD_DL_LINKMAP: i32 = 2;

/// glibc's `struct dl_find_object` (2.35+, `<dlfcn.h>`).
#[repr(C)]
pub struct DlFindObject {
    pub dlfo_flags: u64,
    pub dlfo_map_start: *mut core::ffi::c_void,
    pub dlfo_map_end: *mut core::ffi::c_void,
    pub dlfo_link_map: *mut LinkMap,
    pub dlfo_eh_frame: *mut core::ffi::c_void,
    pub reserved: [u64; 7],
}

extern "C" {
    /// glibc's version string ("2.36").
    pub fn gnu_get_libc_version() -> *const c_char;
}
