//! The parameters of each family of entry points: one `#[repr(C)]` struct
//! of `u64`s per family, listed by
//! [`for_each_kernel_args!`](crate::for_each_kernel_args). An entry point
//! takes the struct's fields as `.u64` parameters in declaration order, the
//! emulator passes the struct itself, and the host passes a pointer to each
//! field ([`KernelArgs::as_words`]).

use super::kernel::Kernel;

/// The parameters of a family of entry points, as the host passes them: a
/// `#[repr(C)]` struct of `u64`s (addresses, lengths, plans), each field one
/// `.u64` parameter of the PTX entry point, in order.
pub trait KernelArgs: Copy + Send + Sync {
    /// Whether `kernel` takes these parameters.
    fn fits(kernel: Kernel) -> bool;
    /// The fields, in parameter order.
    fn as_words(&self) -> &[u64];
}

/// Calls `$callback! { $extra Args [field ...], ... }` with every argument
/// struct and its fields (each a `u64`, in parameter order).
#[macro_export]
macro_rules! for_each_kernel_args {
    ($callback:ident $($extra:tt)*) => {
        $callback! { $($extra)*
            ReduceArgs [input len partials ticket out],
            SegmentedArgs [input len offsets segments row_len row_pitch row_group group_pitch plan partials tickets status out
                shifts finish finish_param
                placed_dims placed_extent0 placed_stride0 placed_extent1 placed_stride1
                placed_extent2 placed_stride2 placed_extent3 placed_stride3
                runs run_pitch],
            ArgArgs [input len partials ticket value_out index_out],
            DotArgs [a b len partials ticket out],
            AxisArgs [input reduced reduced_stride outputs kept_dims
                extent0 stride0 extent1 stride1 extent2 stride2 extent3 stride3
                extent4 stride4 extent5 stride5 extent6 stride6 extent7 stride7
                plan partials tickets finish finish_param means out offsets status
                placed_dims placed_extent0 placed_stride0 placed_extent1 placed_stride1
                placed_extent2 placed_stride2 placed_extent3 placed_stride3],
            LadderArgs [input len out],
            SeedDotArgs [a b len out],
            DivideArgs [out len count],
            ConvertArgs [input len out],
            ExactArgs [input len partials ticket scratch out form shifts finish_param rows
                row_pitch run_len run_pitch],
            ExactDotArgs [a b len partials ticket scratch out],
        }
    };
}

macro_rules! define_kernel_args {
    ($($name:ident [$($field:ident)*]),* $(,)?) => {$(
        /// The parameters of one family of entry points (see the module
        /// docs and the family's [`Kernel`] variant): one `u64` each.
        #[repr(C)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $name {
            $(#[allow(missing_docs)] pub $field: u64,)*
        }

        impl $name {
            const WORDS: usize = [$(stringify!($field)),*].len();
        }

        // `as_words` views the struct as `[u64; WORDS]`.
        const _: () = assert!(core::mem::size_of::<$name>() == $name::WORDS * 8);
    )*};
}
for_each_kernel_args!(define_kernel_args);

macro_rules! most_kernel_words {
    ($($name:ident [$($field:ident)*]),* $(,)?) => {
        /// The most `.u64` parameters an entry point takes: the fields of the
        /// longest argument struct (the host sizes its parameter array by it).
        pub const MAX_KERNEL_WORDS: usize = {
            let mut most = 0;
            $(if $name::WORDS > most {
                most = $name::WORDS;
            })*
            most
        };
    };
}
for_each_kernel_args!(most_kernel_words);

macro_rules! kernel_args_words {
    ($($name:ident: $($family:ident)|*),* $(,)?) => {$(
        impl KernelArgs for $name {
            fn fits(kernel: Kernel) -> bool {
                matches!(kernel, $(Kernel::$family { .. })|*)
            }
            fn as_words(&self) -> &[u64] {
                // SAFETY: `#[repr(C)]` struct of `WORDS` `u64` fields (asserted
                // above): no padding, `u64` alignment.
                unsafe { core::slice::from_raw_parts(self as *const Self as *const u64, Self::WORDS) }
            }
        }
    )*};
}
#[cfg(not(target_arch = "nvptx64"))]
kernel_args_words!(
    ReduceArgs: Reduce | Widened,
    SegmentedArgs: Segmented | ExactSegments,
    AxisArgs: Axis | WidenedAxis | Statistic | StatisticStates | StatisticSegments | ArgAxis | ExactAxis | Gather,
    ArgArgs: Arg,
    DotArgs: Dot | UserPair,
    LadderArgs: Ladder,
    SeedDotArgs: SeedDot,
    DivideArgs: DivideByCount,
    ConvertArgs: Convert,
    ExactArgs: ExactSum | ExactRowRuns | ExactState | ExactMerge,
    ExactDotArgs: ExactDot | ExactDotState,
);
