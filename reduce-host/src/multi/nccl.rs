//! NCCL, opened at run time by this file (every NCCL call of the crate is
//! here), not through cudarc's bindings: those link `-lnccl` when cudarc is
//! built in its `dynamic-linking` mode (candle asks for it), which would make
//! every program that uses this crate beside such a framework need NCCL to
//! link, even for one GPU.
//!
//! [`load`] opens the library once per process (`libnccl.so`, else the
//! runtime packages' `libnccl.so.2`), resolves every symbol we call and
//! checks the version; every other function here starts by calling it, so
//! a missing library or symbol is [`Error::NcclUnavailable`], never a crash.

use crate::error::{Error, Result};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;

/// The oldest NCCL whose functions we call (`ncclCommGetAsyncError` is 2.4,
/// `ncclGetLastError` 2.13).
const OLDEST_VERSION: i32 = 2_13_00;

/// The names tried, in order: the development package's link, then the
/// runtime packages' (Debian's libnccl2, pip's nvidia-nccl-cu12/13) soname.
const LIBRARY_NAMES: [&str; 2] = ["libnccl.so", "libnccl.so.2"];

/// `ncclResult_t` (a C enum): `ncclSuccess` is 0.
type NcclResult = c_int;
const SUCCESS: NcclResult = 0;
/// `ncclDataType_t`'s `ncclUint8`.
const UINT8: c_int = 1;
/// `ncclComm_t`: an opaque handle.
type CommHandle = *mut c_void;

/// `ncclUniqueId`.
#[repr(C)]
#[derive(Clone, Copy)]
struct UniqueIdBytes {
    internal: [c_char; 128],
}

/// The library and the functions we call, resolved once.
struct Library {
    get_version: unsafe extern "C" fn(*mut c_int) -> NcclResult,
    get_last_error: unsafe extern "C" fn(CommHandle) -> *const c_char,
    get_error_string: unsafe extern "C" fn(NcclResult) -> *const c_char,
    get_unique_id: unsafe extern "C" fn(*mut UniqueIdBytes) -> NcclResult,
    comm_init_all: unsafe extern "C" fn(*mut CommHandle, c_int, *const c_int) -> NcclResult,
    comm_init_rank: unsafe extern "C" fn(*mut CommHandle, c_int, UniqueIdBytes, c_int) -> NcclResult,
    all_gather: unsafe extern "C" fn(*const c_void, *mut c_void, usize, c_int, CommHandle, *mut c_void) -> NcclResult,
    comm_destroy: unsafe extern "C" fn(CommHandle) -> NcclResult,
    group_start: unsafe extern "C" fn() -> NcclResult,
    group_end: unsafe extern "C" fn() -> NcclResult,
    /// Kept open for the process's lifetime (the functions above point into it).
    _library: libloading::Library,
}

static LIBRARY: OnceLock<std::result::Result<Library, String>> = OnceLock::new();

/// NCCL's version as `(major, minor, patch)`, loading the library if needed:
/// [`Error::NcclUnavailable`] where it cannot be loaded.
pub(crate) fn load() -> Result<(u32, u32, u32)> {
    let library = nccl()?;
    let mut code = 0;
    // SAFETY: writes one int; the function was resolved from the library.
    let result = unsafe { (library.get_version)(&mut code) };
    if result != SUCCESS {
        return Err(Error::NcclUnavailable {
            reason: format!("ncclGetVersion failed with {result}"),
        });
    }
    // NCCL ≥ 2.9 encodes the version as major·10000 + minor·100 + patch.
    Ok(((code / 10_000) as u32, (code / 100 % 100) as u32, (code % 100) as u32))
}

/// The loaded library, or why it could not be.
fn nccl() -> Result<&'static Library> {
    LIBRARY
        .get_or_init(open)
        .as_ref()
        .map_err(|reason| Error::NcclUnavailable { reason: reason.clone() })
}

fn open() -> std::result::Result<Library, String> {
    // SAFETY: opening a shared library runs its initialisers; NCCL's are benign.
    let library = LIBRARY_NAMES
        .iter()
        .find_map(|name| unsafe { libloading::Library::new(*name) }.ok())
        .ok_or_else(|| {
            "NCCL was not found on the library path (neither libnccl.so nor libnccl.so.2): install it (Debian's \
             libnccl2, or `pip install nvidia-nccl-cu12`, whose site-packages/nvidia/nccl/lib holds libnccl.so.2) and \
             put its folder on LD_LIBRARY_PATH (single-GPU reductions do not need NCCL)"
                .to_string()
        })?;
    macro_rules! symbol {
        ($name:literal) => {
            // SAFETY: the type is the function's C signature in nccl.h
            // (2.13 and later); the pointer is used only while `library`
            // is open, which it is for the process's lifetime.
            *unsafe { library.get(concat!($name, "\0").as_bytes()) }
                .map_err(|error| format!("the NCCL library lacks {}: {error}", $name))?
        };
    }
    let loaded = Library {
        get_version: symbol!("ncclGetVersion"),
        get_last_error: symbol!("ncclGetLastError"),
        get_error_string: symbol!("ncclGetErrorString"),
        get_unique_id: symbol!("ncclGetUniqueId"),
        comm_init_all: symbol!("ncclCommInitAll"),
        comm_init_rank: symbol!("ncclCommInitRank"),
        all_gather: symbol!("ncclAllGather"),
        comm_destroy: symbol!("ncclCommDestroy"),
        group_start: symbol!("ncclGroupStart"),
        group_end: symbol!("ncclGroupEnd"),
        _library: library,
    };
    let mut version = 0;
    // SAFETY: writes one int.
    let result = unsafe { (loaded.get_version)(&mut version) };
    if result != SUCCESS {
        return Err(format!("ncclGetVersion failed with {result}"));
    }
    if version < OLDEST_VERSION {
        return Err(format!(
            "NCCL {version} is too old: reduce::multi needs NCCL 2.13 or newer"
        ));
    }
    Ok(loaded)
}

