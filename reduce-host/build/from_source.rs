//! The kernels built from source, for `build.rs` with the feature
//! `build-kernels`.
//!
//! The kernels go through rustc's own NVPTX backend: a nested `cargo rustc
//! --target nvptx64-nvidia-cuda -Zbuild-std=core -- --emit=asm`, with no link
//! step (no `llvm-bitcode-linker` exists for this toolchain). Without a link
//! step, any function the kernels call but do not inline would stay an
//! unresolved `.extern .func` and fail only when the module is loaded, so the
//! build rejects such PTX here. It also rejects PTX that stores part of a
//! float register (`build/ptx_stores.rs`), which `ptxas` miscompiles.
//!
//! The PTX is built for the architecture of each row of the tuning data
//! (`src/tuning.rs`), whose register caps it writes into the segmented
//! entry points, logsumexp's of `f64` and the whole-input exact sums of
//! `f64` and of logsumexp's `f64` terms (`.maxnreg`, as CUDA C's
//! `__launch_bounds__` would; rustc has no attribute for it), and then split into one module per
//! `abi::Module` (the whole-input kernels of one type, the segmented kernels
//! of one schedule and type, ...), so that a program loads only the modules
//! it uses. Which entry points exist, are segmented, and go in which module
//! comes from the kernel ABI (`kernels-gpu/src/abi/`). Both are
//! compiled into the build script as they are (`#[path]`): they depend on
//! nothing else.

use super::{abi, ptx_stores, tuning, ImageSet};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Builds the PTX of every tuning row from `../kernels-gpu`, splits it into
/// modules and leaves them in `out_dir/kernels/ptx_sm_<arch>/<module>.ptx`.
pub(crate) fn build(manifest_dir: &Path, out_dir: &Path) -> Vec<ImageSet> {
    let kernel_crate = manifest_dir.join("..").join("kernels-gpu");
    println!("cargo:rerun-if-changed={}", kernel_crate.join("src").display());
    println!("cargo:rerun-if-changed={}", kernel_crate.join("Cargo.toml").display());
    println!("cargo:rerun-if-changed={}", kernel_crate.join("Cargo.lock").display());
    println!(
        "cargo:rerun-if-changed={}",
        manifest_dir.join("src").join("tuning.rs").display()
    );
    let kernels: HashMap<&str, abi::Kernel> = abi::Kernel::all().map(|(kernel, name)| (name, kernel)).collect();
    let names_of = |family: fn(&abi::Kernel) -> bool| -> HashSet<&str> {
        kernels
            .iter()
            .filter(|(_, kernel)| family(kernel))
            .map(|(name, _)| *name)
            .collect()
    };
    let segmented = names_of(|kernel| {
        matches!(
            kernel,
            abi::Kernel::Segmented { .. } | abi::Kernel::ExactSegments { .. }
        )
    });
    let series = names_of(|kernel| {
        matches!(
            kernel,
            abi::Kernel::Statistic {
                statistic: abi::Statistic::LogSumExp,
                accumulator: abi::Scalar::F64,
                ..
            } | abi::Kernel::StatisticSegments {
                statistic: abi::Statistic::LogSumExp,
                accumulator: abi::Scalar::F64,
                ..
            }
        )
    });
    let exact_f64 = names_of(|kernel| kernel.is_lean_exact_f64());
    let exact_exp_f64 = names_of(|kernel| {
        matches!(
            kernel,
            abi::Kernel::ExactSum {
                op: abi::Op::ScaledExp,
                element: abi::Scalar::F64,
            }
        )
    });
    let exact_axis = [
        names_of(|kernel| {
            matches!(
                kernel,
                abi::Kernel::ExactAxis {
                    element: abi::Scalar::F32,
                    ..
                } | abi::Kernel::ExactRowRuns {
                    element: abi::Scalar::F32,
                    ..
                }
            )
        }),
        names_of(|kernel| {
            matches!(
                kernel,
                abi::Kernel::ExactAxis {
                    element: abi::Scalar::F64,
                    ..
                } | abi::Kernel::ExactRowRuns {
                    element: abi::Scalar::F64,
                    ..
                }
            )
        }),
    ];
    let mut sets = Vec::new();
    for row in tuning::BY_ARCHITECTURE {
        let arch = format!("sm_{}", row.min_cc);
        let arch = arch.as_str();
        // One target dir per architecture: a nested build that finds its crate
        // fresh emits nothing, so each architecture keeps its own last PTX.
        let ptx = build_ptx(&kernel_crate, &out_dir.join(format!("kernels-target-{arch}")), arch);
        let ptx = without_user_declarations(&ptx);
        if let Some(line) = ptx.lines().find(|l| l.trim_start().starts_with(".extern .func")) {
            panic!(
                "the {arch} PTX of kernels-gpu calls a function that was not inlined: `{}`.\n\
                 Kernels are built without a link step, so every call must inline \
                 (no panics, no formatting, no bounds-checked indexing in kernel code).",
                line.trim()
            );
        }
        if let Some(store) = ptx_stores::float_truncating_stores(&ptx).first() {
            panic!(
                "the {arch} PTX of kernels-gpu stores part of a float register: line {} of `{}`, `{}`, \
                 the register written by `{}`. ptxas compiles such a store as a float-to-integer \
                 conversion (build/ptx_stores.rs): keep the float's words in registers, or store \
                 the whole float.",
                store.line, store.function, store.store, store.definition
            );
        }
        let mut ptx = cap_registers(&ptx, &segmented, row.segmented_max_registers);
        if let Some(registers) = row.series_max_registers {
            ptx = cap_registers(&ptx, &series, registers);
        }
        if let Some(registers) = row.exact_f64_max_registers {
            ptx = cap_registers(&ptx, &exact_f64, registers);
        }
        if let Some(registers) = row.exact_exp_f64_max_registers {
            ptx = cap_registers(&ptx, &exact_exp_f64, registers);
        }
        for (names, cap) in exact_axis.iter().zip(row.exact_axis_max_registers) {
            if let Some(registers) = cap {
                ptx = cap_registers(&ptx, names, registers);
            }
        }
        // The whole module too, for inspection (`scripts/ab_stage.sh` hands
        // it to `ptxas -v`); the library loads the split modules.
        fs::write(out_dir.join(format!("kernels_{arch}.ptx")), &ptx).expect("write PTX to OUT_DIR");
        let dir = out_dir.join("kernels").join(format!("ptx_{arch}"));
        // A fresh directory: a module renamed since the last build must not linger.
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("create the PTX directory in OUT_DIR");
        let mut modules = BTreeMap::new();
        for (module, text) in split_modules(&ptx, &kernels) {
            let path = dir.join(format!("{module}.ptx"));
            fs::write(&path, text).expect("write a PTX module to OUT_DIR");
            modules.insert(module, path);
        }
        sets.push(ImageSet {
            arch: row.min_cc,
            cubin: false,
            compressed: false,
            modules,
        });
    }
    sets
}

