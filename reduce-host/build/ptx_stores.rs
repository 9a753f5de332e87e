//! Finds the narrowing stores of floats in PTX that `ptxas` compiles wrong.
//!
//! PTX lets a store take a register wider than its type (`st.local.b32
//! [addr], %rd7` with `%rd7` a `.b64`): the value is to be truncated to its
//! low bits. LLVM's NVPTX backend keeps `f64`s in `.b64` registers and, where
//! kernel code writes an `f64`'s two 32-bit halves to memory (an array of
//! `u32` words that goes to local memory), folds the low half's truncation
//! into such a store. `ptxas` (12.9 and 13.0, and the driver of CUDA 13.0)
//! compiles a narrowing store of a register that a float instruction wrote as
//! a float-to-integer conversion (`F2I.U32.F64.TRUNC`) followed by the store:
//! the low word of the `f64` becomes its value truncated to an integer (0
//! below 1). Seen 2026-12-01: an experiment that moved the variance's
//! squared deviations of a vector through local memory lost the low 32 bits
//! of every staged `f64`, and the exact variances of `f64` came out a few
//! `f32` ulps low on an H200, while the emulator was right.
//!
//! So every PTX the build makes is searched ([`float_truncating_stores`]),
//! and a find fails the build (`build/from_source.rs`); a test searches the
//! shipped images. Kernel code avoids the pattern by keeping such words in
//! registers, or by storing whole `f64`s.

use std::collections::HashMap;

/// One narrowing store of a register that a float instruction wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FloatTruncatingStore {
    /// The function (entry point or helper) it is in.
    pub function: String,
    /// Its line in the PTX, from 1.
    pub line: usize,
    /// The store, as written.
    pub store: String,
    /// A float instruction that writes the stored register.
    pub definition: String,
}

/// Every store in `ptx` whose register is wider than the store's type and
/// is written, in the same function, by an instruction whose result is a
/// float (`add.rn.f64`, `selp.f64`, `cvt.rn.f32.f64`, a `mov` of a float
/// constant, ...), directly or through `mov` and `selp` copies (stricter
/// than needed: `ptxas` 13.0 stores a `mov.b64` copy's bits right, as it
/// does a `cvt.u32.u64` or a `mov.b64 {lo, hi}` of the float;
/// `bench-results/2026-12-01-ptx-stores/ptxas-narrow-store-repro.ptx`).
pub fn float_truncating_stores(ptx: &str) -> Vec<FloatTruncatingStore> {
    let mut found = Vec::new();
    let mut function = Function::default();
    for (index, raw) in ptx.lines().enumerate() {
        let line = raw.split("//").next().unwrap_or_default().trim();
        if let Some(name) = function_name(raw) {
            function = Function {
                name,
                ..Function::default()
            };
            continue;
        }
        if raw == "}" {
            found.extend(function.finish());
            function = Function::default();
            continue;
        }
        if let Some(declaration) = line.strip_prefix(".reg") {
            function.declare(declaration);
            continue;
        }
        function.read(index.saturating_add(1), line);
    }
    found.extend(function.finish());
    found
}

/// The name a line that begins a function's header (`.visible .entry
/// name(`, `.func (.param .b64 func_retval0) name(`) introduces.
fn function_name(raw: &str) -> Option<String> {
    let rest = raw
        .strip_prefix(".visible ")
        .or_else(|| raw.strip_prefix(".weak "))
        .unwrap_or(raw);
    let rest = rest.strip_prefix(".entry").or_else(|| rest.strip_prefix(".func"))?;
    // A return value's parameter list comes first on a function's header.
    let rest = match rest.trim_start().strip_prefix('(') {
        Some(returns) => returns.split_once(')').map_or("", |(_, after)| after),
        None => rest,
    };
    let name = rest.trim().split(['(', ';', ' ']).next().unwrap_or_default();
    (!name.is_empty()).then(|| name.to_owned())
}

/// What one function's lines say about its registers.
#[derive(Default)]
struct Function {
    name: String,
    /// Register name prefix (`%rd`) or name (`%SP`) → bits.
    widths: HashMap<String, u32>,
    /// Register → a float instruction that writes it.
    float_definitions: HashMap<String, String>,
    /// (destination, sources, instruction) of each `mov` and `selp` of
    /// bits, through which a float passes.
    copies: Vec<(String, Vec<String>, String)>,
    /// (line, store, register, the store's bits) of each store.
    stores: Vec<(usize, String, String, u32)>,
}

impl Function {
    /// A `.reg` declaration (after `.reg`): `.b64 %rd<1065>;`, `.b64 %SP;`.
    fn declare(&mut self, declaration: &str) {
        let mut words = declaration.trim_end_matches(';').split_whitespace();
        let (Some(ty), Some(names)) = (words.next(), words.next()) else {
            return;
        };
        let bits = if ty == ".pred" {
            1
        } else {
            type_bits(ty.trim_start_matches('.')).unwrap_or(0)
        };
        for name in names.split(',') {
            let prefix = name.trim().split('<').next().unwrap_or_default();
            self.widths.insert(prefix.to_owned(), bits);
        }
    }

