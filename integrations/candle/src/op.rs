//! What a candle user writes: a tensor's storage and layout handed to the
//! library (the layout as a `Strided` view, start offset included), the
//! results in the tensor's dtype (positions as candle's `u32`).

use candle_core::backend::BackendStorage;
use candle_core::cuda_backend::cudarc::driver::{CudaSlice, DeviceRepr};
use candle_core::cuda_backend::CudaDType;
use candle_core::{CpuStorage, CudaStorage, DType, Layout, Shape, Tensor};
use reduce::cudarc::{half::bf16, half::f16, CudarcElement};
use reduce::{axes::Strided, ArgMax, ArgMin, CastTo, DeviceValue, Mean, Op, Over, Reduction, Var, Widened};
use std::sync::{Arc, Mutex};

/// The reductions checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Sum,
    Max,
    Min,
    Mean,
    Var,
    ArgMax,
    ArgMin,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::Sum,
        Kind::Max,
        Kind::Min,
        Kind::Mean,
        Kind::Var,
        Kind::ArgMax,
        Kind::ArgMin,
    ];

    /// candle's own reduction of `t` along `dim`.
    pub fn candle(self, t: &Tensor, dim: usize) -> candle_core::Result<Tensor> {
        match self {
            Kind::Sum => t.sum(dim),
            Kind::Max => t.max(dim),
            Kind::Min => t.min(dim),
            Kind::Mean => t.mean(dim),
            Kind::Var => t.var(dim),
            Kind::ArgMax => t.argmax(dim),
            Kind::ArgMin => t.argmin(dim),
        }
    }

    /// candle's own reduction of `t` along `dims` (one for argmax and max).
    pub fn candle_dims(self, t: &Tensor, dims: &[usize]) -> candle_core::Result<Tensor> {
        match self {
            Kind::Sum => t.sum(dims),
            Kind::Mean => t.mean(dims),
            _ => self.candle(t, dims[0]),
        }
    }

    /// The CPU reference in f64 of `t` along `dim`, row-major over the
    /// other axes.
    pub fn reference(self, t: &Tensor, dim: usize) -> candle_core::Result<Vec<f64>> {
        let values = t.to_dtype(DType::F64)?.to_vec3::<f64>()?;
        let shape = t.dims3()?;
        let at = |i: [usize; 3]| values[i[0]][i[1]][i[2]];
        let extents = [shape.0, shape.1, shape.2];
        let kept: Vec<usize> = (0..3).filter(|&d| d != dim).collect();
        let mut out = Vec::new();
        for a in 0..extents[kept[0]] {
            for b in 0..extents[kept[1]] {
                let along: Vec<f64> = (0..extents[dim])
                    .map(|k| {
                        let mut index = [0; 3];
                        index[kept[0]] = a;
                        index[kept[1]] = b;
                        index[dim] = k;
                        at(index)
                    })
                    .collect();
                let n = along.len() as f64;
                let mean = along.iter().sum::<f64>() / n;
                let first = |better: fn(f64, f64) -> bool| {
                    along
                        .iter()
                        .enumerate()
                        .fold(
                            (0, along[0]),
                            |(i, v), (j, &w)| if better(w, v) { (j, w) } else { (i, v) },
                        )
                        .0 as f64
                };
                out.push(match self {
                    Kind::Sum => along.iter().sum(),
                    Kind::Max => along.iter().copied().fold(f64::MIN, f64::max),
                    Kind::Min => along.iter().copied().fold(f64::MAX, f64::min),
                    Kind::Mean => mean,
                    Kind::Var => along.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0),
                    Kind::ArgMax => first(|w, v| w > v),
                    Kind::ArgMin => first(|w, v| w < v),
                });
            }
        }
        Ok(out)
    }

    /// How far a result may be from the reference, relative: sums, maxima,
    /// minima and positions of the small integers are exact (bf16's sums
    /// rounded once to 8 bits); means and variances rounded in the dtype.
    pub fn tolerance(self, dtype: DType) -> f64 {
        match (self, dtype) {
            (Kind::Max | Kind::Min | Kind::ArgMax | Kind::ArgMin, _) => 0.0,
            (Kind::Sum, DType::BF16) => 1.0 / 256.0,
            (Kind::Sum, _) => 0.0,
            (_, DType::F32) => 1e-5,
            (_, DType::F16) => 1e-3,
            _ => 1e-2,
        }
    }
}

/// `kind` along `dims` of a tensor, enqueued on candle's stream.
pub struct ReduceDims {
    pub kind: Kind,
    pub dims: Vec<usize>,
    pub reducer: Arc<Mutex<reduce::cudarc::Reducer>>,
}

