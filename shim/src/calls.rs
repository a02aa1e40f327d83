//! The program's own calls to a few cuDNN / CUDA functions
//! (`docs/versions-and-calls.md`).
//!
//! Nothing is exported and no `dlsym` is hooked. The audit role asks glibc
//! for the symbol bindings that involve a CUDA-family library:
//! `la_objopen` returns `LA_FLG_BINDTO` for each cuDNN, cudart and libcuda
//! object, and `LA_FLG_BINDFROM` for each object with one of those in its
//! DT_NEEDED list (an executable or `libtorch_cuda.so` calling them through
//! the PLT). glibc then calls `la_symbind64`
//! - for a PLT binding only when the referencing object has BINDFROM *and*
//!   the defining one BINDTO (glibc 2.36 `elf/dl-audit.c`,
//!   `_dl_audit_symbind`), at the first call (lazy) or at relocation
//!   (`-z now`: since 2.35, `elf/do-rel.h`, BZ#23734);
//! - for a `dlsym`/`dlvsym` result (flag `LA_SYMB_DLSYM`) when either side
//!   has its flag (`_dl_audit_symbind_alt`), which is how TensorFlow/XLA's
//!   `dlsym` on an `RTLD_LOCAL` handle is seen (`LA_SYMB_DLSYM` in
//!   rtld-audit(7) \[R43\]; XLA's `load_library.cc` \[R23b\]).
//!
//! Other objects get no flag, so their bindings never reach the shim. No
//! `la_pltenter`/`la_pltexit` is exported: since glibc 2.35 the PLT then
//! stays direct (BZ#15533); on older glibc any binding flag would send every
//! PLT call of the object through the profiling trampoline, so calls are
//! not recorded there at all (see [`init`]).
//!
//! `la_symbind64` returns the address the program will use. For a tracked
//! function it returns a *thunk*: a tiny function of the right signature
//! that calls the real one and records the call. To attribute each call to
//! the copy that served it when two copies of cuDNN are loaded, thunks are
//! per (function, slot): [`NSLOT`] monomorphised instances per function,
//! each bound by a slot table to one real address, one copy and one way of
//! reaching it (`plt`, `dlsym`, `cuGetProcAddress`). The same (function,
//! address, copy, way) always gets the same thunk, so pointers the program
//! compares stay comparable. When a function's slots run out its later
//! bindings are left unwrapped (one `note`).
//!
//! `cuGetProcAddress[_v2]` is wrapped too (not recorded): after the real
//! call, a pointer handed out for `cuDriverGetVersion`, `cuInit`,
//! `cuDeviceGetAttribute` or `cuGetProcAddress` itself is replaced by a
//! thunk of the same copy. Since CUDA 11.3 the runtime `dlsym`s only
//! `cuGetProcAddress[_v2]` and fetches every other driver function through
//! it (CUDA Driver API, "Driver Entry Point Access",
//! <https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__DRIVER__ENTRY__POINT.html>;
//! the `dlsym` seen in <https://github.com/NVlabs/NVBit/issues/134>), and a
//! runtime that asks for `cuGetProcAddress` itself must get the wrapper
//! again (an interposer that did not crashed:
//! <https://github.com/tkestack/vcuda-controller/issues/20>).
//!
//! Thunks run on the program's threads, in this (the audit) namespace's code
//! with its own libc: the program's `errno` and `dlerror()` state live in
//! the program's libc and are not touched. After the real call a thunk does
//! one atomic increment; only the first [`CALLS_RECORDED`] calls per
//! function and copy cost an event (one `write(2)`, as the bridge already
//! does on program threads). The totals are written at exit and when a copy
//! is unloaded (`call_counts`). No lock is held across the real call.
//!
//! Calls *between* the libraries of one family (the cuDNN dispatcher
//! forwarding to `libcudnn_graph` through `dlsym`) are not the program's:
//! they are not wrapped, except the core library's version getters, whose
//! thunks record nothing but tell [`crate::versions`] that the library has
//! answered once (the moment it becomes safe to ask it ourselves), and the
//! sub-libraries' `*VersionCheck`, whose answer to the dispatcher becomes
//! the sub-library's version check (the shim never calls those itself:
//! real cuDNN 9's load and initialise the driver). `cuDriverGetVersion` and
//! `cudaRuntimeGetVersion` answers are recorded the same way
//! ([`versions::observed`]).

use crate::lock::ForkSafeLock;
use crate::sys::*;
use crate::trace;
use crate::versions::{self, Pending, Role};
use core::ffi::{c_char, c_int, c_uint, c_void};
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use cudnn_trace_format::{call_via, counts_at, cuda_family, envvar, ev, CALLS_RECORDED};
use std::ffi::CStr;

/// The CUDA families whose libraries are watched.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Family {
    Cudnn,
    Cudart,
    Cuda,
}

impl Family {
    pub fn of(name: &[u8]) -> Option<Family> {
        Family::from_name(cuda_family(name)?)
    }

    /// The family of a `cuda_family` name (`cudnn`, `cudart`, `cuda`).
    pub fn from_name(family: &str) -> Option<Family> {
        match family {
            "cudnn" => Some(Family::Cudnn),
            "cudart" => Some(Family::Cudart),
            "cuda" => Some(Family::Cuda),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Family::Cudnn => "cudnn",
            Family::Cudart => "cudart",
            Family::Cuda => "cuda",
        }
    }
}

