//! What the two libraries cudnn-trace injects into a process share.
//!
//! * [`elf`]: reading a loaded object in place: its `struct link_map`, its
//!   dynamic section, its symbols (no system call, no allocation, no call
//!   into the loader);
//! * [`bridge`]: the table of functions the audit library (`libcdtrace.so`)
//!   hands the preload helper (`libcdtrace_preload.so`), and how the audit
//!   library recognises the helper.
//!
//! `no_std` and without dependencies: the preload helper, which is loaded
//! into the program's own namespace, must not bring a single library with it
//! (issue 14), and it uses this crate.

#![cfg_attr(not(test), no_std)]

pub mod bridge;
pub mod elf;
