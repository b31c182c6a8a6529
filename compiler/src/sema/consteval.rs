//! Integer constant expressions, evaluated at compile time: tile dimensions,
//! range bounds, builtin axes. Macros are already substituted, so what is left
//! is literals and operators; a name here is a variable (or a missing `-D`).

use crate::diagnostics::{Diagnostic, Result};
use crate::front::ast::{BinaryOp, Expr, ExprKind, UnaryOp};

/// Evaluates `expr` as a C integer constant expression (64-bit, wrapping).
/// `what` names the context for messages ("tile dimension", "range bound").
pub fn const_int(expr: &Expr, what: &str) -> Result<i64> {
    let err = |msg: String| Err(Diagnostic::error(expr.span, msg));
    match &expr.kind {
        ExprKind::IntLit(v) => Ok(*v),
        ExprKind::BoolLit(b) => Ok(*b as i64),
        ExprKind::FloatLit { .. } => err(format!("{what} must be an integer, not a float")),
        ExprKind::Ident(name) => err(format!(
            "{what} must be a compile-time constant, but `{name}` is not one \
             (a variable, or a macro without a -D definition?)"
        )),
        ExprKind::Unary { op, operand } => {
            let v = const_int(operand, what)?;
            match op {
                UnaryOp::Neg => Ok(v.wrapping_neg()),
                UnaryOp::Plus => Ok(v),
                UnaryOp::Not => Ok((v == 0) as i64),
                UnaryOp::BitNot => Ok(!v),
                _ => err(format!("{what} must be a compile-time constant")),
            }
        }
        ExprKind::Binary { op, lhs, rhs } => {
            let a = const_int(lhs, what)?;
            let b = const_int(rhs, what)?;
            checked_fold(*op, a, b).map_err(|msg| Diagnostic::error(expr.span, msg))
        }
        ExprKind::Ternary {
            cond,
            then_expr,
            else_expr,
        } => {
            if const_int(cond, what)? != 0 {
                const_int(then_expr, what)
            } else {
                const_int(else_expr, what)
            }
        }
        ExprKind::Cast { expr: inner, .. } => const_int(inner, what),
        _ => err(format!("{what} must be a compile-time constant")),
    }
}

/// [`fold_int`] for sizes: a result that does not fit 64 bits, or a shift by
/// a negative amount or by 64 or more (undefined in C), is an error, not a
/// wrapped value (`float x[1 << 64]` would otherwise be a one-element tile).
fn checked_fold(op: BinaryOp, a: i64, b: i64) -> std::result::Result<i64, String> {
    let wide = match op {
        BinaryOp::Add => a as i128 + b as i128,
        BinaryOp::Sub => a as i128 - b as i128,
        BinaryOp::Mul => a as i128 * b as i128,
        BinaryOp::Shl | BinaryOp::Shr if !(0..64).contains(&b) => {
            return Err(format!(
                "shift by {b} in a constant expression (must be 0 to 63)"
            ))
        }
        BinaryOp::Shl => (a as i128) << b,
        _ => return fold_int(op, a, b),
    };
    i64::try_from(wide)
        .map_err(|_| format!("the constant expression overflows 64 bits ({wide} does not fit)"))
}

/// C semantics of a binary operator on two integer constants.
pub fn fold_int(op: BinaryOp, a: i64, b: i64) -> std::result::Result<i64, String> {
    Ok(match op {
        BinaryOp::Add => a.wrapping_add(b),
        BinaryOp::Sub => a.wrapping_sub(b),
        BinaryOp::Mul => a.wrapping_mul(b),
        BinaryOp::Div | BinaryOp::Rem if b == 0 => {
            return Err("division by zero in a constant expression".into())
        }
        BinaryOp::Div => a.wrapping_div(b),
        BinaryOp::Rem => a.wrapping_rem(b),
        BinaryOp::Shl => a.wrapping_shl(b as u32),
        BinaryOp::Shr => a.wrapping_shr(b as u32),
        BinaryOp::Lt => (a < b) as i64,
        BinaryOp::Gt => (a > b) as i64,
        BinaryOp::Le => (a <= b) as i64,
        BinaryOp::Ge => (a >= b) as i64,
        BinaryOp::Eq => (a == b) as i64,
        BinaryOp::Ne => (a != b) as i64,
        BinaryOp::BitAnd => a & b,
        BinaryOp::BitXor => a ^ b,
        BinaryOp::BitOr => a | b,
        BinaryOp::LogicalAnd => (a != 0 && b != 0) as i64,
        BinaryOp::LogicalOr => (a != 0 || b != 0) as i64,
        BinaryOp::MatMul => return Err("`@` needs tiles, not constants".into()),
    })
}