    /// One line of the body: an instruction, perhaps predicated, or a label,
    /// a directive or a brace (nothing to read).
    fn read(&mut self, line_number: usize, line: &str) {
        let line = line.trim_end_matches(';').trim();
        let line = match line.strip_prefix('@') {
            Some(guarded) => guarded
                .split_once(char::is_whitespace)
                .map_or("", |(_, rest)| rest.trim()),
            None => line,
        };
        let Some((opcode, operands)) = line.split_once(char::is_whitespace) else {
            return;
        };
        if !opcode.starts_with(|c: char| c.is_ascii_lowercase()) {
            return;
        }
        let operands = split_operands(operands);
        let parts: Vec<&str> = opcode.split('.').collect();
        if parts[0] == "st" {
            let bits = parts.iter().rev().find_map(|part| type_bits(part)).unwrap_or(0);
            if let Some(source) = operands.last() {
                for register in registers(source) {
                    self.stores.push((line_number, line.to_owned(), register, bits));
                }
            }
            return;
        }
        if matches!(
            parts[0],
            "bra" | "call" | "ret" | "exit" | "bar" | "barrier" | "membar" | "fence"
        ) {
            return;
        }
        let Some(destination) = operands.first() else {
            return;
        };
        // A single register (not `{%r1, %r2}`, which unpacks bits; not a
        // `%r1|%p1` pair, whose value is bits too).
        let destination = destination.trim();
        if !destination.starts_with('%') || destination.contains(['|', '{']) {
            return;
        }
        let result = match parts[0] {
            // The destination's type comes first: `cvt.rn.f32.f64`.
            "cvt" => parts.iter().skip(1).find(|part| type_bits(part).is_some()).copied(),
            "setp" | "set" | "testp" => None,
            _ => parts.iter().rev().find(|part| type_bits(part).is_some()).copied(),
        };
        let sources = &operands[1..];
        let float_constant = sources.iter().any(|source| {
            let source = source.trim();
            source.starts_with("0d") || source.starts_with("0f") || source.starts_with("0D") || source.starts_with("0F")
        });
        match result {
            Some(ty) if is_float(ty) => {
                self.float_definitions.insert(destination.to_owned(), line.to_owned());
            }
            Some(ty) if ty.starts_with('b') && matches!(parts[0], "mov" | "selp") => {
                if float_constant {
                    self.float_definitions.insert(destination.to_owned(), line.to_owned());
                }
                let sources = sources.iter().flat_map(|source| registers(source)).collect();
                self.copies.push((destination.to_owned(), sources, line.to_owned()));
            }
            _ => {}
        }
    }

    /// The function's narrowing stores of float registers.
    fn finish(&mut self) -> Vec<FloatTruncatingStore> {
        // Floats pass through copies: repeat until no copy adds one.
        let mut changed = true;
        while changed {
            changed = false;
            for (destination, sources, _) in &self.copies {
                let definition = sources.iter().find_map(|source| self.float_definition(source));
                if let Some(definition) = definition {
                    if self.float_definition(destination).is_none() {
                        let definition = definition.to_owned();
                        self.float_definitions.insert(destination.clone(), definition);
                        changed = true;
                    }
                }
            }
        }
        let mut found = Vec::new();
        for (line, store, register, bits) in &self.stores {
            let width = self.width(register);
            if width <= *bits {
                continue;
            }
            if let Some(definition) = self.float_definition(register) {
                found.push(FloatTruncatingStore {
                    function: self.name.clone(),
                    line: *line,
                    store: store.clone(),
                    definition: definition.to_owned(),
                });
            }
        }
        found
    }

    fn float_definition(&self, register: &str) -> Option<&str> {
        self.float_definitions.get(register).map(String::as_str)
    }

    /// A register's bits, from its declaration (0 where none is seen).
    fn width(&self, register: &str) -> u32 {
        let prefix = register.trim_end_matches(|c: char| c.is_ascii_digit());
        let bits = self.widths.get(register).or_else(|| self.widths.get(prefix));
        bits.copied().unwrap_or(0)
    }
}

/// The operands of an instruction, split at the commas outside `[]`, `{}`
/// and `()`.
fn split_operands(operands: &str) -> Vec<String> {
    let mut split = Vec::new();
    let mut depth = 0i32;
    let mut current = String::new();
    for c in operands.chars() {
        match c {
            '[' | '{' | '(' => depth = depth.saturating_add(1),
            ']' | '}' | ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                split.push(current.trim().to_owned());
                current.clear();
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    if !current.trim().is_empty() {
        split.push(current.trim().to_owned());
    }
    split
}

/// The registers an operand names: `%rd7`, or each of `{%r1, %r2}`
/// (not an address's, `[%rd7+8]`).
fn registers(operand: &str) -> Vec<String> {
    let operand = operand.trim();
    if operand.starts_with('[') {
        return Vec::new();
    }
    operand
        .trim_matches(|c| c == '{' || c == '}')
        .split(',')
        .map(str::trim)
        .filter(|name| name.starts_with('%'))
        .map(str::to_owned)
        .collect()
}

/// The bits of a PTX type (`b32`, `u64`, `f16`, `f16x2`, ...), or `None`
/// for a word that is not one (`rn`, `global`, `v4`).
fn type_bits(word: &str) -> Option<u32> {
    let bits = match word {
        "b8" | "u8" | "s8" => 8,
        "b16" | "u16" | "s16" | "f16" | "bf16" => 16,
        "b32" | "u32" | "s32" | "f32" | "f16x2" | "bf16x2" | "tf32" => 32,
        "b64" | "u64" | "s64" | "f64" => 64,
        "b128" => 128,
        _ => return None,
    };
    Some(bits)
}

fn is_float(ty: &str) -> bool {
    ty.starts_with('f') || ty.starts_with("bf") || ty == "tf32"
}
