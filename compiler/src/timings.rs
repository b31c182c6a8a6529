//! Wall time spent in each phase of a compile (`tritonc --timings`, and the
//! driver's `compile_timed` for tools that report compile time).
use std::fmt;
use std::time::{Duration, Instant};

/// The phases of one compile, in pipeline order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    /// Preprocessor, lexer and parser.
    Front,
    /// Types and shapes; AST -> Triton-IR.
    Sema,
    /// The Triton-IR verifier.
    IrVerify,
    /// The IR -> IR passes (with the verifier after each).
    IrPasses,
    /// Axis info (alignment, contiguity) and layout assignment.
    Analyses,
    /// NVPTX target setup: LLVM initialization, target machine, module.
    TargetSetup,
    /// Triton-IR -> LLVM IR (inkwell builder calls).
    LowerToLlvm,
    /// LLVM's module verifier.
    LlvmVerify,
    /// LLVM's optimization pipeline.
    LlvmOptimize,
    /// Printing the optimized LLVM IR to text (kept with the PTX).
    LlvmPrint,
    /// NVPTX instruction selection, register allocation and PTX printing.
    PtxEmit,
}

impl Phase {
    pub const ALL: [Phase; 11] = [
        Phase::Front,
        Phase::Sema,
        Phase::IrVerify,
        Phase::IrPasses,
        Phase::Analyses,
        Phase::TargetSetup,
        Phase::LowerToLlvm,
        Phase::LlvmVerify,
        Phase::LlvmOptimize,
        Phase::LlvmPrint,
        Phase::PtxEmit,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Phase::Front => "front end (preprocess, lex, parse)",
            Phase::Sema => "sema (AST -> Triton-IR)",
            Phase::IrVerify => "Triton-IR verifier",
            Phase::IrPasses => "Triton-IR passes",
            Phase::Analyses => "analyses (axis info, layouts)",
            Phase::TargetSetup => "NVPTX target setup",
            Phase::LowerToLlvm => "lowering to LLVM IR",
            Phase::LlvmVerify => "LLVM verifier",
            Phase::LlvmOptimize => "LLVM optimization passes",
            Phase::LlvmPrint => "LLVM IR to text",
            Phase::PtxEmit => "NVPTX codegen (PTX)",
        }
    }
}

/// Time per phase, summed over every kernel and point compiled with it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PhaseTimes {
    totals: Vec<(Phase, Duration)>,
}

impl PhaseTimes {
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs `work`, adding its wall time to `phase`.
    pub fn time<T>(&mut self, phase: Phase, work: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let out = work();
        self.add(phase, start.elapsed());
        out
    }

    pub fn add(&mut self, phase: Phase, spent: Duration) {
        match self.totals.iter_mut().find(|(p, _)| *p == phase) {
            Some((_, total)) => *total += spent,
            None => self.totals.push((phase, spent)),
        }
    }

    /// Time spent in `phase` (zero when it did not run).
    pub fn get(&self, phase: Phase) -> Duration {
        self.totals
            .iter()
            .find(|(p, _)| *p == phase)
            .map_or(Duration::ZERO, |(_, d)| *d)
    }

    /// Whether `phase` ran at all (even if it took no measurable time).
    pub fn ran(&self, phase: Phase) -> bool {
        self.totals.iter().any(|(p, _)| *p == phase)
    }

    pub fn total(&self) -> Duration {
        self.totals.iter().map(|(_, d)| *d).sum()
    }

    pub fn merge(&mut self, other: &PhaseTimes) {
        for &(phase, spent) in &other.totals {
            self.add(phase, spent);
        }
    }

    /// The phases that ran, in pipeline order.
    pub fn phases(&self) -> impl Iterator<Item = (Phase, Duration)> + '_ {
        Phase::ALL
            .into_iter()
            .filter(|p| self.ran(*p))
            .map(|p| (p, self.get(p)))
    }
}

/// One line per phase that ran (milliseconds), then the total.
impl fmt::Display for PhaseTimes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        for (phase, spent) in self.phases() {
            writeln!(f, "{:>9.2} ms  {}", ms(spent), phase.name())?;
        }
        write!(f, "{:>9.2} ms  total", ms(self.total()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_per_phase_and_prints_in_pipeline_order() {
        let mut t = PhaseTimes::new();
        t.add(Phase::PtxEmit, Duration::from_millis(3));
        t.add(Phase::Front, Duration::from_millis(1));
        t.add(Phase::PtxEmit, Duration::from_millis(2));
        assert_eq!(t.get(Phase::PtxEmit), Duration::from_millis(5));
        assert_eq!(t.get(Phase::Sema), Duration::ZERO);
        assert!(!t.ran(Phase::Sema));
        assert_eq!(t.total(), Duration::from_millis(6));
        let text = t.to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].ends_with("front end (preprocess, lex, parse)"));
        assert!(lines[0].trim_start().starts_with("1.00 ms"));
        assert!(lines[1].trim_start().starts_with("5.00 ms"));
        assert!(lines[2].ends_with("ms  total"));
    }

    #[test]
    fn merge_adds_the_other_times() {
        let mut a = PhaseTimes::new();
        a.add(Phase::Sema, Duration::from_millis(2));
        let mut b = PhaseTimes::new();
        b.add(Phase::Sema, Duration::from_millis(3));
        b.add(Phase::LlvmOptimize, Duration::from_millis(7));
        a.merge(&b);
        assert_eq!(a.get(Phase::Sema), Duration::from_millis(5));
        assert_eq!(a.get(Phase::LlvmOptimize), Duration::from_millis(7));
        let order: Vec<Phase> = a.phases().map(|(p, _)| p).collect();
        assert_eq!(order, vec![Phase::Sema, Phase::LlvmOptimize]);
    }

    #[test]
    fn time_returns_the_work_result() {
        let mut t = PhaseTimes::new();
        let v = t.time(Phase::Analyses, || 41 + 1);
        assert_eq!(v, 42);
        assert!(t.ran(Phase::Analyses));
    }
}