impl candle_core::CustomOp1 for ReduceDims {
    fn name(&self) -> &'static str {
        "reduce-dims"
    }

    fn cpu_fwd(&self, _: &CpuStorage, _: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        candle_core::bail!("the reduce op runs on CUDA tensors")
    }

    fn cuda_fwd(&self, storage: &CudaStorage, layout: &Layout) -> candle_core::Result<(CudaStorage, Shape)> {
        let mut reducer = self
            .reducer
            .lock()
            .map_err(|_| candle_core::Error::Msg("poisoned".into()))?;
        enqueue(storage, layout, self.kind, &self.dims, &mut reducer)
    }
}

fn error(e: reduce::Error) -> candle_core::Error {
    candle_core::Error::Msg(e.to_string())
}

/// A candle layout as the library's view: shape, strides and start offset.
fn strided(layout: &Layout) -> candle_core::Result<Strided> {
    Strided::new(layout.dims(), layout.stride())
        .map(|view| view.with_offset(layout.start_offset()))
        .map_err(error)
}

/// The shape of the results: `dims` dropped.
fn kept_shape(layout: &Layout, dims: &[usize]) -> Shape {
    let kept: Vec<usize> = layout
        .dims()
        .iter()
        .enumerate()
        .filter(|(d, _)| !dims.contains(d))
        .map(|(_, &e)| e)
        .collect();
    Shape::from(kept)
}

/// Enqueues `kind` of the storage along `dims` on candle's stream, into a
/// new storage of the candle dtype of the results.
fn enqueue(
    storage: &CudaStorage,
    layout: &Layout,
    kind: Kind,
    dims: &[usize],
    reducer: &mut reduce::cudarc::Reducer,
) -> candle_core::Result<(CudaStorage, Shape)> {
    match storage.dtype() {
        DType::F32 => match kind {
            Kind::Sum => into::<f32, f32, _>(storage, layout, Op::Sum, dims, reducer),
            Kind::Max => into::<f32, f32, _>(storage, layout, Op::Max, dims, reducer),
            Kind::Min => into::<f32, f32, _>(storage, layout, Op::Min, dims, reducer),
            Kind::Mean => into::<f32, f32, _>(storage, layout, Mean.cast::<f32>(), dims, reducer),
            Kind::Var => into::<f32, f32, _>(storage, layout, Var::<f32>::new(1.0).map_err(error)?, dims, reducer),
            Kind::ArgMax => into::<f32, u32, _>(storage, layout, ArgMax.cast::<u32>(), dims, reducer),
            Kind::ArgMin => into::<f32, u32, _>(storage, layout, ArgMin.cast::<u32>(), dims, reducer),
        },
        DType::F16 => half::<f16>(storage, layout, kind, dims, reducer),
        DType::BF16 => half::<bf16>(storage, layout, kind, dims, reducer),
        dtype => candle_core::bail!("no reduction of {dtype:?} here"),
    }
}

/// The half floats: accumulated in f32, rounded once to the input's dtype.
fn half<H>(
    storage: &CudaStorage,
    layout: &Layout,
    kind: Kind,
    dims: &[usize],
    reducer: &mut reduce::cudarc::Reducer,
) -> candle_core::Result<(CudaStorage, Shape)>
where
    H: CudarcElement + CudaDType + DeviceRepr,
    H::Kernel: reduce::WidensTo<f32> + reduce::MeanInput<Mean = f32> + reduce::ArgInput,
    H::Kernel: DeviceValue<Cudarc = H>,
    f32: CastTo<H::Kernel>,
{
    let wide = |op| Widened::<f32>::new(op).cast::<H::Kernel>();
    match kind {
        Kind::Sum => into::<H, H, _>(storage, layout, wide(Op::Sum), dims, reducer),
        Kind::Max => into::<H, H, _>(storage, layout, wide(Op::Max), dims, reducer),
        Kind::Min => into::<H, H, _>(storage, layout, wide(Op::Min), dims, reducer),
        Kind::Mean => into::<H, H, _>(storage, layout, Mean.cast::<H::Kernel>(), dims, reducer),
        Kind::ArgMax => into::<H, u32, _>(storage, layout, ArgMax.cast::<u32>(), dims, reducer),
        Kind::ArgMin => into::<H, u32, _>(storage, layout, ArgMin.cast::<u32>(), dims, reducer),
        // The library's variance takes f32 and f64 inputs only.
        Kind::Var => candle_core::bail!("no variance of half floats in the library (f32/f64 only)"),
    }
}

