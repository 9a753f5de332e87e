//! The search for narrowing stores of floats (`build/ptx_stores.rs`), which
//! `ptxas` compiles as float-to-integer conversions: it finds them where a
//! float instruction or a copy of one writes the stored register, and
//! nowhere else; and no shipped PTX image has one.

#[path = "../build/ptx_stores.rs"]
mod ptx_stores;

use ptx_stores::float_truncating_stores;
use std::fs;
use std::path::Path;

/// A function of `body` lines, with LLVM's register declarations.
fn function(header: &str, body: &str) -> String {
    format!(
        "{header}\n{{\n\t.reg .pred \t%p<4>;\n\t.reg .b16 \t%rs<4>;\n\t.reg .b32 \t%r<20>;\n\t.reg .b64 \t%rd<20>;\n{body}\n}}\n"
    )
}

/// The variance's staging that lost the low words of its `f64`s on an
/// H200 (2026-12-01): a squared deviation's halves stored as two `b32`s,
/// the low one straight from the `.b64` that `selp.f64` wrote.
const STAGED_SQUARE: &str = "\
\tsub.rn.f64 \t%rd3, %rd2, %rd1;
\tmul.rn.f64 \t%rd4, %rd3, %rd3;
\tselp.f64 \t%rd5, %rd4, 0d7FF8000000000000, %p1;
\tshr.u64 \t%rd6, %rd5, 32;
\tst.local.b32 \t[%rd9+-8], %rd5;
\tst.local.b32 \t[%rd9+-4], %rd6;";

#[test]
fn a_float_stored_narrower_is_found() {
    let ptx = function(".visible .entry stage(\n\t.param .u64 stage_param_0\n)", STAGED_SQUARE);
    let found = float_truncating_stores(&ptx);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].function, "stage");
    assert_eq!(found[0].store, "st.local.b32 \t[%rd9+-8], %rd5");
    assert!(found[0].definition.starts_with("selp.f64"), "{found:?}");
    // Line 13: the header's three lines, `{`, four declarations, and the
    // body's fifth line.
    assert_eq!(found[0].line, 13);
}

#[test]
fn through_copies_predicates_vectors_and_helpers() {
    let body = "\
\tadd.rn.f32 \t%r1, %r2, %r3;
\tmov.b32 \t%r4, %r1;
\t@%p1 st.global.b16 \t[%rd1], %r4;
\tmov.b64 \t%rd2, 0d3FF0000000000000;
\tselp.b64 \t%rd3, %rd2, %rd4, %p2;
\tst.shared.v2.b32 \t[%rd5], {%rd3, %rd6};
\tcvt.rn.f32.f64 \t%r5, %rd7;
\tst.param.b16 \t[param0], %r5;";
    let ptx = function(
        ".visible .func  (.param .b64 func_retval0) helper(\n\t.param .b64 helper_param_0\n)",
        body,
    );
    let found: Vec<_> = float_truncating_stores(&ptx)
        .into_iter()
        .map(|f| (f.function, f.store))
        .collect();
    let helper = || "helper".to_owned();
    assert_eq!(
        found,
        [
            (helper(), "st.global.b16 \t[%rd1], %r4".to_owned()),
            (helper(), "st.shared.v2.b32 \t[%rd5], {%rd3, %rd6}".to_owned()),
            (helper(), "st.param.b16 \t[param0], %r5".to_owned()),
        ]
    );
}

#[test]
fn integer_bits_and_whole_floats_are_not_found() {
    let body = "\
\tld.relaxed.gpu.global.u64 %rd1, [%rd2];
\tst.param.b32 \t[param1], %rd1;
\tmul.rn.f64 \t%rd3, %rd4, %rd4;
\tst.local.b64 \t[%rd5], %rd3;
\tshr.u64 \t%rd6, %rd3, 32;
\tst.local.b32 \t[%rd5+8], %rd6;
\tand.b64 \t%rd7, %rd3, 4294967295;
\tst.local.b32 \t[%rd5+12], %rd7;
\tcvt.rzi.s32.f64 \t%r1, %rd3;
\tst.global.b32 \t[%rd5], %r1;
\tsetp.eq.f64 \t%p1, %rd3, 0d0000000000000000;
\tadd.rn.f32 \t%r2, %r3, %r4;
\tst.global.b32 \t[%rd5], %r2;";
    let ptx = function(".visible .entry plain(\n)", body);
    assert_eq!(float_truncating_stores(&ptx), []);
    // Registers are a function's own: a float `%rd3` in one function is
    // not the integer `%rd3` of the next.
    let next = function(
        ".visible .entry next(\n)",
        "\tld.u64 \t%rd3, [%rd1];\n\tst.b32 \t[%rd2], %rd3;",
    );
    let float = function(".visible .entry first(\n)", "\tadd.rn.f64 \t%rd3, %rd1, %rd1;");
    assert_eq!(float_truncating_stores(&format!("{float}{next}")), []);
}

/// Every shipped PTX image (`kernels/ptx_sm_*`, xz-compressed): none has
/// a narrowing store of a float. (The machine code is compiled from the
/// PTX of its architecture, which the build searches as it makes it.)
#[test]
fn no_shipped_ptx_stores_a_float_narrower() {
    let kernels = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
    let mut modules = 0;
    for folder in fs::read_dir(&kernels).expect("the shipped kernels folder") {
        let folder = folder.expect("a folder of kernels/").path();
        let name = folder
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned();
        if !name.starts_with("ptx_sm_") {
            continue;
        }
        for file in fs::read_dir(&folder).expect("an image folder") {
            let path = file.expect("an image").path();
            let compressed = fs::read(&path).expect("read an image");
            let mut ptx = Vec::new();
            lzma_rs::xz_decompress(&mut compressed.as_slice(), &mut ptx).expect("an xz image");
            let ptx = String::from_utf8(ptx).expect("PTX is text");
            let found = float_truncating_stores(&ptx);
            assert!(found.is_empty(), "{}: {found:#?}", path.display());
            modules += 1;
        }
    }
    // Two architectures' PTX of a hundred-odd modules each.
    assert!(
        modules > 100,
        "only {modules} PTX images found under {}",
        kernels.display()
    );
}
