//! The pass manager: the passes in their fixed order, run over one function,
//! with the IR verified after every pass that ran (a pass that wrongly
//! reports "unchanged" is caught too; it costs microseconds).
use super::allocate_shared_memory::AllocateSharedMemory;
use super::assign_layouts::AssignLayouts;
use super::eliminate_dead_code::EliminateDeadCode;
use super::fold_dot_accumulator::FoldDotAccumulator;
use super::insert_layout_conversions::InsertLayoutConversions;
use super::narrow_before_convert::NarrowBeforeConvert;
use super::pipeline_dot_loops::PipelineDotLoops;
use super::place_barriers::PlaceBarriers;
use super::prefetch_dot_operands::PrefetchDotOperands;
use super::selection::{pass_named, UnknownPass};
use super::split_k::SplitK;
use super::swap_dot_operands::SwapDotOperands;
use super::tma_loads::TmaLoads;
use super::unrotate_prefetch::UnrotatePrefetch;
use super::widen_dot_k::WidenDotK;
use super::{Pass, PassOptions, Target};
use crate::ir::printer::print_function;
use crate::ir::verifier::{verify_function, VerifyError};
use crate::ir::Function;
use std::fmt;

/// Every pass, in the order [`PassManager::standard`] runs them.
pub const STANDARD: &[&dyn Pass] = &[
    &FoldDotAccumulator,
    &EliminateDeadCode,
    &UnrotatePrefetch,
    &WidenDotK,
    &SwapDotOperands,
    &SplitK,
    &AssignLayouts,
    &PipelineDotLoops,
    &TmaLoads,
    &NarrowBeforeConvert,
    &InsertLayoutConversions,
    &PrefetchDotOperands,
    &AllocateSharedMemory,
    &PlaceBarriers,
];

/// What one pass did to one function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassOutcome {
    Changed,
    Unchanged,
    /// Not run under these options; the reason is for the user.
    Skipped(&'static str),
}

impl fmt::Display for PassOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PassOutcome::Changed => f.write_str("changed"),
            PassOutcome::Unchanged => f.write_str("unchanged"),
            PassOutcome::Skipped(why) => write!(f, "skipped: {why}"),
        }
    }
}

/// Reported after each pass, with the function as the pass left it.
pub struct PassEvent<'a> {
    pub pass: &'static str,
    pub outcome: PassOutcome,
    pub function: &'a Function,
}

impl PassEvent<'_> {
    /// A header line naming the pass, the function and the outcome, then the
    /// IR (what `--print-after` prints and the pass file tests compare).
    pub fn dump(&self) -> String {
        format!(
            "// IR after {} on @{} ({})\n{}",
            self.pass,
            self.function.name,
            self.outcome,
            print_function(self.function)
        )
    }
}

/// A pass left invalid IR: a compiler bug, named after the pass.
#[derive(Clone, Debug, thiserror::Error)]
#[error("pass `{pass}` left invalid Triton-IR: {error}")]
pub struct PassFailure {
    pub pass: &'static str,
    pub error: VerifyError,
}

pub struct PassManager {
    passes: Vec<&'static dyn Pass>,
    options: PassOptions,
}

impl PassManager {
    /// These passes, in this order.
    pub fn new(passes: Vec<&'static dyn Pass>, options: PassOptions) -> Self {
        PassManager { passes, options }
    }

    /// The compiler's pipeline: every pass of [`STANDARD`].
    pub fn standard(options: PassOptions) -> Self {
        Self::new(STANDARD.to_vec(), options)
    }

    /// What codegen needs at the least, for IR that skipped the passes
    /// (`codegen::compile` of sema's IR): layouts, their conversions, the
    /// shared-memory plan and its barriers for `target`, nothing pipelined.
    pub fn codegen_minimum(target: Target) -> Self {
        let options = PassOptions {
            pipelining: false,
            target: Some(target),
        };
        Self::new(
            vec![
                &AssignLayouts,
                &NarrowBeforeConvert,
                &InsertLayoutConversions,
                &AllocateSharedMemory,
                &PlaceBarriers,
            ],
            options,
        )
    }

    /// Just the pass called `name` (file tests run one pass at a time).
    pub fn only(name: &str, options: PassOptions) -> Result<Self, UnknownPass> {
        Ok(Self::new(vec![pass_named(name)?], options))
    }

    pub fn passes(&self) -> &[&'static dyn Pass] {
        &self.passes
    }