/// `what` of the storage's `T`s along `dims` into a new storage of `O`s.
fn into<T, O, R>(
    storage: &CudaStorage,
    layout: &Layout,
    what: R,
    dims: &[usize],
    reducer: &mut reduce::cudarc::Reducer,
) -> candle_core::Result<(CudaStorage, Shape)>
where
    T: CudarcElement + CudaDType,
    O: CudarcElement + CudaDType + DeviceRepr,
    R: for<'a> Reduction<T::Kernel, Results<&'a mut CudaSlice<O>> = &'a mut CudaSlice<O>>,
    R::Output: DeviceValue<Cudarc = O>,
{
    let input = storage.as_cuda_slice::<T>()?;
    let view = strided(layout)?;
    let axes: Vec<isize> = dims.iter().map(|&d| d as isize).collect();
    let results = view.kept_outputs(&axes).map_err(error)?;
    let device = storage.device();
    let stream = device.cuda_stream();
    // SAFETY: reduce_into writes every element before anything reads it
    // (the stream orders the reads after the kernel).
    let mut out: CudaSlice<O> = unsafe { device.alloc::<O>(results)? };
    reducer
        .reduce_into(input, what, Over::Axes(&view, &axes), &mut out, &stream)
        .map_err(error)?;
    Ok((
        CudaStorage::wrap_cuda_slice(out, device.clone()),
        kept_shape(layout, dims),
    ))
}

/// The blocking call: the free function on the tensor's storage and layout,
/// its results (a new cudarc buffer) made a tensor of their dtype.
pub fn blocking(t: &Tensor, kind: Kind, dim: usize) -> candle_core::Result<Tensor> {
    let (storage, layout) = t.storage_and_layout();
    let candle_core::Storage::Cuda(storage) = &*storage else {
        candle_core::bail!("not a CUDA tensor");
    };
    let (results, shape) = match storage.dtype() {
        DType::F32 => match kind {
            Kind::Sum => over::<f32, _, _>(storage, layout, Op::Sum, dim)?,
            Kind::Max => over::<f32, _, _>(storage, layout, Op::Max, dim)?,
            Kind::Min => over::<f32, _, _>(storage, layout, Op::Min, dim)?,
            Kind::Mean => over::<f32, _, _>(storage, layout, Mean.cast::<f32>(), dim)?,
            Kind::Var => over::<f32, _, _>(storage, layout, Var::<f32>::new(1.0).map_err(error)?, dim)?,
            Kind::ArgMax => over::<f32, _, _>(storage, layout, ArgMax.cast::<u32>(), dim)?,
            Kind::ArgMin => over::<f32, _, _>(storage, layout, ArgMin.cast::<u32>(), dim)?,
        },
        DType::F16 => half_over::<f16>(storage, layout, kind, dim)?,
        DType::BF16 => half_over::<bf16>(storage, layout, kind, dim)?,
        dtype => candle_core::bail!("no reduction of {dtype:?} here"),
    };
    Ok(Tensor::from_storage(
        candle_core::Storage::Cuda(results),
        shape,
        candle_core::op::BackpropOp::none(),
        false,
    ))
}

fn half_over<H>(
    storage: &CudaStorage,
    layout: &Layout,
    kind: Kind,
    dim: usize,
) -> candle_core::Result<(CudaStorage, Shape)>
where
    H: CudarcElement + CudaDType + DeviceRepr,
    H::Kernel: reduce::WidensTo<f32> + reduce::MeanInput<Mean = f32> + reduce::ArgInput + DeviceValue<Cudarc = H>,
    f32: CastTo<H::Kernel>,
{
    let wide = |op| Widened::<f32>::new(op).cast::<H::Kernel>();
    match kind {
        Kind::Sum => over::<H, _, _>(storage, layout, wide(Op::Sum), dim),
        Kind::Max => over::<H, _, _>(storage, layout, wide(Op::Max), dim),
        Kind::Min => over::<H, _, _>(storage, layout, wide(Op::Min), dim),
        Kind::Mean => over::<H, _, _>(storage, layout, Mean.cast::<H::Kernel>(), dim),
        Kind::ArgMax => over::<H, _, _>(storage, layout, ArgMax.cast::<u32>(), dim),
        Kind::ArgMin => over::<H, _, _>(storage, layout, ArgMin.cast::<u32>(), dim),
        Kind::Var => candle_core::bail!("no variance of half floats in the library (f32/f64 only)"),
    }
}

/// `what` of the storage's `T`s along `dim`, blocking, into a new storage.
fn over<T, O, R>(
    storage: &CudaStorage,
    layout: &Layout,
    what: R,
    dim: usize,
) -> candle_core::Result<(CudaStorage, Shape)>
where
    T: CudarcElement + CudaDType,
    O: CudaDType,
    R: Reduction<T::Kernel, Results<CudaSlice<O>> = CudaSlice<O>>,
    R::Output: DeviceValue<Cudarc = O>,
{
    let input = storage.as_cuda_slice::<T>()?;
    let view = strided(layout)?;
    let reduced = reduce::reduce_over(input, what, Over::Axes(&view, &[dim as isize])).map_err(error)?;
    let shape = Shape::from(reduced.shape(false));
    Ok((
        CudaStorage::wrap_cuda_slice(reduced.values, storage.device().clone()),
        shape,
    ))
}
