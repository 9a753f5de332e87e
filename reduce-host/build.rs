//! Gives the library its kernel images: `kernel_images.rs` in `OUT_DIR`, the
//! table of every module's PTX and machine code that `src/backend/images.rs`
//! includes.
//!
//! Two sources, chosen by the cargo feature `build-kernels`:
//! - **off** (what a user gets, on stable Rust): the images shipped in
//!   `kernels/`, xz-compressed, which `scripts/build_kernels.sh` regenerates
//!   from `kernels-gpu` with the pinned nightly and `ptxas` (CI checks that
//!   they match the source). Nothing is compiled here.
//! - **on** (for people changing the kernels, in this repository): the PTX
//!   is built here from `../kernels-gpu` with the pinned nightly
//!   (`build/from_source.rs`), uncompressed, with no machine code: the driver
//!   compiles each module when it is first loaded.

// As in the library (`src/lib.rs`): no arithmetic that can wrap, which a
// build script, compiled without overflow checks in release, would do
// silently. The library's panic lints do not apply: a build script reports a
// failure by panicking.
#![deny(clippy::arithmetic_side_effects)]

use std::collections::{BTreeMap, BTreeSet};
use std::env;
use std::fs;
use std::path::PathBuf;

// Only with `build-kernels`: the kernel crate's files are not part of this
// package (a module that is configured out is never read).
#[cfg(feature = "build-kernels")]
#[path = "../kernels-gpu/src/abi/mod.rs"]
#[allow(dead_code, unused_imports)]
mod abi;
#[cfg(feature = "build-kernels")]
#[path = "build/from_source.rs"]
mod from_source;
#[cfg(feature = "build-kernels")]
#[path = "build/ptx_stores.rs"]
mod ptx_stores;
#[cfg(feature = "build-kernels")]
#[path = "src/tuning.rs"]
#[allow(dead_code)]
mod tuning;

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    #[cfg(feature = "build-kernels")]
    let images = from_source::build(&manifest_dir, &out_dir);
    #[cfg(not(feature = "build-kernels"))]
    let images = shipped(&manifest_dir.join("kernels"));
    fs::write(out_dir.join("kernel_images.rs"), table(&images)).expect("write kernel_images.rs");
}

/// One image folder: every module's PTX (`.ptx`) or machine code
/// (`.cubin`) for one architecture.
struct ImageSet {
    /// Compute capability × 10 (`sm_<arch>`).
    arch: u32,
    cubin: bool,
    compressed: bool,
    /// Module file stem → file.
    modules: BTreeMap<String, PathBuf>,
}

/// The images shipped in `dir`: one folder per image set, named
/// `ptx_sm_<arch>` or `cubin_sm_<arch>`, holding `<module>.<ptx|cubin>.xz`
/// for every module of the ABI.
#[cfg(not(feature = "build-kernels"))]
fn shipped(dir: &std::path::Path) -> Vec<ImageSet> {
    println!("cargo:rerun-if-changed={}", dir.display());
    let entries = fs::read_dir(dir).unwrap_or_else(|e| {
        panic!(
            "the shipped kernels are missing ({}: {e}); regenerate them with scripts/build_kernels.sh, or build them from source with the feature build-kernels",
            dir.display()
        )
    });
    let mut sets = Vec::new();
    for entry in entries {
        let path = entry.expect("read the kernels directory").path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()).map(str::to_owned) else {
            continue;
        };
        let (cubin, arch) = if let Some(arch) = name.strip_prefix("cubin_sm_") {
            (true, arch)
        } else if let Some(arch) = name.strip_prefix("ptx_sm_") {
            (false, arch)
        } else {
            continue;
        };
        let arch: u32 = arch.parse().unwrap_or_else(|_| panic!("{name}: not an architecture"));
        let extension = if cubin { ".cubin.xz" } else { ".ptx.xz" };
        let mut modules = BTreeMap::new();
        for file in fs::read_dir(&path).expect("read an image directory") {
            let file = file.expect("read an image directory").path();
            let stem = file
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(extension));
            if let Some(stem) = stem {
                modules.insert(stem.to_owned(), file.clone());
            }
        }
        sets.push(ImageSet {
            arch,
            cubin,
            compressed: true,
            modules,
        });
    }
    assert!(
        sets.iter().any(|set| !set.cubin),
        "no PTX among the shipped kernels in {}",
        dir.display()
    );
    sets
}

/// The Rust source of the image table: `&[KernelImage]`. Every PTX set must
/// hold the same modules (the library's tests check them against the ABI),
/// and every machine-code set the same but the user operator's.
fn table(sets: &[ImageSet]) -> String {
    let mut rows = String::from("&[\n");
    // The user operator's modules (`user_*`) are PTX only: the host splices
    // the operator's functions in before the driver compiles them.
    let machine_code = |set: &ImageSet| -> BTreeSet<String> {
        set.modules
            .keys()
            .filter(|m| !m.starts_with("user_"))
            .cloned()
            .collect()
    };
    let first_ptx: Option<BTreeSet<String>> = sets
        .iter()
        .find(|set| !set.cubin)
        .map(|set| set.modules.keys().cloned().collect());
    let first_cubin = first_ptx.as_ref().map(|modules| {
        modules
            .iter()
            .filter(|m| !m.starts_with("user_"))
            .cloned()
            .collect::<BTreeSet<String>>()
    });
    for set in sets {
        let kind = if set.cubin { "cubin" } else { "ptx" };
        let (expected, modules) = match set.cubin {
            true => (first_cubin.as_ref(), machine_code(set)),
            false => (first_ptx.as_ref(), set.modules.keys().cloned().collect()),
        };
        assert_eq!(
            expected,
            Some(&modules),
            "the {kind} images for sm_{} are not the same modules as the others; regenerate them (scripts/build_kernels.sh)",
            set.arch
        );
        rows.push_str(&format!(
            "    KernelImage {{ arch: {}, cubin: {}, compressed: {}, modules: &[\n",
            set.arch, set.cubin, set.compressed
        ));
        for (module, path) in &set.modules {
            rows.push_str(&format!(
                "        ({module:?}, include_bytes!({:?})),\n",
                path.display().to_string()
            ));
        }
        rows.push_str("    ] },\n");
    }
    rows.push_str("]\n");
    rows
}
