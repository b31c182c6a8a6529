//! Built-in functions: program ids, element-wise math, min/max, atomics.
//! Triton-C has no user function calls.

use super::consteval::const_int;
use super::value::Val;
use super::Lowerer;
use crate::diagnostics::{Diagnostic, Result};
use crate::front::ast::{BinaryOp, Expr, Ident};
use crate::ir::{AtomicOp, BinOp, DType, OpKind, ScalarType, Type, UnOp};
use crate::span::Span;

const BUILTINS: &str = "get_program_id (or get_range_id), get_num_programs, exp, exp2, log, sqrt, sin, cos, abs, fabs, \
                        max, min, select, trans, atomic_add, atomic_max, atomic_min, atomic_xchg (or atomic_exch), atomic_cas";

impl Lowerer {
    pub(crate) fn lower_call(&mut self, callee: &Ident, args: &[Expr], span: Span) -> Result<Val> {
        let name = callee.name.as_str();
        let arity = |n: usize| check_arity(name, args, n, n, span);
        match name {
            // `get_range_id` is the older spelling of `get_program_id`.
            "get_program_id" | "get_range_id" | "get_num_programs" => {
                arity(1)?;
                let axis = const_int(&args[0], "the grid axis")?;
                if !(0..3).contains(&axis) {
                    return Err(Diagnostic::error(
                        args[0].span,
                        format!("grid axis must be 0, 1 or 2, not {axis}"),
                    ));
                }
                let axis = axis as u32;
                let kind = if name != "get_num_programs" {
                    OpKind::ProgramId { axis }
                } else {
                    OpKind::NumPrograms { axis }
                };
                let v = self.b.push1(kind, Type::num(DType::I32), span);
                Ok(Val::value(v, span))
            }
            "exp" | "exp2" | "log" | "sqrt" | "sin" | "cos" => {
                arity(1)?;
                let op = match name {
                    "exp" => UnOp::Exp,
                    "exp2" => UnOp::Exp2,
                    "log" => UnOp::Log,
                    "sqrt" => UnOp::Sqrt,
                    "sin" => UnOp::Sin,
                    _ => UnOp::Cos,
                };
                let x = self.lower_number(&args[0], name)?;
                // Integers are computed in f32 (GPU code, not C's double).
                let scalar = match self.scalar_of(&x).dtype() {
                    d if d.is_float() => ScalarType::Num(d),
                    _ => ScalarType::Num(DType::F32),
                };
                let shape = self.shape_of(&x);
                let src = self.materialize(x, scalar, &shape)?;
                self.emit_unary(op, src, span)
            }
            "abs" | "fabs" => {
                arity(1)?;
                let x = self.lower_number(&args[0], name)?;
                let src = self.value_of(x)?;
                self.emit_unary(UnOp::Abs, src, span)
            }
            "max" | "min" => {
                arity(2)?;
                let a = self.lower_number(&args[0], name)?;
                let b = self.lower_number(&args[1], name)?;
                let op = if name == "max" {
                    BinOp::Max
                } else {
                    BinOp::Min
                };
                self.min_max(op, a, b, span)
            }
            "select" => {
                arity(3)?;
                let c = self.lower_expr(&args[0])?;
                let c = Val::value(self.truth_value(c)?, args[0].span);
                let a = self.lower_expr(&args[1])?;
                let b = self.lower_expr(&args[2])?;
                self.select_vals(c, a, b, span)
            }
            "trans" => {
                arity(1)?;
                let x = self.lower_expr(&args[0])?;
                self.transpose(x, span)
            }
            "atomic_add" | "atomic_max" | "atomic_min" | "atomic_xchg" | "atomic_exch" => {
                check_arity(name, args, 2, 3, span)?;
                let op = match name {
                    "atomic_add" => AtomicOp::Add,
                    "atomic_max" => AtomicOp::Max,
                    "atomic_min" => AtomicOp::Min,
                    _ => AtomicOp::Exchange,
                };
                self.atomic_rmw(op, name, args, span)
            }
            "atomic_cas" => {
                arity(3)?;
                self.atomic_cas(args, span)
            }
            _ => Err(
                Diagnostic::error(callee.span, format!("unknown function `{name}`")).with_note(
                    format!("Triton-C kernels can call only the built-ins: {BUILTINS}"),
                ),
            ),
        }
    }