/// C signature of a tracked function.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `size_t f(void)`: the cuDNN version getters.
    Size,
    /// `status f(void)`: the `*VersionCheck` functions.
    Status,
    /// `status f(int *out)`: `cudaRuntimeGetVersion`, `cudaDriverGetVersion`,
    /// `cuDriverGetVersion`.
    IntOut,
    /// `cudnnStatus_t cudnnGetProperty(libraryPropertyType, int *)`.
    Prop,
    /// `cudnnStatus_t cudnnCreate(cudnnHandle_t *)` (timed).
    Create,
    /// `cudnnStatus_t cudnnDestroy(cudnnHandle_t)`.
    Destroy,
    /// `CUresult cuInit(unsigned)` (timed).
    Init,
    /// `status f(int *out, attribute, device)`: `cuDeviceGetAttribute`,
    /// `cudaDeviceGetAttribute`; recorded for the compute capability only.
    Attr,
    /// `CUresult cuGetProcAddress(const char *, void **, int, cuuint64_t)`.
    Gpa4,
    /// `cuGetProcAddress_v2`: the same plus `CUdriverProcAddressQueryResult *`.
    Gpa5,
}

struct Def {
    name: &'static str,
    family: Family,
    shape: Shape,
}

const fn def(name: &'static str, family: Family, shape: Shape) -> Def {
    Def {
        name,
        family,
        shape,
    }
}

const F_GET_VERSION: usize = 0;
const F_GET_CUDART_VERSION: usize = 1;
const F_GET_MAX_DEVICE_VERSION: usize = 2;
const F_GET_PROPERTY: usize = 3;
const F_CREATE: usize = 4;
const F_DESTROY: usize = 5;
const F_GRAPH_CHECK: usize = 6;
const F_OPS_CHECK: usize = 7;
const F_CNN_CHECK: usize = 8;
const F_ADV_CHECK: usize = 9;
const F_SUBQUADRATIC_CHECK: usize = 10;
const F_OPS_INFER_CHECK: usize = 11;
const F_OPS_TRAIN_CHECK: usize = 12;
const F_CNN_INFER_CHECK: usize = 13;
const F_CNN_TRAIN_CHECK: usize = 14;
const F_ADV_INFER_CHECK: usize = 15;
const F_ADV_TRAIN_CHECK: usize = 16;
const F_RUNTIME_GET_VERSION: usize = 17;
const F_RT_DRIVER_GET_VERSION: usize = 18;
const F_CU_DRIVER_GET_VERSION: usize = 19;
const F_CU_INIT: usize = 20;
const F_GPA4: usize = 21;
const F_GPA5: usize = 22;
const F_CU_DEVICE_GET_ATTRIBUTE: usize = 23;
const F_CUDA_DEVICE_GET_ATTRIBUTE: usize = 24;
const NFN: usize = 25;

/// The tracked functions (docs/versions-and-calls.md), indexed by `F_*`.
static FNS: [Def; NFN] = {
    use Family::*;
    use Shape::*;
    [
        def("cudnnGetVersion", Cudnn, Size),
        def("cudnnGetCudartVersion", Cudnn, Size),
        def("cudnnGetMaxDeviceVersion", Cudnn, Size),
        def("cudnnGetProperty", Cudnn, Prop),
        def("cudnnCreate", Cudnn, Create),
        def("cudnnDestroy", Cudnn, Destroy),
        def("cudnnGraphVersionCheck", Cudnn, Status),
        def("cudnnOpsVersionCheck", Cudnn, Status),
        def("cudnnCnnVersionCheck", Cudnn, Status),
        def("cudnnAdvVersionCheck", Cudnn, Status),
        def("cudnnSubquadraticOpsVersionCheck", Cudnn, Status),
        def("cudnnOpsInferVersionCheck", Cudnn, Status),
        def("cudnnOpsTrainVersionCheck", Cudnn, Status),
        def("cudnnCnnInferVersionCheck", Cudnn, Status),
        def("cudnnCnnTrainVersionCheck", Cudnn, Status),
        def("cudnnAdvInferVersionCheck", Cudnn, Status),
        def("cudnnAdvTrainVersionCheck", Cudnn, Status),
        def("cudaRuntimeGetVersion", Cudart, IntOut),
        def("cudaDriverGetVersion", Cudart, IntOut),
        def("cuDriverGetVersion", Cuda, IntOut),
        def("cuInit", Cuda, Init),
        def("cuGetProcAddress", Cuda, Gpa4),
        def("cuGetProcAddress_v2", Cuda, Gpa5),
        def("cuDeviceGetAttribute", Cuda, Attr),
        def("cudaDeviceGetAttribute", Cudart, Attr),
    ]
};

fn fn_index(name: &[u8]) -> Option<usize> {
    if !name.starts_with(b"cu") {
        return None;
    }
    FNS.iter().position(|d| d.name.as_bytes() == name)
}

/// The version getters. Once one of them has returned from a cuDNN core
/// library, whatever its first call does has been done, and the shim may
/// call the getters itself ([`crate::versions`]).
fn marks_used(f: usize) -> bool {
    matches!(
        f,
        F_GET_VERSION | F_GET_CUDART_VERSION | F_GET_MAX_DEVICE_VERSION | F_GET_PROPERTY
    )
}

/// The cuDNN sub-libraries' `*VersionCheck` functions: their answers are
/// recorded as the sub-library's version check ([`versions::observed`]),
/// also when the dispatcher calls them for the program.
fn is_check(f: usize) -> bool {
    FNS[f].shape == Shape::Status && FNS[f].family == Family::Cudnn
}

/// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR` / `_MINOR`, the same
/// numbers as `cudaDevAttrComputeCapabilityMajor` / `Minor` (CUDA headers):
/// the device attributes recorded (what a finding on the GPU's age needs);
/// other attribute queries pass through uncounted.
const ATTR_CC: [i64; 2] = [75, 76];

/// Functions whose calls become events (the resolvers are only wrapped).
fn recorded(f: usize) -> bool {
    !matches!(FNS[f].shape, Shape::Gpa4 | Shape::Gpa5)
}

// ---------------------------------------------------------------------------
// Copies: every cuDNN / cudart / libcuda object in the process

/// At most this many such objects at once (a dead record is reused).
pub const MAX_COPIES: usize = 64;

/// One CUDA-family object (one copy of a library).
pub struct Copy {
    pub map: usize,
    /// `l_name`, as in the object's `load` event.
    pub path: Vec<u8>,
    /// `path` with symlinks resolved, as in that event.
    pub realpath: Option<Vec<u8>>,
    pub family: Family,
    pub lmid: i64,
    pub alive: bool,
    pub role: Role,
    /// Not yet known to be relocated and initialised: the safe point that
    /// will tell ([`crate::versions`]).
    pub pending: Option<Pending>,
    pub initialized: bool,
    /// cuDNN: one of its version getters has returned (see [`marks_used`]).
    pub used: bool,
    /// Its version query (or check) has been done or is being done.
    pub queried: bool,
    /// cuDNN core library: the version its query decoded.
    pub version: Option<String>,
    /// Its counts were written when it was unloaded.
    reported: bool,
}

pub static COPIES: ForkSafeLock<Vec<Copy>> = ForkSafeLock::new(Vec::new());
/// Calls per copy and function (the thunks' only shared write).
static COUNTS: [[AtomicU64; NFN]; MAX_COPIES] =
    [const { [const { AtomicU64::new(0) }; NFN] }; MAX_COPIES];
/// Mirror of [`Copy::used`] for the thunks' fast path.
pub static USED: [AtomicBool; MAX_COPIES] = [const { AtomicBool::new(false) }; MAX_COPIES];
/// Per copy, the kinds of version answers already recorded
/// ([`versions::observed`]).
pub static SEEN: [AtomicU8; MAX_COPIES] = [const { AtomicU8::new(0) }; MAX_COPIES];
/// Lock-free mirror of the live copies for `la_symbind64`, which runs for
/// every `dlsym` involving them (a program may `dlsym` in a loop; the lock
/// costs a system call): the link map (0: none) and [`info`] of copy `i`.
static LIVE_MAP: [AtomicUsize; MAX_COPIES] = [const { AtomicUsize::new(0) }; MAX_COPIES];
static LIVE_INFO: [AtomicU8; MAX_COPIES] = [const { AtomicU8::new(0) }; MAX_COPIES];

/// [`info`] bit: a cuDNN core library (its getters are wrapped even for
/// calls from its own family: see [`marks_used`]).
const INFO_CORE: u8 = 0x10;
/// [`info`] bit: a cuDNN sub-library with a `*VersionCheck` (its check is
/// wrapped even for its dispatcher's calls, to see the answer).
const INFO_SUB: u8 = 0x20;

/// Family (low bits) and the role bits of a copy.
fn info(family: Family, role: Role) -> u8 {
    family as u8
        | match role {
            Role::CudnnCore => INFO_CORE,
            Role::CudnnSub(_) => INFO_SUB,
            _ => 0,
        }
}

/// The live copy at `map`.
pub fn find(c: &[Copy], map: usize) -> Option<usize> {
    c.iter().position(|x| x.alive && x.map == map)
}

/// The live copy at `map` and its [`info`], without the lock.
fn find_live(map: usize) -> Option<(usize, u8)> {
    if map == 0 {
        return None;
    }
    (0..MAX_COPIES)
        .find(|&i| LIVE_MAP[i].load(Ordering::Acquire) == map)
        .map(|i| (i, LIVE_INFO[i].load(Ordering::Acquire)))
}

static ENABLED: AtomicBool = AtomicBool::new(false);
/// Why calls are not recorded: `CUDNN_TRACE_CALLS=0`, or an old glibc.
static OFF_BY_ENV: AtomicBool = AtomicBool::new(false);

/// Decides once (from `la_version`) whether calls are recorded and libraries
/// asked for their versions: glibc 2.35 or later (before, a binding flag
/// slows every PLT call of the object and `-z now` bindings are not
/// reported: glibc BZ#15533, BZ#23734), unless `CUDNN_TRACE_CALLS=0`.
pub fn init() {
    let off = std::env::var_os(envvar::CALLS).is_some_and(|v| v == "0");
    let new_enough = crate::sys::glibc_at_least(2, 35);
    OFF_BY_ENV.store(off, Ordering::Relaxed);
    ENABLED.store(new_enough && !off, Ordering::Relaxed);
}

/// Why calls are not recorded in this process (the header's `calls`):
/// `"off"` (`CUDNN_TRACE_CALLS=0`) or `"needs-glibc-2.35"`; None when they
/// are. Valid after [`init`].
pub fn off_reason() -> Option<&'static str> {
    if enabled() {
        None
    } else if OFF_BY_ENV.load(Ordering::Relaxed) {
        Some("off")
    } else {
        Some("needs-glibc-2.35")
    }
}

pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// `la_objopen`: the binding flags for `map` (registering a CUDA-family
/// object first). `realpath`: its resolved path, when the audit role read it.
///
/// # Safety
/// `map` is the object the loader just mapped.
pub unsafe fn objopen(
    map: *mut LinkMap,
    lmid: i64,
    realpath: Option<Vec<u8>>,
    family: Option<&'static str>,
) -> u32 {
    if !enabled() {
        return 0;
    }
    let mut flags = 0;
    let l_name = crate::elf::l_name(map);
    // The family the audit role found (by identity: a renamed copy too),
    // else the file name's.
    let fam = family
        .and_then(Family::from_name)
        .or_else(|| Family::of(l_name));
    if let Some(fam) = fam {
        if register(map, l_name, realpath, lmid, fam) {
            flags |= LA_FLG_BINDTO;
        }
    }
    if crate::elf::any_needed(map, |n| Family::of(n).is_some()) {
        flags |= LA_FLG_BINDFROM;
    }
    flags
}

static FULL_NOTED: AtomicBool = AtomicBool::new(false);

unsafe fn register(
    map: *mut LinkMap,
    path: &[u8],
    realpath: Option<Vec<u8>>,
    lmid: i64,
    family: Family,
) -> bool {
    let realpath = realpath.or_else(|| crate::elf::realpath(path));
    let soname = crate::elf::dyn_string(map, DT_SONAME);
    let role = versions::role(path, soname, family);
    let pending = versions::pending_now();
    let id = COPIES.with(|c| {
        let rec = Copy {
            map: map as usize,
            path: path.to_vec(),
            realpath: realpath.clone(),
            family,
            lmid,
            alive: true,
            role,
            pending: Some(pending),
            initialized: false,
            used: false,
            queried: false,
            version: None,
            reported: false,
        };
        let i = match c.iter().position(|x| !x.alive) {
            Some(i) => {
                c[i] = rec;
                i
            }
            None if c.len() < MAX_COPIES => {
                c.push(rec);
                c.len() - 1
            }
            None => return None,
        };
        for n in &COUNTS[i] {
            n.store(0, Ordering::Relaxed);
        }
        USED[i].store(false, Ordering::Release);
        SEEN[i].store(0, Ordering::Release);
        LIVE_INFO[i].store(info(family, role), Ordering::Release);
        LIVE_MAP[i].store(map as usize, Ordering::Release);
        Some(i)
    });
    match id {
        Some(_) => {
            versions::registered(family, path, realpath.as_deref(), soname);
            true
        }
        None => {
            if !FULL_NOTED.swap(true, Ordering::Relaxed) {
                trace::note(
                    "warning",
                    &format!(
                        "more than {MAX_COPIES} cuDNN/CUDA libraries at once: calls to the later ones are not recorded"
                    ),
                );
            }
            false
        }
    }
}

// ---------------------------------------------------------------------------
// Slots

/// Thunks per function: enough for two copies reached two ways each, twice.
const NSLOT: usize = 8;

const VIA_PLT: u8 = 0;
const VIA_DLSYM: u8 = 1;
const VIA_GPA: u8 = 2;

fn via_name(v: u8) -> &'static str {
    match v {
        VIA_PLT => call_via::PLT,
        VIA_DLSYM => call_via::DLSYM,
        _ => call_via::CU_GET_PROC_ADDRESS,
    }
}

struct Slot {
    taken: AtomicBool,
    real: AtomicUsize,
    copy: AtomicUsize,
    via: AtomicU8,
    /// False for the silent thunks of calls inside one family.
    record: AtomicBool,
}

static SLOTS: [[Slot; NSLOT]; NFN] = [const {
    [const {
        Slot {
            taken: AtomicBool::new(false),
            real: AtomicUsize::new(0),
            copy: AtomicUsize::new(0),
            via: AtomicU8::new(0),
            record: AtomicBool::new(false),
        }
    }; NSLOT]
}; NFN];

static OUT_OF_SLOTS: [AtomicBool; NFN] = [const { AtomicBool::new(false) }; NFN];

/// The slot of function `f` for (`real`, `copy`, `via`, `record`), reused or
/// newly taken. Called with [`COPIES`] held (`c`), which serialises slot
/// changes. A slot of a copy that is gone is free again.
fn slot_for(
    c: &[Copy],
    f: usize,
    real: usize,
    copy: usize,
    via: u8,
    record: bool,
) -> Option<usize> {
    let row = &SLOTS[f];
    let same = existing_slot(f, real, copy, via, record);
    if same.is_some() {
        return same;
    }
    let free = row
        .iter()
        .position(|s| !s.taken.load(Ordering::Acquire))
        .or_else(|| {
            row.iter().position(|s| {
                let owner = s.copy.load(Ordering::Relaxed);
                c.get(owner).is_none_or(|x| !x.alive)
            })
        })?;
    let s = &row[free];
    s.real.store(real, Ordering::Release);
    s.copy.store(copy, Ordering::Release);
    s.via.store(via, Ordering::Release);
    s.record.store(record, Ordering::Release);
    s.taken.store(true, Ordering::Release);
    Some(free)
}

/// The slot already bound to exactly this, if any (lock-free: a slot's
/// fields are written before `taken` is published, and only under the lock).
fn existing_slot(f: usize, real: usize, copy: usize, via: u8, record: bool) -> Option<usize> {
    SLOTS[f].iter().position(|s| {
        s.taken.load(Ordering::Acquire)
            && s.real.load(Ordering::Relaxed) == real
            && s.copy.load(Ordering::Relaxed) == copy
            && s.via.load(Ordering::Relaxed) == via
            && s.record.load(Ordering::Relaxed) == record
    })
}

