//! Builds `kernels-gpu` to PTX once per architecture of the tuning data and
//! leaves `kernels_<arch>.ptx` in `OUT_DIR` for `include_str!`.
//!
//! The kernels go through rustc's own NVPTX backend: a nested `cargo rustc
//! --target nvptx64-nvidia-cuda -Zbuild-std=core -- --emit=asm`, with no link
//! step (no `llvm-bitcode-linker` exists for this toolchain). Without a link
//! step, any function the kernels call but do not inline would stay an
//! unresolved `.extern .func` and fail only when the module is loaded, so the
//! build rejects such PTX here.

//!
//! The PTX is built for the architecture of each row of the tuning data
//! (`src/tuning.rs`), whose register cap it writes into the segmented
//! entry points (`.maxnreg`, as CUDA C's `__launch_bounds__` would; rustc
//! has no attribute for it). Which entry points are segmented comes from the
//! kernel ABI (`kernels-gpu/src/abi.rs`). Both files are compiled into this
//! script as they are (`#[path]`): they depend on nothing else.

// As in the library (`src/lib.rs`): no arithmetic that can wrap, which a
// build script, compiled without overflow checks in release, would do
// silently. The library's panic lints do not apply: a build script reports a
// failure by panicking.
#![deny(clippy::arithmetic_side_effects)]

use std::collections::HashSet;
use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../kernels-gpu/src/abi.rs"]
#[allow(dead_code)]
mod abi;
#[path = "src/tuning.rs"]
#[allow(dead_code)]
mod tuning;

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let kernel_crate = manifest_dir.join("..").join("kernels-gpu");
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));

    println!("cargo:rerun-if-changed={}", kernel_crate.join("src").display());
    println!("cargo:rerun-if-changed={}", kernel_crate.join("Cargo.toml").display());
    println!("cargo:rerun-if-changed={}", kernel_crate.join("Cargo.lock").display());

    println!(
        "cargo:rerun-if-changed={}",
        manifest_dir.join("src").join("tuning.rs").display()
    );
    let segmented: HashSet<&str> = abi::Kernel::all()
        .filter(|(kernel, _)| matches!(kernel, abi::Kernel::Segmented { .. }))
        .map(|(_, name)| name)
        .collect();
    for row in tuning::BY_ARCHITECTURE {
        let arch = format!("sm_{}", row.min_cc);
        let arch = arch.as_str();
        // One target dir per architecture: a nested build that finds its crate
        // fresh emits nothing, so each architecture keeps its own last PTX.
        let ptx = build_ptx(&kernel_crate, &out_dir.join(format!("kernels-target-{arch}")), arch);
        if let Some(line) = ptx.lines().find(|l| l.trim_start().starts_with(".extern .func")) {
            panic!(
                "the {arch} PTX of kernels-gpu calls a function that was not inlined: `{}`.\n\
                 Kernels are built without a link step, so every call must inline \
                 (no panics, no formatting, no bounds-checked indexing in kernel code).",
                line.trim()
            );
        }
        let ptx = cap_registers(&ptx, &segmented, row.segmented_max_registers);
        fs::write(out_dir.join(format!("kernels_{arch}.ptx")), ptx).expect("write PTX to OUT_DIR");
    }

    // The host's table of embedded PTX, newest architecture first:
    // `&[(compute capability × 10, PTX text)]`.
    let mut arches: Vec<u32> = tuning::BY_ARCHITECTURE.iter().map(|row| row.min_cc).collect();
    arches.sort_by_key(|cc| std::cmp::Reverse(*cc));
    let rows: String = arches
        .iter()
        .map(|cc| format!("    ({cc}, include_str!(concat!(env!(\"OUT_DIR\"), \"/kernels_sm_{cc}.ptx\"))),\n"))
        .collect();
    fs::write(out_dir.join("ptx_table.rs"), format!("&[\n{rows}]\n")).expect("write ptx_table.rs");
}

/// Runs the nested build for one architecture and returns the PTX text.
fn build_ptx(kernel_crate: &Path, target_dir: &Path, arch: &str) -> String {
    let deps = target_dir.join("nvptx64-nvidia-cuda").join("release").join("deps");
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(kernel_crate)
        .args(["rustc", "--release", "--locked", "--target", "nvptx64-nvidia-cuda", "-Zbuild-std=core"])
        .arg("--target-dir")
        .arg(target_dir)
        .args(["--", "--emit=asm", "-C"])
        .arg(format!("target-cpu={arch}"))
        // Flags meant for the host build must not reach the nvptx build.
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .status()
        .expect("could not run cargo to build kernels-gpu (is the pinned nightly from rust-toolchain.toml installed? run scripts/setup.sh)");
    assert!(
        status.success(),
        "building kernels-gpu for {arch} failed: it needs the pinned nightly with the rust-src component (scripts/setup.sh installs it)"
    );

    // The newest, in case an older toolchain left one under another hash.
    let newest = ptx_files(&deps)
        .into_iter()
        .max_by_key(|p| fs::metadata(p).and_then(|m| m.modified()).ok());
    let path = newest.unwrap_or_else(|| panic!("the nested build left no kernels_gpu-*.s in {}", deps.display()));
    fs::read_to_string(path).expect("read PTX")
}

fn ptx_files(deps: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(deps) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.starts_with("kernels_gpu-") && name.ends_with(".s")
        })
        .collect()
}

/// `ptx` with a `.maxnreg registers` directive on every entry point named in
/// `names` (after its parameter list, where PTX puts performance-tuning
/// directives).
fn cap_registers(ptx: &str, names: &HashSet<&str>, registers: u32) -> String {
    let mut capped = String::with_capacity(ptx.len());
    // The entry point whose parameter list is being copied, and those done.
    let mut in_parameters: Option<&str> = None;
    let mut done: HashSet<&str> = HashSet::with_capacity(names.len());
    for line in ptx.lines() {
        capped.push_str(line);
        capped.push('\n');
        let entry = line
            .strip_prefix(".visible .entry ")
            .and_then(|rest| rest.split('(').next());
        if let Some(name) = entry.filter(|name| names.contains(name)) {
            in_parameters = Some(name);
        } else if let Some(name) = in_parameters.filter(|_| line.trim() == ")") {
            capped.push_str(&format!(".maxnreg {registers}\n"));
            in_parameters = None;
            done.insert(name);
        }
    }
    let mut missing: Vec<&str> = names.difference(&done).copied().collect();
    missing.sort_unstable();
    assert!(
        missing.is_empty(),
        "not every segmented entry point of the ABI is in the PTX: missing {missing:?}"
    );
    capped
}
