//! Binary operators: literal folding, usual arithmetic conversions with weak
//! literals, numpy broadcasting, pointer arithmetic.

use super::consteval::{fold_float, fold_int, is_boolean_op};
use super::shapes::{broadcast_shapes, fmt_shape};
use super::types::{common_dtype, weak_with, WeakLit};
use super::value::{Operand, Val};
use super::Lowerer;
use crate::diagnostics::{Diagnostic, Result};
use crate::front::ast::{BinaryOp, Expr};
use crate::ir::{BinOp, CmpPred, DType, OpKind, ScalarType, Type, UnOp};
use crate::span::Span;

pub fn op_symbol(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Mul => "*",
        BinaryOp::Div => "/",
        BinaryOp::Rem => "%",
        BinaryOp::Add => "+",
        BinaryOp::Sub => "-",
        BinaryOp::Shl => "<<",
        BinaryOp::Shr => ">>",
        BinaryOp::Lt => "<",
        BinaryOp::Gt => ">",
        BinaryOp::Le => "<=",
        BinaryOp::Ge => ">=",
        BinaryOp::Eq => "==",
        BinaryOp::Ne => "!=",
        BinaryOp::BitAnd => "&",
        BinaryOp::BitXor => "^",
        BinaryOp::BitOr => "|",
        BinaryOp::LogicalAnd => "&&",
        BinaryOp::LogicalOr => "||",
        BinaryOp::MatMul => "@",
    }
}

fn cmp_pred(op: BinaryOp) -> Option<CmpPred> {
    Some(match op {
        BinaryOp::Lt => CmpPred::Lt,
        BinaryOp::Gt => CmpPred::Gt,
        BinaryOp::Le => CmpPred::Le,
        BinaryOp::Ge => CmpPred::Ge,
        BinaryOp::Eq => CmpPred::Eq,
        BinaryOp::Ne => CmpPred::Ne,
        _ => return None,
    })
}

fn arith_op(op: BinaryOp) -> Option<BinOp> {
    Some(match op {
        BinaryOp::Add => BinOp::Add,
        BinaryOp::Sub => BinOp::Sub,
        BinaryOp::Mul => BinOp::Mul,
        BinaryOp::Div => BinOp::Div,
        BinaryOp::Rem => BinOp::Rem,
        BinaryOp::Shl => BinOp::Shl,
        BinaryOp::Shr => BinOp::Shr,
        BinaryOp::BitAnd => BinOp::And,
        BinaryOp::BitXor => BinOp::Xor,
        BinaryOp::BitOr => BinOp::Or,
        _ => return None,
    })
}

fn needs_ints(op: BinaryOp) -> bool {
    matches!(
        op,
        BinaryOp::Shl | BinaryOp::Shr | BinaryOp::BitAnd | BinaryOp::BitXor | BinaryOp::BitOr
    )
}

impl Lowerer {
    pub(crate) fn lower_binary(
        &mut self,
        op: BinaryOp,
        lhs: &Expr,
        rhs: &Expr,
        span: Span,
    ) -> Result<Val> {
        if op == BinaryOp::MatMul {
            let (a, b) = (self.lower_expr(lhs)?, self.lower_expr(rhs)?);
            return self.matmul(a, b, span);
        }
        if matches!(op, BinaryOp::LogicalAnd | BinaryOp::LogicalOr) {
            return self.lower_logical(op, lhs, rhs, span);
        }
        let a = self.lower_expr(lhs)?;
        let b = self.lower_expr(rhs)?;
        self.binary_vals(op, a, b, span)
    }