fn no_slot_note(f: usize, copy_path: &[u8]) {
    if !OUT_OF_SLOTS[f].swap(true, Ordering::Relaxed) {
        trace::note(
            "warning",
            &format!(
                "no free wrapper for {} (in {}): its calls there are not recorded",
                FNS[f].name,
                String::from_utf8_lossy(copy_path)
            ),
        );
    }
}

// ---------------------------------------------------------------------------
// la_symbind64

/// `la_symbind64`: the address the program will use for this binding.
///
/// # Safety
/// Arguments as glibc passes them (cookies are the objects' link maps).
pub unsafe fn symbind(
    value: usize,
    refcook: *mut usize,
    defcook: *mut usize,
    flags: *mut u32,
    name: *const c_char,
) -> usize {
    if !enabled() || value == 0 || defcook.is_null() || name.is_null() {
        return value;
    }
    let Some(f) = fn_index(CStr::from_ptr(name).to_bytes()) else {
        return value;
    };
    let def = *defcook;
    let refm = if refcook.is_null() { 0 } else { *refcook };
    let via = if !flags.is_null() && *flags & LA_SYMB_DLSYM != 0 {
        VIA_DLSYM
    } else {
        VIA_PLT
    };
    // Decided without the lock; only a new slot takes it.
    let Some((d, d_info)) = find_live(def) else {
        return value;
    };
    let family = d_info & 0x0f;
    if FNS[f].family as u8 != family {
        return value;
    }
    if matches!(f, F_GPA4 | F_GPA5) && refm != 0 && refm != def {
        driver_client(refm, d, f, via);
    }
    let inside = find_live(refm).is_some_and(|(_, r)| r & 0x0f == family);
    let watched =
        (marks_used(f) && d_info & INFO_CORE != 0) || (is_check(f) && d_info & INFO_SUB != 0);
    if inside && !watched {
        return value;
    }
    if let Some(s) = existing_slot(f, value, d, via, !inside) {
        return thunk(f, s);
    }
    bind(f, value, d, via, !inside, |x| x.map == def).unwrap_or(value)
}

/// (referencing object, driver copy) pairs already recorded as
/// `driver_client` events.
static CLIENTS: ForkSafeLock<Vec<(usize, usize)>> = ForkSafeLock::new(Vec::new());

/// Object `client` (a link map) obtained driver copy `driver`'s
/// `cuGetProcAddress[_v2]` (`f`) through `via`: a CUDA runtime asking for
/// the driver's entry points. Its first such binding is a `driver_client`
/// event (issue 14: the object that carries a static runtime shows itself
/// here, and nowhere else). Found from the binding itself: no call, no stack
/// walk, nothing per call.
fn driver_client(client: usize, driver: usize, f: usize, via: u8) {
    let first = CLIENTS.with(|c| {
        if c.contains(&(client, driver)) {
            return false;
        }
        if c.len() >= 256 {
            c.clear();
        }
        c.push((client, driver));
        true
    });
    if !first {
        return;
    }
    let Some(driver_path) = COPIES.with(|c| c.get(driver).map(|x| x.path.clone())) else {
        return;
    };
    // SAFETY: the referencing object of a binding being made is alive.
    let (path, family) = unsafe {
        (
            crate::audit::map_path(client),
            crate::audit::family_of(client),
        )
    };
    let lmid = crate::audit::obj_lmid(client);
    let identity = crate::elf::file_info(&path);
    let runtime = !matches!(family, Some("cudart") | Some("cuda"));
    trace::emit(ev::DRIVER_CLIENT, |l| {
        l.bytes("path", &path).i64("lmid", lmid);
        l.opt_str("family", family).bool("static_runtime", runtime);
        l.str("fn", FNS[f].name).str("via", via_name(via));
        l.bytes("driver", &driver_path);
        // No version of a runtime linked into another object can be read
        // without running its code (its `cudaRuntimeGetVersion` is not
        // exported; the `cudaVersion` it passes to the resolver is each
        // symbol's ABI version, not its own).
        l.null("runtime_version").null("runtime_version_source");
        crate::audit::write_identity(l, identity.as_ref());
    });
}

/// The thunk of function `f` for (`real`, `copy`, `via`, `record`), taking
/// a slot under the lock; `None` when copy `copy` is no longer alive (or
/// `is_it` rejects it), or when `f` has no slot left (noted once).
fn bind(
    f: usize,
    real: usize,
    copy: usize,
    via: u8,
    record: bool,
    is_it: impl Fn(&Copy) -> bool,
) -> Option<usize> {
    let r = COPIES.with(|c| {
        let x = c.get(copy).filter(|x| x.alive && is_it(x))?;
        Some(slot_for(c, f, real, copy, via, record).ok_or_else(|| x.path.clone()))
    });
    match r? {
        Ok(s) => Some(thunk(f, s)),
        Err(path) => {
            no_slot_note(f, &path);
            None
        }
    }
}

// ---------------------------------------------------------------------------
// Thunks

#[inline(always)]
fn real_of(f: usize, s: usize) -> usize {
    SLOTS[f][s].real.load(Ordering::Acquire)
}

/// What one call returned, for its event.
#[derive(Default)]
struct Res {
    status: Option<i64>,
    value: Option<i64>,
    prop: Option<i64>,
    dur_ns: Option<u64>,
    /// Device-attribute calls: the attribute and the device.
    attr: Option<i64>,
    device: Option<i64>,
}

