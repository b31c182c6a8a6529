//! Subscripts reshape and reduce: `x[:, newaxis]`, `x[newaxis, :]`, `x[:, +]`,
//! `x[max, :]`. Each `:` or reduction names one axis of `x`, in order.

use super::shapes::fmt_shape;
use super::value::{Operand, Val};
use super::Lowerer;
use crate::diagnostics::{Diagnostic, Result};
use crate::front::ast::{Expr, ReduceOp, SliceItem};
use crate::ir::{DType, OpKind, ReduceKind, ScalarType, Type};
use crate::span::Span;

impl Lowerer {
    pub(crate) fn lower_subscript(
        &mut self,
        base: &Expr,
        items: &[(SliceItem, Span)],
        span: Span,
    ) -> Result<Val> {
        let v = self.lower_expr(base)?;
        let Operand::Value(mut cur) = v.op else {
            return Err(Diagnostic::error(span, "cannot subscript a literal"));
        };
        let shape = self.shape_of(&v);
        let axes = items
            .iter()
            .filter(|(it, _)| !matches!(it, SliceItem::NewAxis))
            .count();
        if axes != shape.len() {
            return Err(Diagnostic::error(
                span,
                format!(
                    "subscript names {axes} axes (`:` or reductions), but the tile has {} (shape {})",
                    shape.len(),
                    fmt_shape(&shape)
                ),
            )
            .with_label(base.span, format!("this has shape {}", fmt_shape(&shape)))
            .with_note("in Triton-C subscripts reshape (`newaxis`) and reduce (`+`, `max`, `min`); they do not index"));
        }
        // Reduce from the last axis down so earlier axis numbers stay valid.
        let mut kept = shape.clone();
        let reductions: Vec<(usize, ReduceOp, Span)> = items
            .iter()
            .filter(|(it, _)| !matches!(it, SliceItem::NewAxis))
            .enumerate()
            .filter_map(|(axis, (it, s))| match it {
                SliceItem::Reduce(op) => Some((axis, *op, *s)),
                _ => None,
            })
            .collect();
        for &(axis, op, item_span) in reductions.iter().rev() {
            let mut scalar = self.b.ty(cur).scalar;
            if scalar.is_ptr() {
                return Err(Diagnostic::error(
                    item_span,
                    "cannot reduce a tile of pointers",
                ));
            }
            let kind = match op {
                ReduceOp::Sum => ReduceKind::Sum,
                ReduceOp::Max => ReduceKind::Max,
                ReduceOp::Min => ReduceKind::Min,
            };
            if kind == ReduceKind::Sum && scalar == ScalarType::Num(DType::I1) {
                // Summing truth values counts them.
                scalar = ScalarType::Num(DType::I32);
                cur = self.cast_value(cur, scalar, item_span)?;
            }
            kept.remove(axis);
            let ty = Type::tile(scalar, kept.clone());
            cur = self.b.push1(
                OpKind::Reduce {
                    src: cur,
                    axis,
                    kind,
                },
                ty,
                span,
            );
        }
        let mut out = Vec::new();
        let mut next = kept.iter();
        for (it, _) in items {
            match it {
                SliceItem::All => out.push(*next.next().expect("one kept axis per `:`")),
                SliceItem::NewAxis => out.push(1),
                SliceItem::Reduce(_) => {}
            }
        }
        if out != kept {
            let ty = Type::tile(self.b.ty(cur).scalar, out);
            let op = if kept.is_empty() {
                OpKind::Splat { src: cur }
            } else {
                OpKind::Reshape { src: cur }
            };
            cur = self.b.push1(op, ty, span);
        }
        Ok(Val::value(cur, span))
    }
}