    /// `a op b` on lowered operands; `span` covers the whole expression.
    pub(crate) fn binary_vals(&mut self, op: BinaryOp, a: Val, b: Val, span: Span) -> Result<Val> {
        if op == BinaryOp::MatMul {
            return self.matmul(a, b, span);
        }
        if a.is_weak() && b.is_weak() {
            return fold(op, a, b, span);
        }
        let (sa, sb) = (self.scalar_of(&a), self.scalar_of(&b));
        if sa.is_ptr() || sb.is_ptr() {
            return self.pointer_binary(op, a, b, span);
        }
        let shape = self.common_shape(op_symbol(op), &[a, b], span)?;
        if matches!(op, BinaryOp::LogicalAnd | BinaryOp::LogicalOr) {
            let x = self.truth_value(a)?;
            let x = self.broadcast_value(x, &shape, a.span)?;
            let y = self.truth_value(b)?;
            let y = self.broadcast_value(y, &shape, b.span)?;
            let bin = if op == BinaryOp::LogicalAnd {
                BinOp::And
            } else {
                BinOp::Or
            };
            return self.emit_binary(bin, x, y, &shape, span);
        }
        let mut dtype = self.operand_dtype(&a, &b);
        if needs_ints(op) && dtype.is_float() {
            return Err(Diagnostic::error(
                span,
                format!(
                    "operator `{}` needs integer operands, not `{}`",
                    op_symbol(op),
                    dtype.name()
                ),
            )
            .with_label(a.span, format!("this is {}", self.describe(&a)))
            .with_label(b.span, format!("this is {}", self.describe(&b))));
        }
        // C does arithmetic on `bool` in `int`; `&`, `|`, `^` stay logical on `i1`.
        let logical_bits = matches!(op, BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor);
        if dtype == DType::I1 && !logical_bits && cmp_pred(op).is_none() {
            dtype = DType::I32;
        }
        if let Some(same) =
            self.identity(op, a, b, &Type::tile(ScalarType::Num(dtype), shape.clone()))
        {
            return Ok(Val { span, ..same });
        }
        let x = self.materialize(a, ScalarType::Num(dtype), &shape)?;
        let y = self.materialize(b, ScalarType::Num(dtype), &shape)?;
        if let Some(pred) = cmp_pred(op) {
            let ty = Type::tile(ScalarType::Num(DType::I1), shape);
            let v = self.b.push1(
                OpKind::Cmp {
                    pred,
                    lhs: x,
                    rhs: y,
                },
                ty,
                span,
            );
            return Ok(Val::value(v, span));
        }
        let bin = arith_op(op).expect("every remaining operator is arithmetic");
        self.emit_binary(bin, x, y, &shape, span)
    }

    fn emit_binary(
        &mut self,
        op: BinOp,
        lhs: crate::ir::ValueId,
        rhs: crate::ir::ValueId,
        shape: &[usize],
        span: Span,
    ) -> Result<Val> {
        let ty = Type::tile(self.b.ty(lhs).scalar, shape.to_vec());
        let v = self.b.push1(OpKind::Binary { op, lhs, rhs }, ty, span);
        Ok(Val::value(v, span))
    }

    /// `x * 1`, `x / 1`, `x + 0`, `x - 0`, `0 + x`, `1 * x` (integer literals;
    /// `1.0` for products) are `x` itself when `x` already has the result type:
    /// strides of 1 in index arithmetic leave no ops behind.
    fn identity(&self, op: BinaryOp, a: Val, b: Val, result: &Type) -> Option<Val> {
        let one = |v: &Val| {
            matches!(v.op, Operand::Int(1)) || matches!(v.op, Operand::Float(f) if f == 1.0)
        };
        let zero = |v: &Val| matches!(v.op, Operand::Int(0));
        let keep = match op {
            BinaryOp::Mul if one(&b) => a,
            BinaryOp::Mul if one(&a) => b,
            BinaryOp::Div if one(&b) => a,
            BinaryOp::Add if zero(&b) => a,
            BinaryOp::Add if zero(&a) => b,
            BinaryOp::Sub if zero(&b) => a,
            _ => return None,
        };
        (self.type_of(&keep).as_ref() == Some(result)).then_some(keep)
    }

    /// The element type two number operands are converted to.
    pub(crate) fn operand_dtype(&self, a: &Val, b: &Val) -> DType {
        let da = self.scalar_of(a).dtype();
        let db = self.scalar_of(b).dtype();
        match (a.op, b.op) {
            (Operand::Value(_), Operand::Value(_)) => common_dtype(da, db),
            (Operand::Value(_), lit) => weak_with(weak_lit(lit), da),
            (lit, Operand::Value(_)) => weak_with(weak_lit(lit), db),
            _ => common_dtype(da, db),
        }
    }