/// After the real call of function `f` through slot `s`: count it, write
/// its event if it is one of the first few, and tell the version reader a
/// getter answered. Never more than an atomic increment past the first few.
#[inline(never)]
fn done(f: usize, s: usize, res: Res) {
    crate::guard((), || {
        if res.attr.is_some_and(|a| !ATTR_CC.contains(&a)) {
            return;
        }
        let slot = &SLOTS[f][s];
        let copy = slot.copy.load(Ordering::Acquire);
        if copy >= MAX_COPIES {
            return;
        }
        if slot.record.load(Ordering::Relaxed) && recorded(f) {
            let n = COUNTS[copy][f].fetch_add(1, Ordering::Relaxed) + 1;
            if n <= CALLS_RECORDED {
                emit_call(f, copy, n, slot.via.load(Ordering::Relaxed), &res);
            }
        }
        if marks_used(f) && !USED[copy].load(Ordering::Acquire) {
            versions::used(copy);
        }
        if let Some(a) = answer(f, &res) {
            versions::observed(copy, a);
        }
    })
}

/// The version answer a call of `f` carries, if it is one the version
/// events record.
fn answer(f: usize, res: &Res) -> Option<versions::Answer> {
    let status = res.status?;
    if is_check(f) {
        return Some(versions::Answer::Check(status));
    }
    match f {
        F_CU_DRIVER_GET_VERSION => Some(versions::Answer::Driver(status, res.value)),
        F_RUNTIME_GET_VERSION => Some(versions::Answer::Runtime(status, res.value)),
        _ => None,
    }
}

fn emit_call(f: usize, copy: usize, n: u64, via: u8, res: &Res) {
    let lib = COPIES.with(|c| c.get(copy).map(|x| x.path.clone()));
    let lib = lib.unwrap_or_default();
    trace::emit(ev::CALL, |l| {
        l.str("fn", FNS[f].name)
            .bytes("lib", &lib)
            .u64("n", n)
            .str("via", via_name(via));
        l.opt_i64("status", res.status)
            .opt_i64("value", res.value)
            .opt_i64("prop", res.prop)
            .opt_u64("dur_ns", res.dur_ns);
        if let (Some(a), Some(d)) = (res.attr, res.device) {
            l.i64("attr", a).i64("device", d);
        }
    });
}

// The real functions are called as "C-unwind": should one ever throw, the
// exception passes through the thunk to the program as it would without it.
type FnSize = unsafe extern "C-unwind" fn() -> usize;
type FnStatus = unsafe extern "C-unwind" fn() -> c_int;
type FnIntOut = unsafe extern "C-unwind" fn(*mut c_int) -> c_int;
type FnProp = unsafe extern "C-unwind" fn(c_int, *mut c_int) -> c_int;
type FnCreate = unsafe extern "C-unwind" fn(*mut *mut c_void) -> c_int;
type FnDestroy = unsafe extern "C-unwind" fn(*mut c_void) -> c_int;
type FnInit = unsafe extern "C-unwind" fn(c_uint) -> c_int;
type FnAttr = unsafe extern "C-unwind" fn(*mut c_int, c_int, c_int) -> c_int;
type FnGpa4 = unsafe extern "C-unwind" fn(*const c_char, *mut *mut c_void, c_int, u64) -> c_int;
type FnGpa5 =
    unsafe extern "C-unwind" fn(*const c_char, *mut *mut c_void, c_int, u64, *mut c_int) -> c_int;

unsafe extern "C-unwind" fn t_size<const F: usize, const S: usize>() -> usize {
    let real: FnSize = core::mem::transmute(real_of(F, S));
    let r = real();
    done(
        F,
        S,
        Res {
            value: Some(r as i64),
            ..Res::default()
        },
    );
    r
}

unsafe extern "C-unwind" fn t_status<const F: usize, const S: usize>() -> c_int {
    let real: FnStatus = core::mem::transmute(real_of(F, S));
    let r = real();
    done(
        F,
        S,
        Res {
            status: Some(r as i64),
            ..Res::default()
        },
    );
    r
}

unsafe extern "C-unwind" fn t_int_out<const F: usize, const S: usize>(out: *mut c_int) -> c_int {
    let real: FnIntOut = core::mem::transmute(real_of(F, S));
    let r = real(out);
    let value = (r == 0 && !out.is_null()).then(|| *out as i64);
    done(
        F,
        S,
        Res {
            status: Some(r as i64),
            value,
            ..Res::default()
        },
    );
    r
}

unsafe extern "C-unwind" fn t_prop<const F: usize, const S: usize>(
    prop: c_int,
    out: *mut c_int,
) -> c_int {
    let real: FnProp = core::mem::transmute(real_of(F, S));
    let r = real(prop, out);
    let value = (r == 0 && !out.is_null()).then(|| *out as i64);
    done(
        F,
        S,
        Res {
            status: Some(r as i64),
            value,
            prop: Some(prop as i64),
            ..Res::default()
        },
    );
    r
}

/// The real call `call` of a function whose duration is recorded
/// (`cudnnCreate`, `cuInit`), timed.
#[inline(always)]
fn timed<const F: usize, const S: usize>(call: impl FnOnce() -> c_int) -> c_int {
    let t0 = trace::monotonic_ns();
    let r = call();
    let dur = trace::monotonic_ns().saturating_sub(t0);
    done(
        F,
        S,
        Res {
            status: Some(r as i64),
            dur_ns: Some(dur),
            ..Res::default()
        },
    );
    r
}

