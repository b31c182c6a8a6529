//! One point of the tuning space through every stage:
//! source -> tokens -> AST -> Triton-IR (verified) -> IR passes -> LLVM IR -> PTX.

use crate::codegen::{self, CodegenError, CodegenOptions, CompiledKernel};
use crate::diagnostics::Diagnostic;
use crate::front::{self, FrontOptions};
use crate::ir::{self, printer, verifier};
use crate::passes::{PassEvent, PassManager, PassOptions, Target};
use crate::span::SourceMap;
use crate::timings::{Phase, PhaseTimes};
use std::path::{Path, PathBuf};

/// How to compile, besides the macro values.
#[derive(Clone, Debug)]
pub struct CompileOptions {
    pub include_dirs: Vec<PathBuf>,
    pub codegen: CodegenOptions,
}

/// A failure, already rendered for the user.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// A diagnostic in the user's source, rendered with file:line:col and a caret.
    #[error("{rendered}")]
    Source { summary: String, rendered: String },
    /// The config needs more than the target gives one program (shared
    /// memory, tile elements a thread): a tuning space drops it with a note.
    #[error("{rendered}")]
    ResourceLimit { summary: String, rendered: String },
    /// The compiler declines the config (tiles it does not generate on the
    /// engine the config gets): a tuning space leaves the point out quietly.
    #[error("{rendered}")]
    Declined { summary: String, rendered: String },
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("LLVM failed: {0}")]
    Llvm(String),
}

impl CompileError {
    fn from_diagnostic(diag: &Diagnostic, sources: &SourceMap) -> Self {
        let (summary, rendered) = summary_and_rendering(diag, sources);
        CompileError::Source { summary, rendered }
    }

    /// A one-line form (`file:line:col: message`) for progress output and manifests.
    pub fn summary(&self) -> String {
        match self {
            CompileError::Source { summary, .. }
            | CompileError::ResourceLimit { summary, .. }
            | CompileError::Declined { summary, .. } => summary.clone(),
            other => other.to_string(),
        }
    }

    /// Whether the config asked for more than the target has (the code itself is fine).
    pub fn is_resource_limit(&self) -> bool {
        matches!(self, CompileError::ResourceLimit { .. })
    }

    /// Whether the compiler declined the config ([`CompileError::Declined`]).
    pub fn is_declined(&self) -> bool {
        matches!(self, CompileError::Declined { .. })
    }
}

/// The source of a kernel file, read once and compiled for many points.
#[derive(Clone, Debug)]
pub struct Source {
    pub path: PathBuf,
    pub text: String,
}

/// The largest kernel source read (64 MiB), far past any real kernel.
pub const MAX_SOURCE_BYTES: u64 = 64 << 20;

impl Source {
    /// Reads a regular file of at most [`MAX_SOURCE_BYTES`]: a FIFO would
    /// block before a byte arrives and a device (`/dev/zero`) never ends,
    /// so both are refused from their metadata, before opening.
    pub fn read(path: &Path) -> Result<Source, CompileError> {
        let io = |source| CompileError::Io {
            path: path.to_path_buf(),
            source,
        };
        let meta = std::fs::metadata(path).map_err(io)?;
        if !meta.is_file() {
            return Err(io(std::io::Error::other(
                "not a regular file (a kernel source is read whole; a pipe, device or folder is not)",
            )));
        }
        if meta.len() > MAX_SOURCE_BYTES {
            return Err(io(std::io::Error::other(format!(
                "the file is {} bytes; a kernel source may have at most {MAX_SOURCE_BYTES}",
                meta.len()
            ))));
        }
        let text = std::fs::read_to_string(path).map_err(io)?;
        Ok(Source {
            path: path.to_path_buf(),
            text,
        })
    }
}

/// A verified module and the sources its spans point into.
pub struct Lowered {
    pub module: ir::Module,
    pub sources: SourceMap,
}

/// Front end and sema for one set of macro values; the module is verified.
pub fn lower(
    source: &Source,
    defines: &[(String, String)],
    include_dirs: &[PathBuf],
) -> Result<Lowered, CompileError> {
    lower_timed(source, defines, include_dirs, &mut PhaseTimes::new())
}

/// The first kernel of `text` (no macros, no include folders) as sema
/// lowers it: what the unit tests of analyses and passes start from.
#[cfg(test)]
pub(crate) fn first_kernel(text: &str) -> ir::Function {
    let source = Source {
        path: "test.tc".into(),
        text: text.to_string(),
    };
    let lowered = lower(&source, &[], &[]).expect("lowers");
    lowered
        .module
        .functions
        .into_iter()
        .next()
        .expect("a kernel")
}

/// [`lower`], adding the time of each phase to `times`.
pub fn lower_timed(
    source: &Source,
    defines: &[(String, String)],
    include_dirs: &[PathBuf],
    times: &mut PhaseTimes,
) -> Result<Lowered, CompileError> {
    let mut sources = SourceMap::new();
    let file = sources.add(source.path.display().to_string(), source.text.clone());
    let options = FrontOptions {
        defines: defines.to_vec(),
        include_dirs: include_dirs.to_vec(),
    };
    let lowered = times
        .time(Phase::Front, || {
            front::parse_file(&mut sources, file, &options)
        })
        .and_then(|tu| times.time(Phase::Sema, || crate::sema::lower(&tu)));
    let module = lowered.map_err(|d| CompileError::from_diagnostic(&d, &sources))?;
    let verified = times.time(Phase::IrVerify, || {
        module
            .functions
            .iter()
            .try_for_each(verifier::verify_function)
    });
    if let Err(e) = verified {
        return Err(internal_error(e.span, &e.message, &sources));
    }
    Ok(Lowered { module, sources })
}

