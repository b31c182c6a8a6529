//! The spec as its author wrote it, for generated messages and comments:
//! shapes, requirements, gradients, dtype groups, names.

use super::render_grad;
use crate::spec::{Backward, Dim, Expr, GradExpr, OpSpec};
use crate::variants::Group;

/// The requirements an input can fail, as the spec wrote them, for
/// messages: `N % 4 == 0, ...`.
pub fn requires_text(spec: &OpSpec) -> String {
    spec.requires
        .iter()
        // Lines on macros alone were settled when the op was generated:
        // no input can meet them.
        .filter(|r| {
            !r.left
                .names()
                .iter()
                .chain(r.right.names().iter())
                .all(|(name, _)| super::macros::is_macro(spec, name))
        })
        .map(|r| format!("{} {} {}", expr_text(&r.left), r.cmp, expr_text(&r.right)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `dot_nt` -> `DotNt`: each `_`-separated word capitalised.
pub fn camel_case(words: &str) -> String {
    let mut out = String::new();
    for part in words.split('_') {
        let mut chars = part.chars();
        if let Some(c) = chars.next() {
            out.push(c.to_ascii_uppercase());
            out.extend(chars);
        }
    }
    out
}

/// `T=float16,U=float32`: a dtype group's choices.
pub fn group_label(g: &Group) -> String {
    g.dtypes
        .iter()
        .map(|(v, d)| format!("{v}={d}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// `[N, 4]`.
pub fn shape_text(dims: &[Dim]) -> String {
    format!("[{}]", dims_list(dims, &|v| v.to_string()))
}

/// Dims joined by `, `: symbols by name, literals as `literal(v)` writes them.
pub fn dims_list(dims: &[Dim], literal: &dyn Fn(i64) -> String) -> String {
    dims.iter()
        .map(|d| match d {
            Dim::Sym(s) => s.clone(),
            Dim::Lit(v) => literal(*v),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The gradient as the spec wrote it: `triton::dot_nt(dz, y)`.
pub fn grad_text(e: &GradExpr) -> String {
    render_grad(e, &|namespace, op, args| {
        format!("{namespace}::{op}({})", args.join(", "))
    })
}

/// The whole `backward` line: `da = triton::dot_nt(dc, b), db = ...`.
pub fn backward_text(backward: &Backward) -> String {
    backward
        .grads
        .iter()
        .map(|g| format!("d{} = {}", g.input, grad_text(&g.value)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The expression as the spec wrote it (for messages), with the parentheses
/// its meaning needs: `N * (1 - LOOP)`.
pub fn expr_text(e: &Expr) -> String {
    use crate::spec::BinOp;
    fn precedence(op: BinOp) -> u8 {
        match op {
            BinOp::Add | BinOp::Sub => 1,
            BinOp::Mul | BinOp::Div => 2,
        }
    }
    // An operand binding looser than its operator (or as loose, on the right
    // of `-` and `/`) is parenthesized.
    let operand = |child: &Expr, parent: BinOp, right: bool| -> String {
        let text = expr_text(child);
        match child {
            Expr::Bin(op, ..)
                if precedence(*op) < precedence(parent)
                    || (right
                        && precedence(*op) == precedence(parent)
                        && matches!(parent, BinOp::Sub | BinOp::Div)) =>
            {
                format!("({text})")
            }
            _ => text,
        }
    };
    match e {
        Expr::Int(v, _) => v.to_string(),
        Expr::Name(n, _) => n.clone(),
        Expr::Neg(inner, _) => match inner.as_ref() {
            Expr::Bin(..) => format!("-({})", expr_text(inner)),
            _ => format!("-{}", expr_text(inner)),
        },
        Expr::Bin(op, l, r) => format!(
            "{} {} {}",
            operand(l, *op, false),
            op.symbol(),
            operand(r, *op, true)
        ),
        Expr::Call(f, args, _) => format!(
            "{f}({})",
            args.iter().map(expr_text).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// The op's signature for docs: `add(x: T[N], y: T[N]) -> z: T[N]; T in {float32, float16}`.
pub fn op_signature(spec: &OpSpec) -> String {
    let tensor =
        |t: &crate::spec::TensorSpec| format!("{}: {}{}", t.name, t.dtype, shape_text(&t.dims));
    let ins: Vec<String> = spec.inputs.iter().map(tensor).collect();
    let outs: Vec<String> = spec.outputs.iter().map(tensor).collect();
    let attrs = spec.attrs.iter().map(|a| match a.default {
        Some(v) => format!(
            "{}: {} = {}",
            a.name,
            a.ty.name(),
            v.literal(("true", "false"))
        ),
        None => format!("{}: {}", a.name, a.ty.name()),
    });
    let params: Vec<String> = ins.into_iter().chain(attrs).collect();
    let mut text = format!(
        "{}({}) -> {}",
        spec.name,
        params.join(", "),
        outs.join(", ")
    );
    for var in &spec.dtypes {
        let names: Vec<&str> = var.choices.iter().map(|c| c.dtype.as_str()).collect();
        text.push_str(&format!("; {} in {{{}}}", var.var, names.join(", ")));
    }
    for d in &spec.derived_dtypes {
        let entries: Vec<String> = d.map.iter().map(|(f, t)| format!("{f}: {t}")).collect();
        text.push_str(&format!(
            "; {} from {} {{{}}}",
            d.var,
            d.source,
            entries.join(", ")
        ));
    }
    text
}

/// A Python function's parameters for the op: the inputs, then the
/// attributes (`alpha=1.0` where the spec gives a default).
pub fn py_params(spec: &OpSpec) -> String {
    spec.inputs
        .iter()
        .map(|t| t.name.clone())
        .chain(spec.attrs.iter().map(|a| match a.default {
            Some(v) => format!("{}={}", a.name, v.literal(("True", "False"))),
            None => a.name.clone(),
        }))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_keep_the_parentheses_the_meaning_needs() {
        let requires = [
            "N * (1 - SIZE) <= 4",
            "N / SIZE * SIZE == N",
            "(N + 1) / (SIZE - 2) > 0",
            "N - (SIZE - 1) >= 0",
            "N - SIZE - 1 >= 0",
            "-(N + 1) < 0",
        ];
        let mut text = String::from(
            "#pragma opgen op t::add\n#pragma opgen dtype T in {float32: TYPE=float}\n\
             #pragma opgen input x: T[N]\n#pragma opgen output z: T[N]\n\
             #pragma opgen args N, x, z\n#pragma opgen grid cdiv(N, SIZE)\n\
             #pragma opgen tune SIZE = [128]\n",
        );
        for r in requires {
            text.push_str(&format!("#pragma opgen require {r}\n"));
        }
        let mut sources = tritonc::span::SourceMap::new();
        let file = sources.add("k.tc", text.clone());
        let spec = crate::spec::parse_spec(file, &text)
            .unwrap_or_else(|d| panic!("{}", d.render(&sources)))
            .expect("a spec");
        assert_eq!(requires_text(&spec), requires.join(", "));
    }
}