/// Turns an NCCL result into [`Error::Nccl`], with NCCL's last error message.
fn check(library: &Library, result: NcclResult, call: &'static str, comm: CommHandle) -> Result<()> {
    if result == SUCCESS {
        return Ok(());
    }
    // SAFETY: NCCL returns a static or thread-local NUL-terminated string
    // (or null from ncclGetLastError when it has none).
    let message = unsafe {
        let detail = (library.get_last_error)(comm);
        let text = if detail.is_null() || *detail == 0 {
            (library.get_error_string)(result)
        } else {
            detail
        };
        match text.is_null() {
            true => String::new(),
            false => CStr::from_ptr(text).to_string_lossy().into_owned(),
        }
    };
    Err(Error::Nccl {
        call,
        code: result as u32,
        message,
    })
}

/// A 128-byte id from `ncclGetUniqueId`, which every rank of a communicator
/// must be given.
pub(crate) fn unique_id() -> Result<[u8; 128]> {
    let library = nccl()?;
    let mut id = UniqueIdBytes { internal: [0; 128] };
    // SAFETY: writes one id.
    let result = unsafe { (library.get_unique_id)(&mut id) };
    check(library, result, "ncclGetUniqueId", std::ptr::null_mut())?;
    Ok(id.internal.map(|c| c as u8))
}

/// One rank's communicator; destroyed on drop.
#[derive(Debug)]
pub(crate) struct Comm(CommHandle);

// SAFETY: an NCCL communicator may be used from any thread, one at a time;
// `&mut` access (or ownership) guarantees that.
unsafe impl Send for Comm {}

impl Comm {
    /// One communicator per device of `devices` (CUDA ordinals, distinct),
    /// ranks in that order, all in this process.
    pub(crate) fn init_all(devices: &[i32]) -> Result<Vec<Comm>> {
        let library = nccl()?;
        let mut comms = vec![std::ptr::null_mut(); devices.len()];
        let count = devices.len() as c_int;
        // SAFETY: `comms` has room for one handle per device.
        let result = unsafe { (library.comm_init_all)(comms.as_mut_ptr(), count, devices.as_ptr()) };
        check(library, result, "ncclCommInitAll", std::ptr::null_mut())?;
        Ok(comms.into_iter().map(Comm).collect())
    }

    /// Rank `rank` of `world_size` ranks that share `id`, on the current device.
    /// Blocks until every rank has called it.
    pub(crate) fn init_rank(id: &[u8; 128], world_size: i32, rank: i32) -> Result<Comm> {
        let library = nccl()?;
        let id = UniqueIdBytes {
            internal: id.map(|b| b as c_char),
        };
        let mut comm = std::ptr::null_mut();
        // SAFETY: writes one handle.
        let result = unsafe { (library.comm_init_rank)(&mut comm, world_size, id, rank) };
        check(library, result, "ncclCommInitRank", std::ptr::null_mut())?;
        Ok(Comm(comm))
    }

    /// Enqueues on `stream` the gather of every rank's `bytes` bytes at
    /// `send` into `recv`, rank `r`'s at `recv + r·bytes`, on every rank.
    ///
    /// # Safety
    /// `send` holds `bytes` bytes and `recv` `bytes × world size` bytes of
    /// device memory of this communicator's device, alive until the stream
    /// has run the gather; `stream` belongs to that device.
    pub(crate) unsafe fn all_gather(
        &self,
        send: u64,
        recv: u64,
        bytes: usize,
        stream: &cust::stream::Stream,
    ) -> Result<()> {
        // A communicator exists only once the library loaded.
        let library = nccl()?;
        // SAFETY: the caller's promises; the function has nccl.h's signature.
        let result = (library.all_gather)(
            send as *const c_void,
            recv as *mut c_void,
            bytes,
            UINT8,
            self.0,
            stream.as_inner() as *mut c_void,
        );
        check(library, result, "ncclAllGather", self.0)
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        // A communicator exists only once the library loaded.
        if let Ok(library) = nccl() {
            // SAFETY: the handle came from a successful init and is destroyed
            // once. An error here (a peer that died) cannot be reported from `drop`.
            let _ = unsafe { (library.comm_destroy)(self.0) };
        }
    }
}

/// Runs `f`, which enqueues one collective per communicator of this process,
/// between `ncclGroupStart` and `ncclGroupEnd`, as NCCL requires when one
/// thread drives several ranks.
pub(crate) fn group<R>(f: impl FnOnce() -> Result<R>) -> Result<R> {
    let library = nccl()?;
    // SAFETY: no arguments; pairs with the `ncclGroupEnd` below on every path.
    let start = unsafe { (library.group_start)() };
    check(library, start, "ncclGroupStart", std::ptr::null_mut())?;
    let result = f();
    // SAFETY: closes the group opened above.
    let end = unsafe { (library.group_end)() };
    let end = check(library, end, "ncclGroupEnd", std::ptr::null_mut());
    let value = result?;
    end?;
    Ok(value)
}