/// The IR passes' options for a compile with `codegen`'s target (switches
/// from the environment).
pub fn pass_options(codegen: &CodegenOptions) -> PassOptions {
    PassOptions::from_env().with_target(Target {
        arch: codegen.arch,
        num_warps: codegen.num_warps as usize,
        num_stages: codegen.num_stages.map(|s| s as usize),
        split_k: codegen.split_k,
        tma: codegen.tma,
        tma_multicast: codegen.tma_multicast,
        warp_specialize: codegen.warp_specialize,
        misaligned_runs: codegen.misaligned_runs,
    })
}

/// Front end, sema and the IR passes ([`PassManager::standard`] for the
/// target `codegen`, see [`pass_options`]): the IR that codegen translates.
/// `after_pass` sees each function after each pass (`--print-after`).
pub fn lower_for_codegen(
    source: &Source,
    defines: &[(String, String)],
    include_dirs: &[PathBuf],
    codegen: &CodegenOptions,
    times: &mut PhaseTimes,
    after_pass: &mut dyn FnMut(&PassEvent<'_>),
) -> Result<Lowered, CompileError> {
    let mut lowered = lower_timed(source, defines, include_dirs, times)?;
    let passes = PassManager::standard(pass_options(codegen));
    for function in &mut lowered.module.functions {
        times
            .time(Phase::IrPasses, || passes.run(function, after_pass))
            .map_err(|e| internal_error(e.error.span, &e.to_string(), &lowered.sources))?;
    }
    Ok(lowered)
}

/// Invalid IR is a compiler bug, still shown at the source it came from.
fn internal_error(span: crate::span::Span, message: &str, sources: &SourceMap) -> CompileError {
    let diag = Diagnostic::error(span, format!("internal compiler error: {message}"))
        .with_note("the Triton-IR produced for this code is invalid; please report it");
    CompileError::from_diagnostic(&diag, sources)
}

/// One kernel of a compiled point.
#[derive(Clone, Debug)]
pub struct KernelOutput {
    /// The Triton-IR codegen translated (after the passes).
    pub function: ir::Function,
    pub compiled: CompiledKernel,
}

impl KernelOutput {
    pub fn ir_text(&self) -> String {
        printer::print_function(&self.function)
    }
}

/// Lowers and generates code for every kernel in the file.
pub fn compile(
    source: &Source,
    defines: &[(String, String)],
    options: &CompileOptions,
) -> Result<Vec<KernelOutput>, CompileError> {
    compile_timed(source, defines, options, true, &mut PhaseTimes::new())
}

/// [`compile`], adding the time of each phase (summed over the kernels) to
/// `times`; without `keep_llvm_ir` the kernels' `llvm_ir` is empty.
pub fn compile_timed(
    source: &Source,
    defines: &[(String, String)],
    options: &CompileOptions,
    keep_llvm_ir: bool,
    times: &mut PhaseTimes,
) -> Result<Vec<KernelOutput>, CompileError> {
    compile_selected(
        source,
        defines,
        options,
        keep_llvm_ir,
        times,
        &mut |_| {},
        &|_| true,
    )
}

/// [`compile_timed`] calling `after_pass` after each IR pass of each kernel
/// (`--print-after`) and generating code only for the kernels whose name
/// `selected` accepts (`tritonc --kernel`): the others are lowered, not compiled.
pub fn compile_selected(
    source: &Source,
    defines: &[(String, String)],
    options: &CompileOptions,
    keep_llvm_ir: bool,
    times: &mut PhaseTimes,
    after_pass: &mut (dyn FnMut(&PassEvent<'_>) + Send),
    selected: &(dyn Fn(&str) -> bool + Sync),
) -> Result<Vec<KernelOutput>, CompileError> {
    // Sema, the IR passes and codegen recurse a level per level of the
    // expression tree, which the parser bounds (MAX_EXPRESSION_DEPTH) to
    // what fits this stack, whatever thread the caller runs on.
    crate::front::stack::on_large_stack(|| {
        let Lowered { module, sources } = lower_for_codegen(
            source,
            defines,
            &options.include_dirs,
            &options.codegen,
            times,
            after_pass,
        )?;
        module
            .functions
            .into_iter()
            .filter(|function| selected(&function.name))
            .map(|function| {
                let compiled =
                    codegen::compile_timed(&function, &options.codegen, keep_llvm_ir, times)
                        .map_err(|e| codegen_error(e, &sources))?;
                Ok(KernelOutput { function, compiled })
            })
            .collect()
    })
}

/// A diagnostic's one-line form (`file:line:col: message`) and its full
/// rendering with the caret.
fn summary_and_rendering(diag: &Diagnostic, sources: &SourceMap) -> (String, String) {
    (
        format!("{}: {}", diag.location(sources), diag.message),
        diag.render(sources),
    )
}

/// Codegen errors that point at source are rendered like front-end ones.
fn codegen_error(err: CodegenError, sources: &SourceMap) -> CompileError {
    match err {
        CodegenError::Unsupported { ref what, span } => {
            let diag =
                Diagnostic::error(span, format!("code generation does not support {what} yet"));
            CompileError::from_diagnostic(&diag, sources)
        }
        CodegenError::ResourceLimit { ref what, span } => {
            let diag = Diagnostic::error(
                span,
                format!("this config exceeds the target's limits: {what}"),
            );
            let (summary, rendered) = summary_and_rendering(&diag, sources);
            CompileError::ResourceLimit { summary, rendered }
        }
        CodegenError::Declined { ref what, span } => {
            let diag = Diagnostic::error(span, format!("code generation declines {what}"));
            let (summary, rendered) = summary_and_rendering(&diag, sources);
            CompileError::Declined { summary, rendered }
        }
        CodegenError::Llvm(msg) => CompileError::Llvm(msg),
    }
}
