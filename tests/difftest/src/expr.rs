//! Random well-typed Triton-C expressions over tiles, as source text. Every
//! operand of an operator has the operator's element type (casts are
//! explicit), so sema's promotion rules never decide a type. Operations
//! that the CPU and the GPU may round differently never feed a choice: the
//! operands of comparisons and of float-to-int casts are exact leaves
//! (loaded inputs, indices, constants), and divisors can never be zero.

use crate::rng::Rng;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    F32,
    F16,
    I32,
    Bool,
}

impl Ty {
    pub fn c_name(self) -> &'static str {
        match self {
            Ty::F32 => "float",
            Ty::F16 => "half",
            Ty::I32 => "int",
            Ty::Bool => "bool",
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Ty::F32 | Ty::F16)
    }

    /// Bytes of one element in a buffer.
    pub fn size(self) -> usize {
        match self {
            Ty::F32 | Ty::I32 => 4,
            Ty::F16 => 2,
            Ty::Bool => 1,
        }
    }

    /// The name the GPU check and the case file use.
    pub fn dtype(self) -> &'static str {
        match self {
            Ty::F32 => "f32",
            Ty::F16 => "f16",
            Ty::I32 => "i32",
            Ty::Bool => "bool",
        }
    }
}

/// A value an expression may use: a tile variable (possibly broadcast, as
/// `v[:, newaxis]`), an index tile or a scalar parameter. All are exact.
#[derive(Clone, Debug)]
pub struct Leaf {
    pub text: String,
    pub ty: Ty,
}

pub struct ExprGen<'a> {
    pub rng: &'a mut Rng,
    pub leaves: &'a [Leaf],
}

impl ExprGen<'_> {
    /// An expression of element type `ty`, at most `depth` operators deep.
    pub fn expr(&mut self, ty: Ty, depth: u32) -> String {
        if depth == 0 || self.rng.chance(25) {
            return self.leaf(ty);
        }
        let d = depth - 1;
        match ty {
            Ty::F32 => self.float(ty, d, true),
            Ty::F16 => self.float(ty, d, false),
            Ty::I32 => self.int(d),
            Ty::Bool => self.cond(d),
        }
    }

    fn float(&mut self, ty: Ty, d: u32, wide: bool) -> String {
        let lit = |v: &str| {
            if wide {
                format!("{v}f")
            } else {
                format!("(half){v}f")
            }
        };
        let choices = if wide { 14 } else { 9 };
        match self.rng.below(choices) {
            0..=2 => {
                let op = *self.rng.pick(&["+", "-", "*"]);
                format!("({} {op} {})", self.expr(ty, d), self.expr(ty, d))
            }
            3 => {
                let f = *self.rng.pick(&["min", "max"]);
                format!("{f}({}, {})", self.expr(ty, d), self.expr(ty, d))
            }
            4 => format!("(-({}))", self.expr(ty, d)),
            5 => format!(
                "({} ? {} : {})",
                self.cond(d.min(1)),
                self.expr(ty, d),
                self.expr(ty, d)
            ),
            6 => {
                let from = *self.rng.pick(&[Ty::F32, Ty::F16, Ty::I32]);
                format!("(({}){})", ty.c_name(), self.expr(from, d))
            }
            7 => format!("({} * {})", self.expr(ty, d), lit(self.small_float())),
            8 => format!("({} + {})", self.expr(ty, d), lit(self.small_float())),
            // f32 only: division and the math builtins, on arguments kept in range.
            9 => {
                let b = self.expr(ty, d);
                format!("({} / ({b} * {b} + 1.0f))", self.expr(ty, d))
            }
            10 => format!("exp(min({}, 4.0f))", self.expr(ty, d)),
            11 => {
                let a = self.expr(ty, d);
                format!("log({a} * {a} + 1.0f)")
            }
            12 => {
                let a = self.expr(ty, d);
                format!("sqrt({a} * {a} + 0.25f)")
            }
            _ => format!("abs({})", self.expr(ty, d)),
        }
    }

    fn int(&mut self, d: u32) -> String {
        let ty = Ty::I32;
        match self.rng.below(11) {
            0..=2 => {
                let op = *self.rng.pick(&["+", "-", "*", "&", "|", "^"]);
                format!("({} {op} {})", self.expr(ty, d), self.expr(ty, d))
            }
            3 => {
                let f = *self.rng.pick(&["min", "max"]);
                format!("{f}({}, {})", self.expr(ty, d), self.expr(ty, d))
            }
            4 => {
                let op = *self.rng.pick(&["/", "%"]);
                format!(
                    "({} {op} (({} & 7) + 1))",
                    self.expr(ty, d),
                    self.expr(ty, d)
                )
            }
            5 => format!("({} >> ({} & 7))", self.expr(ty, d), self.expr(ty, d)),
            6 => format!("({} << ({} & 3))", self.expr(ty, d), self.expr(ty, d)),
            7 => format!(
                "({} ? {} : {})",
                self.cond(d.min(1)),
                self.expr(ty, d),
                self.expr(ty, d)
            ),
            8 => {
                // Exact floats only: a rounding difference must not move a cast.
                let from = *self.rng.pick(&[Ty::F32, Ty::F16]);
                format!("((int){})", self.leaf(from))
            }
            9 => format!("({} + {})", self.expr(ty, d), self.rng.range(-9, 9)),
            _ => format!("(-({}))", self.expr(ty, d)),
        }
    }

    /// A condition over exact operands.
    pub fn cond(&mut self, d: u32) -> String {
        match self.rng.below(if d == 0 { 1 } else { 4 }) {
            0 => {
                let ty = *self.rng.pick(&[Ty::F32, Ty::F16, Ty::I32]);
                let op = *self.rng.pick(&["<", "<=", ">", ">=", "==", "!="]);
                format!("({} {op} {})", self.leaf(ty), self.leaf(ty))
            }
            1 => format!("({} && {})", self.cond(d - 1), self.cond(d - 1)),
            2 => format!("({} || {})", self.cond(d - 1), self.cond(d - 1)),
            _ => format!("(!{})", self.cond(d - 1)),
        }
    }

    /// A leaf of type `ty` (exact: see the module doc), or a constant of it.
    fn leaf(&mut self, ty: Ty) -> String {
        if ty == Ty::Bool {
            return self.cond(0);
        }
        let same: Vec<&Leaf> = self.leaves.iter().filter(|l| l.ty == ty).collect();
        if !same.is_empty() && !self.rng.chance(15) {
            return self.rng.pick(&same).text.clone();
        }
        let others: Vec<&Leaf> = self.leaves.iter().filter(|l| l.ty != Ty::Bool).collect();
        if !others.is_empty() && self.rng.chance(50) {
            let l = self.rng.pick(&others);
            // Casts of exact values are exact, except int to half past 2048
            // (inputs and indices stay far below it).
            return format!("(({}){})", ty.c_name(), l.text);
        }
        match ty {
            Ty::F32 => format!("{}f", self.small_float()),
            Ty::F16 => format!("((half){}f)", self.small_float()),
            _ => format!("{}", self.rng.range(-9, 9)),
        }
    }

    fn small_float(&mut self) -> &'static str {
        *self
            .rng
            .pick(&["0.5", "1.5", "2.0", "-0.25", "3.0", "-1.0", "0.125"])
    }
}