    /// An argument that must be a number (tile or scalar).
    fn lower_number(&mut self, e: &Expr, func: &str) -> Result<Val> {
        let v = self.lower_expr(e)?;
        if self.scalar_of(&v).is_ptr() {
            return Err(Diagnostic::error(
                e.span,
                format!("`{func}` needs numbers, but this is {}", self.describe(&v)),
            ));
        }
        Ok(v)
    }

    fn min_max(&mut self, op: BinOp, a: Val, b: Val, span: Span) -> Result<Val> {
        if a.is_weak() && b.is_weak() {
            // Fold through the comparison: max(a, b) = a > b ? a : b.
            let gt = self.binary_vals(BinaryOp::Gt, a, b, span)?;
            let a_wins = matches!(gt.op, super::value::Operand::Int(1)) == (op == BinOp::Max);
            return Ok(if a_wins { a } else { b });
        }
        let what = if op == BinOp::Max { "max" } else { "min" };
        let shape = self.common_shape(what, &[a, b], span)?;
        let mut dtype = self.operand_dtype(&a, &b);
        if dtype == DType::I1 {
            dtype = DType::I32;
        }
        let x = self.materialize(a, ScalarType::Num(dtype), &shape)?;
        let y = self.materialize(b, ScalarType::Num(dtype), &shape)?;
        let ty = Type::tile(ScalarType::Num(dtype), shape);
        let v = self
            .b
            .push1(OpKind::Binary { op, lhs: x, rhs: y }, ty, span);
        Ok(Val::value(v, span))
    }

    /// `atomic_op(ptr, value[, mask])`: gives the old values.
    fn atomic_rmw(&mut self, op: AtomicOp, name: &str, args: &[Expr], span: Span) -> Result<Val> {
        let (p, pointee) = self.lower_pointer(&args[0], &format!("`{name}`"))?;
        let value = self.lower_number(&args[1], name)?;
        let mask = match args.get(2) {
            Some(m) => {
                let mv = self.lower_expr(m)?;
                Some(Val::value(self.truth_value(mv)?, m.span))
            }
            None => None,
        };
        let mask = self.guard_mask(mask, span)?;
        let mut vals = vec![p, value];
        vals.extend(mask);
        let shape = self.common_shape(name, &vals, span)?;
        let ptr = self.materialize(p, ScalarType::Ptr(pointee), &shape)?;
        let value = self.materialize(value, ScalarType::Num(pointee), &shape)?;
        let mask = match mask {
            Some(m) => Some(self.materialize(m, ScalarType::Num(DType::I1), &shape)?),
            None => None,
        };
        let ty = Type::tile(ScalarType::Num(pointee), shape);
        let v = self.b.push1(
            OpKind::AtomicRmw {
                op,
                ptr,
                value,
                mask,
            },
            ty,
            span,
        );
        Ok(Val::value(v, span))
    }

    /// `atomic_cas(ptr, cmp, value)`: gives the old values.
    fn atomic_cas(&mut self, args: &[Expr], span: Span) -> Result<Val> {
        let (p, pointee) = self.lower_pointer(&args[0], "`atomic_cas`")?;
        let cmp = self.lower_number(&args[1], "atomic_cas")?;
        let value = self.lower_number(&args[2], "atomic_cas")?;
        let shape = self.common_shape("atomic_cas", &[p, cmp, value], span)?;
        let ptr = self.materialize(p, ScalarType::Ptr(pointee), &shape)?;
        let cmp = self.materialize(cmp, ScalarType::Num(pointee), &shape)?;
        let value = self.materialize(value, ScalarType::Num(pointee), &shape)?;
        let ty = Type::tile(ScalarType::Num(pointee), shape);
        let v = self
            .b
            .push1(OpKind::AtomicCas { ptr, cmp, value }, ty, span);
        Ok(Val::value(v, span))
    }
}

fn check_arity(name: &str, args: &[Expr], min: usize, max: usize, span: Span) -> Result<()> {
    if (min..=max).contains(&args.len()) {
        return Ok(());
    }
    let expected = if min == max {
        format!("{min}")
    } else {
        format!("{min} to {max}")
    };
    Err(Diagnostic::error(
        span,
        format!(
            "`{name}` takes {expected} argument{}, but {} {} given",
            if max == 1 { "" } else { "s" },
            args.len(),
            if args.len() == 1 { "was" } else { "were" }
        ),
    ))
}
