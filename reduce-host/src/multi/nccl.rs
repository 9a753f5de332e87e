//! NCCL, loaded at run time through `cudarc`'s bindings: every NCCL call of
//! the crate is in this file.
//!
//! `cudarc` opens the library by name on first use and panics if it cannot
//! (or if a symbol is missing), so [`load`] first checks, once per process,
//! that the library opens and that its version is one whose symbols we call;
//! every other function here starts by calling it, so nothing below can reach
//! `cudarc`'s panics.

use crate::error::{Error, Result};
use cudarc::nccl::sys;
use std::ffi::CStr;
use std::sync::OnceLock;

/// The oldest NCCL whose functions we call (`ncclCommGetAsyncError` is 2.4,
/// `ncclGetLastError` 2.13).
const OLDEST_VERSION: i32 = 2_13_00;

/// The name NCCL's runtime packages (Debian's libnccl2, pip's wheels) install,
/// which is not among the names `cudarc` tries.
const RUNTIME_SONAME: &str = "libnccl.so.2";

/// NCCL's version as `(major, minor, patch)`, loading the library if needed:
/// [`Error::NcclUnavailable`] where it cannot be loaded.
pub(crate) fn load() -> Result<(u32, u32, u32)> {
    static LOADED: OnceLock<std::result::Result<i32, String>> = OnceLock::new();
    let code = LOADED
        .get_or_init(check_library)
        .clone()
        .map_err(|reason| Error::NcclUnavailable { reason })?;
    // NCCL ≥ 2.9 encodes the version as major·10000 + minor·100 + patch.
    Ok(((code / 10_000) as u32, (code / 100 % 100) as u32, (code % 100) as u32))
}

fn check_library() -> std::result::Result<i32, String> {
    // SAFETY: only tries to open the library files.
    if !unsafe { sys::is_culib_present() } {
        // SAFETY: opening a shared library runs its initialisers; NCCL's are benign.
        let runtime_only = unsafe { libloading::Library::new(RUNTIME_SONAME) }.is_ok();
        return Err(if runtime_only {
            format!(
                "{RUNTIME_SONAME} was found, but cudarc, which loads NCCL, opens `libnccl.so`, which only NCCL's development package installs: \
                 link it in a folder on LD_LIBRARY_PATH (`ln -s /path/to/{RUNTIME_SONAME} <folder>/libnccl.so`)"
            )
        } else {
            "libnccl.so was not found on the library path: install NCCL (Debian's libnccl-dev installs libnccl.so; \
             `pip install nvidia-nccl-cu12` installs site-packages/nvidia/nccl/lib/libnccl.so.2, which needs a link named libnccl.so) \
             and put its folder on LD_LIBRARY_PATH (single-GPU reductions do not need NCCL)"
                .to_string()
        });
    }
    let mut version = 0;
    // SAFETY: the library is present; writes one int.
    let result = unsafe { sys::ncclGetVersion(&mut version) };
    if result != sys::ncclResult_t::ncclSuccess {
        return Err(format!("ncclGetVersion failed with {result:?}"));
    }
    if version < OLDEST_VERSION {
        return Err(format!(
            "NCCL {version} is too old: reduce::multi needs NCCL 2.13 or newer"
        ));
    }
    Ok(version)
}

/// Turns an NCCL result into [`Error::Nccl`], with NCCL's last error message.
fn check(result: sys::ncclResult_t, call: &'static str, comm: sys::ncclComm_t) -> Result<()> {
    if result == sys::ncclResult_t::ncclSuccess {
        return Ok(());
    }
    // SAFETY: the library is loaded (every caller ran `load` first); NCCL
    // returns a static or thread-local NUL-terminated string.
    let message = unsafe {
        let detail = sys::ncclGetLastError(comm);
        let text = if detail.is_null() || *detail == 0 {
            sys::ncclGetErrorString(result)
        } else {
            detail
        };
        CStr::from_ptr(text).to_string_lossy().into_owned()
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
    load()?;
    let mut id = sys::ncclUniqueId { internal: [0; 128] };
    // SAFETY: writes one id.
    check(
        unsafe { sys::ncclGetUniqueId(&mut id) },
        "ncclGetUniqueId",
        std::ptr::null_mut(),
    )?;
    Ok(id.internal.map(|c| c as u8))
}

/// One rank's communicator; destroyed on drop.
#[derive(Debug)]
pub(crate) struct Comm(sys::ncclComm_t);

// SAFETY: an NCCL communicator may be used from any thread, one at a time;
// `&mut` access (or ownership) guarantees that.
unsafe impl Send for Comm {}

impl Comm {
    /// One communicator per device of `devices` (CUDA ordinals, distinct),
    /// ranks in that order, all in this process.
    pub(crate) fn init_all(devices: &[i32]) -> Result<Vec<Comm>> {
        load()?;
        let mut comms = vec![std::ptr::null_mut(); devices.len()];
        let count = devices.len() as i32;
        // SAFETY: `comms` has room for one handle per device.
        check(
            unsafe { sys::ncclCommInitAll(comms.as_mut_ptr(), count, devices.as_ptr()) },
            "ncclCommInitAll",
            std::ptr::null_mut(),
        )?;
        Ok(comms.into_iter().map(Comm).collect())
    }

    /// Rank `rank` of `world_size` ranks that share `id`, on the current device.
    /// Blocks until every rank has called it.
    pub(crate) fn init_rank(id: &[u8; 128], world_size: i32, rank: i32) -> Result<Comm> {
        load()?;
        let id = sys::ncclUniqueId {
            internal: id.map(|b| b as std::ffi::c_char),
        };
        let mut comm = std::ptr::null_mut();
        // SAFETY: writes one handle.
        check(
            unsafe { sys::ncclCommInitRank(&mut comm, world_size, id, rank) },
            "ncclCommInitRank",
            std::ptr::null_mut(),
        )?;
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
        check(
            sys::ncclAllGather(
                send as *const std::ffi::c_void,
                recv as *mut std::ffi::c_void,
                bytes,
                sys::ncclDataType_t::ncclUint8,
                self.0,
                stream.as_inner() as sys::cudaStream_t,
            ),
            "ncclAllGather",
            self.0,
        )
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        // SAFETY: the handle came from a successful init and is destroyed once.
        // An error here (a peer that died) cannot be reported from `drop`.
        let _ = unsafe { sys::ncclCommDestroy(self.0) };
    }
}

/// Runs `f`, which enqueues one collective per communicator of this process,
/// between `ncclGroupStart` and `ncclGroupEnd`, as NCCL requires when one
/// thread drives several ranks.
pub(crate) fn group<R>(f: impl FnOnce() -> Result<R>) -> Result<R> {
    load()?;
    // SAFETY: no arguments; pairs with the `ncclGroupEnd` below on every path.
    check(unsafe { sys::ncclGroupStart() }, "ncclGroupStart", std::ptr::null_mut())?;
    let result = f();
    // SAFETY: closes the group opened above.
    let end = check(unsafe { sys::ncclGroupEnd() }, "ncclGroupEnd", std::ptr::null_mut());
    let value = result?;
    end?;
    Ok(value)
}
