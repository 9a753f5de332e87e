//! The embedded PTX, the table of kernels in it, and loading them for a device.

use crate::abi::{VECTORS_PER_THREAD, VECTOR_BYTES};
use crate::element::{Element, ElementType};
use crate::error::{Error, Result};
use crate::launch::KernelHandle;
use crate::op::Op;
use crate::policy::Policy;
use cust::device::{Device, DeviceAttribute};
use cust::function::{BlockSize, Function};
use cust::module::Module;

/// `(compute capability × 10, PTX)`, newest first; written by `build.rs`.
const PTX: &[(u32, &str)] = include!(concat!(env!("OUT_DIR"), "/ptx_table.rs"));

/// One entry point of the PTX module.
#[derive(Clone, Copy, Debug)]
struct KernelEntry {
    op: Op,
    element: ElementType,
    name: &'static str,
}

macro_rules! kernel_table {
    ($(($name:ident, $op:ident, $t:ty)),* $(,)?) => {
        /// Every reduction kernel in the PTX, from the list in `kernels-gpu/src/abi.rs`.
        const KERNELS: &[KernelEntry] = &[$(
            KernelEntry { op: Op::$op, element: <$t as Element>::TYPE, name: stringify!($name) },
        )*];
    };
}
for_each_reduce_kernel!(kernel_table);

/// The PTX for the newest architecture not newer than `major.minor`.
fn ptx_for(major: u32, minor: u32) -> Result<&'static str> {
    let cc = major * 10 + minor;
    PTX.iter()
        .find(|(arch, _)| cc >= *arch)
        .map(|(_, ptx)| *ptx)
        .ok_or(Error::UnsupportedDevice { major, minor })
}

/// The kernels loaded into the current context, with their launch limits.
#[derive(Debug)]
pub(crate) struct Kernels {
    /// Per entry of `KERNELS`: its handle and its largest useful grid (SMs ×
    /// resident blocks per SM). Declared before `module`, so dropped first.
    loaded: Vec<(KernelHandle, u32)>,
    /// Kept loaded: the handles in `loaded` point into it.
    module: Module,
    policy: Policy,
}

/// The launch shape of one reduction: blocks × threads per block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchShape {
    /// Blocks in the (1-D) grid.
    pub blocks: u32,
    /// Threads per block.
    pub threads_per_block: u32,
}

impl Kernels {
    /// Loads the PTX that fits the current context's device (JIT-compiled by
    /// the driver; cached on disk by it across runs).
    pub(crate) fn load(policy: Option<Policy>) -> Result<Self> {
        let device = cust::context::CurrentContext::get_device()?;
        let (major, minor) = compute_capability(device)?;
        let policy = match policy {
            Some(policy) => policy,
            None => Policy::for_compute_capability(major, minor)?,
        };
        let module = Module::from_ptx(ptx_for(major, minor)?, &[])?;
        let sms = device.get_attribute(DeviceAttribute::MultiprocessorCount)? as u32;

        let mut loaded = Vec::with_capacity(KERNELS.len());
        for entry in KERNELS {
            let function: Function<'_> = module.get_function(entry.name)?;
            let per_sm = function.max_active_blocks_per_multiprocessor(BlockSize::x(policy.block_threads()), 0)?;
            if per_sm == 0 {
                return Err(Error::InvalidPolicy(format!(
                    "{} cannot run with {} threads per block on this device",
                    entry.name,
                    policy.block_threads()
                )));
            }
            loaded.push((KernelHandle(function.to_raw()), sms * per_sm));
        }
        Ok(Kernels { loaded, module, policy })
    }

    /// The largest grid any kernel is launched with: the workspace holds one
    /// partial per block of it.
    pub(crate) fn max_grid(&self) -> u32 {
        self.loaded.iter().map(|&(_, cap)| cap).max().unwrap_or(1)
    }

    /// Any entry point of the module by name (the ladder's kernels, which are
    /// looked up when a ladder strategy is chosen, not on every call).
    pub(crate) fn function(&self, name: &str) -> Result<KernelHandle> {
        Ok(KernelHandle(self.module.get_function(name)?.to_raw()))
    }

    /// The kernel and launch shape for reducing `len` elements of `T` with `op`.
    /// (A unit test checks that every `Op` × `Element` pair has a kernel, so
    /// the `NotFound` error cannot happen with the PTX this crate embeds.)
    pub(crate) fn launch_for<T: Element>(&self, op: Op, len: usize) -> Result<(KernelHandle, LaunchShape)> {
        let index = KERNELS
            .iter()
            .position(|k| k.op == op && k.element == T::TYPE)
            .ok_or(Error::Cuda(cust::error::CudaError::NotFound))?;
        let block = self.policy.block_threads();
        let elements_per_tile = block as u64 * VECTORS_PER_THREAD * (VECTOR_BYTES / T::TYPE.size() as u64);
        let blocks_needed = (len as u64).div_ceil(elements_per_tile).max(1);
        let (kernel, grid_cap) = self.loaded[index];
        let blocks = blocks_needed.min(grid_cap as u64) as u32;
        Ok((
            kernel,
            LaunchShape {
                blocks,
                threads_per_block: block,
            },
        ))
    }
}

fn compute_capability(device: Device) -> Result<(u32, u32)> {
    let major = device.get_attribute(DeviceAttribute::ComputeCapabilityMajor)? as u32;
    let minor = device.get_attribute(DeviceAttribute::ComputeCapabilityMinor)? as u32;
    Ok((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_op_and_element_has_exactly_one_kernel() {
        let elements = [
            ElementType::I32,
            ElementType::U32,
            ElementType::I64,
            ElementType::U64,
            ElementType::F32,
            ElementType::F64,
        ];
        for op in Op::ALL {
            for element in elements {
                let count = KERNELS.iter().filter(|k| k.op == op && k.element == element).count();
                assert_eq!(count, 1, "{op} × {element:?}");
            }
        }
    }

    #[test]
    fn every_kernel_is_in_every_ptx() {
        for (arch, ptx) in PTX {
            for kernel in KERNELS {
                assert!(
                    ptx.contains(&format!(".entry {}(", kernel.name)),
                    "{} missing from sm_{arch} PTX",
                    kernel.name
                );
            }
        }
    }

    #[test]
    fn ptx_is_chosen_by_compute_capability() {
        assert!(ptx_for(9, 0).unwrap().contains(".target sm_90"));
        assert!(ptx_for(10, 0).unwrap().contains(".target sm_90"));
        assert!(ptx_for(8, 6).unwrap().contains(".target sm_70"));
        assert!(ptx_for(7, 0).unwrap().contains(".target sm_70"));
        assert!(matches!(
            ptx_for(6, 1),
            Err(Error::UnsupportedDevice { major: 6, minor: 1 })
        ));
    }
}