unsafe extern "C-unwind" fn t_create<const F: usize, const S: usize>(
    handle: *mut *mut c_void,
) -> c_int {
    let real: FnCreate = core::mem::transmute(real_of(F, S));
    timed::<F, S>(|| real(handle))
}

unsafe extern "C-unwind" fn t_destroy<const F: usize, const S: usize>(
    handle: *mut c_void,
) -> c_int {
    let real: FnDestroy = core::mem::transmute(real_of(F, S));
    let r = real(handle);
    done(
        F,
        S,
        Res {
            status: Some(r as i64),
            ..Res::default()
        },
    );
    r
}

unsafe extern "C-unwind" fn t_init<const F: usize, const S: usize>(flags: c_uint) -> c_int {
    let real: FnInit = core::mem::transmute(real_of(F, S));
    timed::<F, S>(|| real(flags))
}

unsafe extern "C-unwind" fn t_attr<const F: usize, const S: usize>(
    out: *mut c_int,
    attr: c_int,
    device: c_int,
) -> c_int {
    let real: FnAttr = core::mem::transmute(real_of(F, S));
    let r = real(out, attr, device);
    let value = (r == 0 && !out.is_null()).then(|| *out as i64);
    done(
        F,
        S,
        Res {
            status: Some(r as i64),
            value,
            attr: Some(attr as i64),
            device: Some(device as i64),
            ..Res::default()
        },
    );
    r
}

unsafe extern "C-unwind" fn t_gpa4<const F: usize, const S: usize>(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    cuda_version: c_int,
    flags: u64,
) -> c_int {
    let real: FnGpa4 = core::mem::transmute(real_of(F, S));
    let r = real(symbol, pfn, cuda_version, flags);
    if r == 0 {
        handed_out(F, S, symbol, pfn, cuda_version);
    }
    r
}

unsafe extern "C-unwind" fn t_gpa5<const F: usize, const S: usize>(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    cuda_version: c_int,
    flags: u64,
    status: *mut c_int,
) -> c_int {
    let real: FnGpa5 = core::mem::transmute(real_of(F, S));
    let r = real(symbol, pfn, cuda_version, flags, status);
    if r == 0 {
        handed_out(F, S, symbol, pfn, cuda_version);
    }
    r
}

/// After a successful `cuGetProcAddress[_v2]` through slot (`f`, `s`):
/// hands out a thunk of the same copy for the functions we track.
#[inline(never)]
fn handed_out(
    f: usize,
    s: usize,
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    cuda_version: c_int,
) {
    crate::guard((), || unsafe {
        if symbol.is_null() || pfn.is_null() || (*pfn).is_null() {
            return;
        }
        let got = *pfn as usize;
        let slot = &SLOTS[f][s];
        let copy = slot.copy.load(Ordering::Acquire);
        let record = slot.record.load(Ordering::Relaxed);
        let want = match CStr::from_ptr(symbol).to_bytes() {
            b"cuDriverGetVersion" => F_CU_DRIVER_GET_VERSION,
            b"cuInit" => F_CU_INIT,
            b"cuDeviceGetAttribute" => F_CU_DEVICE_GET_ATTRIBUTE,
            b"cuGetProcAddress" => {
                // Which form was handed out: the driver picks it from
                // `cudaVersion` (the _v2 one from 12.0, as cuda.h maps the
                // name); compare with this copy's two exports first.
                let map = COPIES.with(|c| c.get(copy).filter(|x| x.alive).map(|x| x.map));
                let Some(map) = map else { return };
                let m = map as *const LinkMap;
                if crate::elf::lookup(m, b"cuGetProcAddress_v2") == Some(got) {
                    F_GPA5
                } else if crate::elf::lookup(m, b"cuGetProcAddress") == Some(got) {
                    F_GPA4
                } else if cuda_version >= 12000 {
                    F_GPA5
                } else {
                    F_GPA4
                }
            }
            _ => return,
        };
        if let Some(t) = bind(want, got, copy, VIA_GPA, record, |_| true) {
            *pfn = t as *mut c_void;
        }
    })
}

macro_rules! row {
    ($t:ident, $f:expr) => {
        [
            $t::<{ $f }, 0> as *const () as usize,
            $t::<{ $f }, 1> as *const () as usize,
            $t::<{ $f }, 2> as *const () as usize,
            $t::<{ $f }, 3> as *const () as usize,
            $t::<{ $f }, 4> as *const () as usize,
            $t::<{ $f }, 5> as *const () as usize,
            $t::<{ $f }, 6> as *const () as usize,
            $t::<{ $f }, 7> as *const () as usize,
        ]
    };
}