    /// Runs the passes in order over `func`, calling `after_pass` after each.
    /// Stops at the first pass that leaves invalid IR.
    pub fn run(
        &self,
        func: &mut Function,
        after_pass: &mut dyn FnMut(&PassEvent<'_>),
    ) -> Result<(), PassFailure> {
        for pass in &self.passes {
            let outcome = match pass.skipped_because(&self.options) {
                Some(reason) => PassOutcome::Skipped(reason),
                None => {
                    let changed = pass.run(func, &self.options);
                    verify_function(func).map_err(|error| PassFailure {
                        pass: pass.name(),
                        error,
                    })?;
                    if changed {
                        PassOutcome::Changed
                    } else {
                        PassOutcome::Unchanged
                    }
                }
            };
            after_pass(&PassEvent {
                pass: pass.name(),
                outcome,
                function: func,
            });
        }
        Ok(())
    }

    /// The order, one numbered line per pass with its summary, and why it is
    /// skipped under these options (`tritonc --print-passes`).
    pub fn describe(&self) -> String {
        let width = self
            .passes
            .iter()
            .map(|p| p.name().len())
            .max()
            .unwrap_or(0);
        let digits = self.passes.len().to_string().len();
        self.passes
            .iter()
            .enumerate()
            .map(|(i, pass)| {
                let skipped = pass
                    .skipped_because(&self.options)
                    .map(|why| format!(" (skipped: {why})"))
                    .unwrap_or_default();
                format!(
                    "{:>digits$}. {:width$}  {}{skipped}\n",
                    i + 1,
                    pass.name(),
                    pass.summary()
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Const, DType, FunctionBuilder, OpKind, Type};
    use crate::span::Span;

    /// `%x = constant 1 : i32`, nothing else.
    fn one_constant() -> Function {
        let span = Span::new(0, 0, 1);
        let mut b = FunctionBuilder::new("k", span);
        let kind = OpKind::Constant {
            value: Const::Int(1),
        };
        b.push1(kind, Type::num(DType::I32), span);
        b.finish()
    }

    struct Untouched;
    impl Pass for Untouched {
        fn name(&self) -> &'static str {
            "untouched"
        }
        fn summary(&self) -> &'static str {
            "changes nothing"
        }
        fn run(&self, _: &mut Function, _: &PassOptions) -> bool {
            false
        }
    }

    /// Defines the constant's result a second time: invalid IR, reported as
    /// a change or (wrongly) not.
    struct Duplicates {
        reports_change: bool,
    }
    impl Pass for Duplicates {
        fn name(&self) -> &'static str {
            "duplicates"
        }
        fn summary(&self) -> &'static str {
            "copies the first op"
        }
        fn skipped_because(&self, options: &PassOptions) -> Option<&'static str> {
            (!options.pipelining).then_some("off")
        }
        fn run(&self, func: &mut Function, _: &PassOptions) -> bool {
            let first = func.body.ops[0].clone();
            func.body.ops.push(first);
            self.reports_change
        }
    }

    fn run(manager: &PassManager, func: &mut Function) -> (Vec<String>, Result<(), PassFailure>) {
        let mut seen = Vec::new();
        let result = manager.run(func, &mut |e| {
            seen.push(format!("{}: {}", e.pass, e.outcome))
        });
        (seen, result)
    }

    #[test]
    fn standard_order_is_fixed_and_printed() {
        let names: Vec<_> = STANDARD.iter().map(|p| p.name()).collect();
        assert_eq!(
            names,
            [
                "fold-dot-accumulator",
                "eliminate-dead-code",
                "unrotate-prefetch",
                "widen-dot-k",
                "swap-ab",
                "split-k",
                "assign-layouts",
                "pipeline-dot-loops",
                "tma-loads",
                "narrow-before-convert",
                "insert-layout-conversions",
                "prefetch-dot-operands",
                "allocate-shared-memory",
                "place-barriers"
            ]
        );
        let listing = PassManager::standard(PassOptions::all()).describe();
        assert!(
            listing.starts_with(" 1. fold-dot-accumulator       turns"),
            "{listing}"
        );
        assert!(
            listing.ends_with("(skipped: no target given (arch and warps))\n"),
            "{listing}"
        );
        let off = PassManager::standard(PassOptions {
            pipelining: false,
            target: None,
        })
        .describe();
        assert!(
            off.lines()
                .nth(7)
                .is_some_and(|l| l.ends_with("(skipped: TRITONC_NO_PIPELINE=1 is set)")),
            "{off}"
        );
    }

    #[test]
    fn reports_each_pass_in_order() {
        let manager = PassManager::new(vec![&Untouched, &Untouched], PassOptions::all());
        let mut func = one_constant();
        let (seen, result) = run(&manager, &mut func);
        assert!(result.is_ok());
        assert_eq!(seen, ["untouched: unchanged", "untouched: unchanged"]);
    }

    #[test]
    fn invalid_ir_after_a_pass_is_an_error_naming_it() {
        let both = [
            &Duplicates {
                reports_change: true,
            },
            &Duplicates {
                reports_change: false,
            },
        ];
        for duplicates in both {
            let manager =
                PassManager::new(vec![&Untouched, duplicates, &Untouched], PassOptions::all());
            let mut func = one_constant();
            let (seen, result) = run(&manager, &mut func);
            let failure = result.expect_err("the verifier runs after every pass");
            assert_eq!(failure.pass, "duplicates");
            assert!(failure
                .to_string()
                .starts_with("pass `duplicates` left invalid Triton-IR: "));
            // The pipeline stops at the failing pass.
            assert_eq!(seen, ["untouched: unchanged"]);
        }
    }

    #[test]
    fn a_skipped_pass_leaves_the_function_alone() {
        let duplicates = &Duplicates {
            reports_change: true,
        };
        let manager = PassManager::new(
            vec![duplicates],
            PassOptions {
                pipelining: false,
                target: None,
            },
        );
        let mut func = one_constant();
        let before = print_function(&func);
        let (seen, result) = run(&manager, &mut func);
        assert!(result.is_ok());
        assert_eq!(seen, ["duplicates: skipped: off"]);
        assert_eq!(print_function(&func), before);
    }

    #[test]
    fn dump_names_pass_function_and_outcome() {
        let func = one_constant();
        let event = PassEvent {
            pass: "untouched",
            outcome: PassOutcome::Unchanged,
            function: &func,
        };
        let dump = event.dump();
        assert!(
            dump.starts_with("// IR after untouched on @k (unchanged)\nfunc @k("),
            "{dump}"
        );
        assert!(dump.ends_with(&print_function(&func)));
    }
}