/// C semantics of a binary operator on two float constants; `None` for the
/// operators that need integers. Comparisons give 0/1 as a float.
pub fn fold_float(op: BinaryOp, a: f64, b: f64) -> Option<f64> {
    Some(match op {
        BinaryOp::Add => a + b,
        BinaryOp::Sub => a - b,
        BinaryOp::Mul => a * b,
        BinaryOp::Div => a / b,
        BinaryOp::Rem => a % b,
        BinaryOp::Lt => (a < b) as i64 as f64,
        BinaryOp::Gt => (a > b) as i64 as f64,
        BinaryOp::Le => (a <= b) as i64 as f64,
        BinaryOp::Ge => (a >= b) as i64 as f64,
        BinaryOp::Eq => (a == b) as i64 as f64,
        BinaryOp::Ne => (a != b) as i64 as f64,
        BinaryOp::LogicalAnd => (a != 0.0 && b != 0.0) as i64 as f64,
        BinaryOp::LogicalOr => (a != 0.0 || b != 0.0) as i64 as f64,
        _ => return None,
    })
}

/// Whether `op` gives a truth value (its folded float result is really an int).
pub fn is_boolean_op(op: BinaryOp) -> bool {
    matches!(
        op,
        BinaryOp::Lt
            | BinaryOp::Gt
            | BinaryOp::Le
            | BinaryOp::Ge
            | BinaryOp::Eq
            | BinaryOp::Ne
            | BinaryOp::LogicalAnd
            | BinaryOp::LogicalOr
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span::Span;

    fn lit(v: i64) -> Expr {
        Expr {
            kind: ExprKind::IntLit(v),
            span: Span::default(),
        }
    }

    fn bin(op: BinaryOp, a: Expr, b: Expr) -> Expr {
        Expr {
            kind: ExprKind::Binary {
                op,
                lhs: Box::new(a),
                rhs: Box::new(b),
            },
            span: Span::default(),
        }
    }

    #[test]
    fn folds_arithmetic() {
        let e = bin(BinaryOp::Mul, bin(BinaryOp::Add, lit(2), lit(6)), lit(4));
        assert_eq!(const_int(&e, "dim").unwrap(), 32);
        let e = bin(BinaryOp::Shl, lit(1), lit(7));
        assert_eq!(const_int(&e, "dim").unwrap(), 128);
    }

    #[test]
    fn rejects_names_and_zero_division() {
        let name = Expr {
            kind: ExprKind::Ident("TM".into()),
            span: Span::default(),
        };
        let msg = const_int(&name, "tile dimension").unwrap_err().message;
        assert!(msg.contains("`TM`"), "{msg}");
        let e = bin(BinaryOp::Div, lit(1), lit(0));
        assert!(const_int(&e, "dim").is_err());
    }

    #[test]
    fn sizes_that_overflow_or_shift_too_far_are_errors() {
        // `1 << 64` used to wrap to 1: a one-element tile.
        let msg = const_int(&bin(BinaryOp::Shl, lit(1), lit(64)), "tile dimension")
            .unwrap_err()
            .message;
        assert!(msg.contains("shift by 64"), "{msg}");
        let msg = const_int(&bin(BinaryOp::Shl, lit(1), lit(-1)), "dim")
            .unwrap_err()
            .message;
        assert!(msg.contains("shift by -1"), "{msg}");
        let msg = const_int(&bin(BinaryOp::Shl, lit(3), lit(62)), "dim")
            .unwrap_err()
            .message;
        assert!(msg.contains("overflows 64 bits"), "{msg}");
        let msg = const_int(&bin(BinaryOp::Mul, lit(1 << 40), lit(1 << 40)), "dim")
            .unwrap_err()
            .message;
        assert!(msg.contains("overflows 64 bits"), "{msg}");
        assert_eq!(
            const_int(&bin(BinaryOp::Shl, lit(1), lit(62)), "dim").unwrap(),
            1 << 62
        );
    }
}