/// The address of thunk (`f`, `s`).
fn thunk(f: usize, s: usize) -> usize {
    let row: [usize; NSLOT] = match f {
        F_GET_VERSION => row!(t_size, F_GET_VERSION),
        F_GET_CUDART_VERSION => row!(t_size, F_GET_CUDART_VERSION),
        F_GET_MAX_DEVICE_VERSION => row!(t_size, F_GET_MAX_DEVICE_VERSION),
        F_GET_PROPERTY => row!(t_prop, F_GET_PROPERTY),
        F_CREATE => row!(t_create, F_CREATE),
        F_DESTROY => row!(t_destroy, F_DESTROY),
        F_GRAPH_CHECK => row!(t_status, F_GRAPH_CHECK),
        F_OPS_CHECK => row!(t_status, F_OPS_CHECK),
        F_CNN_CHECK => row!(t_status, F_CNN_CHECK),
        F_ADV_CHECK => row!(t_status, F_ADV_CHECK),
        F_SUBQUADRATIC_CHECK => row!(t_status, F_SUBQUADRATIC_CHECK),
        F_OPS_INFER_CHECK => row!(t_status, F_OPS_INFER_CHECK),
        F_OPS_TRAIN_CHECK => row!(t_status, F_OPS_TRAIN_CHECK),
        F_CNN_INFER_CHECK => row!(t_status, F_CNN_INFER_CHECK),
        F_CNN_TRAIN_CHECK => row!(t_status, F_CNN_TRAIN_CHECK),
        F_ADV_INFER_CHECK => row!(t_status, F_ADV_INFER_CHECK),
        F_ADV_TRAIN_CHECK => row!(t_status, F_ADV_TRAIN_CHECK),
        F_RUNTIME_GET_VERSION => row!(t_int_out, F_RUNTIME_GET_VERSION),
        F_RT_DRIVER_GET_VERSION => row!(t_int_out, F_RT_DRIVER_GET_VERSION),
        F_CU_DRIVER_GET_VERSION => row!(t_int_out, F_CU_DRIVER_GET_VERSION),
        F_CU_INIT => row!(t_init, F_CU_INIT),
        F_GPA4 => row!(t_gpa4, F_GPA4),
        F_GPA5 => row!(t_gpa5, F_GPA5),
        F_CU_DEVICE_GET_ATTRIBUTE => row!(t_attr, F_CU_DEVICE_GET_ATTRIBUTE),
        _ => row!(t_attr, F_CUDA_DEVICE_GET_ATTRIBUTE),
    };
    row[s]
}

// ---------------------------------------------------------------------------
// Totals

/// (function, calls) of copy `id` called more than the recorded first few times.
fn over(id: usize) -> Vec<(usize, u64)> {
    (0..NFN)
        .filter(|&f| recorded(f))
        .map(|f| (f, COUNTS[id][f].load(Ordering::Relaxed)))
        .filter(|&(_, n)| n > CALLS_RECORDED)
        .collect()
}

fn emit_counts(at: &str, rows: &[(Vec<u8>, usize, u64)]) {
    if rows.is_empty() {
        return;
    }
    trace::emit(ev::CALL_COUNTS, |l| {
        l.str("at", at);
        l.nested("counts", |n| {
            n.array_of_objects(rows, |o, (lib, f, n)| {
                o.str("fn", FNS[*f].name).bytes("lib", lib).u64("n", *n);
            })
        });
    });
}

/// `la_objclose` of `map`: the copy is gone; its totals are written unless
/// [`exiting`] already did. `at_exit`: closed by `_dl_fini`, which closes the
/// other namespaces before the main one (glibc 2.36 `elf/dl-fini.c`), so
/// copies loaded with `dlmopen` get here first.
pub fn closed(map: usize, at_exit: bool) {
    // Runs for every object closed: most are no copy, and need no lock.
    if !enabled() || find_live(map).is_none() {
        return;
    }
    let rows = COPIES.with(|c| {
        let i = find(c, map)?;
        c[i].alive = false;
        LIVE_MAP[i].store(0, Ordering::Release);
        if c[i].pending.take().is_some() {
            versions::not_pending();
        }
        if c[i].reported {
            return None;
        }
        c[i].reported = true;
        let path = c[i].path.clone();
        Some(
            over(i)
                .into_iter()
                .map(|(f, n)| (path.clone(), f, n))
                .collect::<Vec<_>>(),
        )
    });
    if let Some(rows) = rows {
        let at = if at_exit {
            counts_at::EXIT
        } else {
            counts_at::UNLOAD
        };
        emit_counts(at, &rows);
    }
}

/// `la_objclose` of the main program, the first object `_dl_fini` closes at
/// exit: the totals of every copy still loaded.
pub fn exiting() {
    if !enabled() {
        return;
    }
    let rows = COPIES.with(|c| {
        let mut rows = Vec::new();
        for (i, x) in c.iter_mut().enumerate() {
            if !x.alive || x.reported {
                continue;
            }
            x.reported = true;
            rows.extend(over(i).into_iter().map(|(f, n)| (x.path.clone(), f, n)));
        }
        rows
    });
    emit_counts(counts_at::EXIT, &rows);
}

/// In a child just forked (the program's libc runs this through the bridge):
/// its calls are counted from zero, as its trace file starts afresh.
pub fn forked() {
    for row in &COUNTS {
        for n in row {
            n.store(0, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_consistent() {
        assert_eq!(fn_index(b"cudnnGetVersion"), Some(F_GET_VERSION));
        assert_eq!(fn_index(b"cuGetProcAddress_v2"), Some(F_GPA5));
        assert_eq!(fn_index(b"cuGetProcAddress"), Some(F_GPA4));
        assert_eq!(fn_index(b"cuInit"), Some(F_CU_INIT));
        assert_eq!(fn_index(b"cudnnGetErrorString"), None);
        assert_eq!(fn_index(b"malloc"), None);
        // Every (function, slot) is its own thunk.
        let mut all: Vec<usize> = (0..NFN)
            .flat_map(|f| (0..NSLOT).map(move |s| thunk(f, s)))
            .collect();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), NFN * NSLOT);
    }
}