/// The prefix of the user operator's functions (`kernels-gpu/src/device/ptx.rs`).
const USER_FUNCTION_PREFIX: &str = "user_op_";

/// `ptx` without the declarations (`.extern .func … ;`, over several
/// lines) of the user operator's functions: the user modules call them, and
/// the host splices their definitions in (`src/user_op/`), after the
/// preamble's `.address_size`.
fn without_user_declarations(ptx: &str) -> String {
    let mut kept = String::with_capacity(ptx.len());
    let mut in_declaration = false;
    for line in ptx.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with(".extern .func") && trimmed.contains(USER_FUNCTION_PREFIX) {
            in_declaration = true;
        }
        if in_declaration {
            in_declaration = !trimmed.ends_with(';');
            continue;
        }
        kept.push_str(line);
        kept.push('\n');
    }
    kept
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
        .envs(exact_fallback_flags())
        .status()
        .expect("could not run cargo to build kernels-gpu (is the pinned nightly from rust-toolchain.toml installed? run scripts/setup.sh)");
    assert!(
        status.success(),
        "building kernels-gpu for {arch} failed: the feature build-kernels needs the pinned nightly of rust-toolchain.toml with the rust-src component (scripts/env.sh installs it)"
    );

    // The newest, in case an older toolchain left one under another hash.
    let newest = ptx_files(&deps)
        .into_iter()
        .max_by_key(|p| fs::metadata(p).and_then(|m| m.modified()).ok());
    let path = newest.unwrap_or_else(|| panic!("the nested build left no kernels_gpu-*.s in {}", deps.display()));
    fs::read_to_string(path).expect("read PTX")
}

/// The test switch `--cfg reduce_exact_fallback_always` (every exact part
/// through its fallback: `kernels-gpu/src/expansion.rs`'s
/// `FALLBACK_ALWAYS`), passed on to the kernels where this build has it, so
/// that a GPU test build sums the same way as the emulator's.
fn exact_fallback_flags() -> Option<(&'static str, &'static str)> {
    env::var_os("CARGO_CFG_REDUCE_EXACT_FALLBACK_ALWAYS").map(|_| ("RUSTFLAGS", "--cfg reduce_exact_fallback_always"))
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
        "not every entry point of the ABI to cap at {registers} registers is in the PTX: missing {missing:?}"
    );
    capped
}