    /// The broadcast shape of all operands, or an error at `span` labelling
    /// each operand's shape.
    pub(crate) fn common_shape(&self, what: &str, vals: &[Val], span: Span) -> Result<Vec<usize>> {
        let mut shape = Vec::new();
        for v in vals {
            match broadcast_shapes(&shape, &self.shape_of(v)) {
                Some(s) => shape = s,
                None => {
                    let shapes: Vec<String> =
                        vals.iter().map(|v| fmt_shape(&self.shape_of(v))).collect();
                    let mut d = Diagnostic::error(
                        span,
                        format!("incompatible shapes for `{what}`: {}", shapes.join(" and ")),
                    );
                    for v in vals {
                        d = d.with_label(
                            v.span,
                            format!("this has shape {}", fmt_shape(&self.shape_of(v))),
                        );
                    }
                    return Err(d.with_note("shapes broadcast when, aligning trailing axes, each pair of axes is equal or one of them is 1"));
                }
            }
        }
        Ok(shape)
    }

    /// `ptr + int`, `int + ptr`, `ptr - int`; everything else on pointers is an error.
    fn pointer_binary(&mut self, op: BinaryOp, a: Val, b: Val, span: Span) -> Result<Val> {
        let (pa, pb) = (self.scalar_of(&a).is_ptr(), self.scalar_of(&b).is_ptr());
        let (ptr, offset) = match (op, pa, pb) {
            (BinaryOp::Add, true, false) | (BinaryOp::Sub, true, false) => (a, b),
            (BinaryOp::Add, false, true) => (b, a),
            (BinaryOp::Sub, true, true) => {
                return Err(
                    Diagnostic::error(span, "subtracting pointers is not supported")
                        .with_label(a.span, format!("this is {}", self.describe(&a)))
                        .with_label(b.span, format!("this is {}", self.describe(&b))),
                )
            }
            _ => {
                return Err(Diagnostic::error(
                    span,
                    format!(
                        "operator `{}` cannot be applied to {} and {}",
                        op_symbol(op),
                        self.describe(&a),
                        self.describe(&b)
                    ),
                )
                .with_note("pointers support only `ptr + int` and `ptr - int`"))
            }
        };
        let off_dtype = match self.scalar_of(&offset) {
            ScalarType::Num(DType::I1) => DType::I32,
            ScalarType::Num(d) if d.is_int() => d,
            _ => {
                return Err(Diagnostic::error(
                    offset.span,
                    format!(
                        "pointer offsets must be integers, not {}",
                        self.describe(&offset)
                    ),
                ))
            }
        };
        let shape = self.common_shape(op_symbol(op), &[ptr, offset], span)?;
        let ptr_scalar = self.scalar_of(&ptr);
        let p = self.materialize(ptr, ptr_scalar, &shape)?;
        let mut off = self.materialize(offset, ScalarType::Num(off_dtype), &shape)?;
        if op == BinaryOp::Sub {
            let ty = self.b.ty(off).clone();
            off = self.b.push1(
                OpKind::Unary {
                    op: UnOp::Neg,
                    src: off,
                },
                ty,
                offset.span,
            );
        }
        let ty = Type::tile(ptr_scalar, shape);
        let v = self.b.push1(
            OpKind::AddPtr {
                ptr: p,
                offset: off,
            },
            ty,
            span,
        );
        Ok(Val::value(v, span))
    }
}

/// Folds an operator on two literals (C semantics; a float on either side
/// makes it float arithmetic, comparisons give ints).
fn fold(op: BinaryOp, a: Val, b: Val, span: Span) -> Result<Val> {
    let op_val = match (a.op, b.op) {
        (Operand::Int(x), Operand::Int(y)) => {
            Operand::Int(fold_int(op, x, y).map_err(|m| Diagnostic::error(span, m))?)
        }
        (x, y) => {
            let (x, y) = (as_f64(x), as_f64(y));
            let r = fold_float(op, x, y).ok_or_else(|| {
                Diagnostic::error(
                    span,
                    format!(
                        "operator `{}` needs integer operands, not floats",
                        op_symbol(op)
                    ),
                )
            })?;
            if is_boolean_op(op) {
                Operand::Int(r as i64)
            } else {
                Operand::Float(r)
            }
        }
    };
    Ok(Val { op: op_val, span })
}

/// A literal operand as [`WeakLit`].
pub fn weak_lit(o: Operand) -> WeakLit {
    match o {
        Operand::Int(i) => WeakLit::Int(i),
        _ => WeakLit::Float,
    }
}

fn as_f64(o: Operand) -> f64 {
    match o {
        Operand::Int(i) => i as f64,
        Operand::Float(f) => f,
        Operand::Value(_) => 0.0,
    }
}