/// `ptx` split into one module per `abi::Module`, by file stem.
///
/// LLVM writes the module as a preamble (`.version`, `.target`, the
/// module-scope `.shared` declarations) followed by functions, each
/// introduced by a `// .globl <name>` line, with module-scope `.global`
/// constants among them (a struct's value that a call to a helper that is
/// not inlined passes by reference). Each module gets the preamble, its
/// entry points, and the other functions (the panic handler, such a
/// helper) and constants only where its entry points use them. Every entry
/// point must be a kernel of the ABI, and every kernel of the ABI an entry
/// point.
fn split_modules(ptx: &str, kernels: &HashMap<&str, abi::Kernel>) -> BTreeMap<String, String> {
    let mut preamble = String::new();
    // (name, text) of each function, in order.
    let mut functions: Vec<(String, String)> = Vec::new();
    // (name, declaration) of each module-scope constant.
    let mut constants: Vec<(String, String)> = Vec::new();
    // (name, text) of each forward declaration of a function (a header
    // ended by `;`, which LLVM writes, after the first `// .globl`, where a
    // function is called before its definition), and the header lines read
    // so far of the next function.
    let mut declarations: Vec<(String, String)> = Vec::new();
    let mut header: Option<String> = None;
    for line in ptx.lines() {
        if let Some(text) = header.as_mut() {
            text.push_str(line);
            text.push('\n');
            match line.trim() {
                ";" => {
                    let text = header.take().unwrap_or_default();
                    let first = text.lines().next().unwrap_or_default();
                    let name = first.trim_end().trim_end_matches('(');
                    let name = name.split_whitespace().last().unwrap_or_default();
                    declarations.push((name.to_owned(), text));
                }
                "{" => {
                    // A definition: its header goes with its body.
                    let text = header.take().unwrap_or_default();
                    match functions.last_mut() {
                        Some((_, body)) => body.push_str(&text),
                        None => preamble.push_str(&text),
                    }
                }
                _ => {}
            }
            continue;
        }
        if line.starts_with(".visible .func") || line.starts_with(".func") {
            header = Some(format!("{line}\n"));
            continue;
        }
        if let Some(name) = line.trim().strip_prefix("// .globl") {
            functions.push((name.trim().to_owned(), String::new()));
        }
        // Unindented, where a function's lines are indented:
        // `.global .align 8 .b8 <name>[<bytes>] = {...};` (or a scalar's
        // `.global .u32 <name> = 1;`): the name is the declarator's last word.
        if line.starts_with(".global ") {
            let declarator = line.split('=').next().unwrap_or(line).trim_end().trim_end_matches(';');
            let name = declarator.split_whitespace().last().unwrap_or(line);
            let name = name.split('[').next().unwrap_or(name);
            constants.push((name.to_owned(), format!("{line}\n")));
            continue;
        }
        let text = match functions.last_mut() {
            Some((_, text)) => text,
            None => &mut preamble,
        };
        text.push_str(line);
        text.push('\n');
    }
    let (entries, helpers): (Vec<_>, Vec<_>) = functions
        .into_iter()
        .partition(|(name, text)| text.contains(&format!(".entry {name}(")));

    let mut by_module: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    let mut seen = HashSet::new();
    for (name, text) in &entries {
        let kernel = kernels
            .get(name.as_str())
            .unwrap_or_else(|| panic!("the PTX has an entry point `{name}` that is not a kernel of the ABI"));
        by_module.entry(kernel.module().to_string()).or_default().push(text);
        seen.insert(name.as_str());
    }
    let mut missing: Vec<&&str> = kernels.keys().filter(|name| !seen.contains(**name)).collect();
    missing.sort_unstable();
    assert!(
        missing.is_empty(),
        "kernels of the ABI missing from the PTX: {missing:?}"
    );

    by_module
        .into_iter()
        .map(|(module, texts)| {
            // The helpers these entry points call, and those they call in turn.
            let mut body = texts.concat();
            let mut included = vec![false; helpers.len()];
            while let Some(index) = (0..helpers.len())
                .find(|&i| !included[i] && helpers.get(i).is_some_and(|(name, _)| body.contains(name.as_str())))
            {
                included[index] = true;
                if let Some((_, text)) = helpers.get(index) {
                    body.push_str(text);
                }
            }
            let called: String = helpers
                .iter()
                .zip(&included)
                .filter(|(_, included)| **included)
                .map(|((_, text), _)| text.as_str())
                .collect();
            let used: String = constants
                .iter()
                .filter(|(name, _)| body.contains(name.as_str()))
                .map(|(_, declaration)| declaration.as_str())
                .collect();
            // Kept apart, a declaration would otherwise travel with the
            // function it follows, and a module without that function
            // would call an undeclared one ("Unknown symbol" in ptxas).
            let declared: String = declarations
                .iter()
                .filter(|(name, _)| body.contains(name.as_str()))
                .map(|(_, declaration)| declaration.as_str())
                .collect();
            let entry_texts: String = texts.concat();
            // Constants, declarations and helpers first: PTX wants a name
            // defined (or declared) before its use.
            (module, format!("{preamble}{used}{declared}{called}{entry_texts}"))
        })
        .collect()
}
