//! Spec expressions (kernel arguments, grid, `require`) as Rust source for
//! the generated `op_spec.rs`. Every value is an `i64`; the helpers `cdiv`
//! and `div` (templates/onnxruntime/call.rs) never panic on a zero divisor,
//! and `c` is the call's shapes (`c.dim("N")`, `c.stride(0, 1)`).

use crate::spec::{BinOp, Expr, OpSpec, Require};

/// What a bare name in an expression stands for.
pub enum NameUse {
    /// A symbolic dim bound by an input: `c.dim("N")`.
    Dim,
    /// A tuning or fixed macro of the variant: `m("TM")`.
    Macro,
    /// An int or bool attribute of the node, by index: `c.attr_i(0)`.
    Attr(usize),
}

/// Rust text of `e`; `classify` says what each bare name is (`None`: an
/// error naming it).
pub fn to_rust(
    e: &Expr,
    spec: &OpSpec,
    classify: &dyn Fn(&str) -> Option<NameUse>,
) -> Result<String, String> {
    let tensor_index = |t: &Expr| -> Result<usize, String> {
        let Expr::Name(n, _) = t else {
            return Err("`stride`, `size` and `numel` take a tensor name".to_string());
        };
        spec.inputs
            .iter()
            .chain(spec.outputs.iter())
            .position(|x| &x.name == n)
            .ok_or_else(|| format!("`{n}` is not a tensor of the op"))
    };
    let go = |e: &Expr| to_rust(e, spec, classify);
    Ok(match e {
        Expr::Int(v, _) => format!("{v}i64"),
        Expr::Name(n, _) => match classify(n) {
            Some(NameUse::Dim) => format!("c.dim({n:?})"),
            Some(NameUse::Macro) => format!("m({n:?})"),
            Some(NameUse::Attr(i)) => format!("c.attr_i({i})"),
            None => return Err(format!("`{n}` is neither a dim of the inputs nor a macro")),
        },
        Expr::Neg(inner, _) => format!("(-{})", go(inner)?),
        Expr::Bin(op, l, r) => {
            let (l, r) = (go(l)?, go(r)?);
            match op {
                BinOp::Add => format!("{l}.wrapping_add({r})"),
                BinOp::Sub => format!("{l}.wrapping_sub({r})"),
                BinOp::Mul => format!("{l}.wrapping_mul({r})"),
                BinOp::Div => format!("div({l}, {r})"),
            }
        }
        Expr::Call(f, args, _) => match (f.as_str(), args.as_slice()) {
            ("stride", [t, axis]) => format!("c.stride({}, {})", tensor_index(t)?, go(axis)?),
            ("size", [t, axis]) => format!("c.size({}, {})", tensor_index(t)?, go(axis)?),
            ("numel", [t]) => format!("c.numel({})", tensor_index(t)?),
            ("cdiv", [a, b]) => format!("cdiv({}, {})", go(a)?, go(b)?),
            ("min", [a, b]) => format!("{}.min({})", go(a)?, go(b)?),
            ("max", [a, b]) => format!("{}.max({})", go(a)?, go(b)?),
            _ => return Err(format!("unknown function `{f}`")),
        },
    })
}

/// Rust `bool` text of a `require`-shaped comparison (`left cmp right`).
pub fn require_to_rust(
    r: &Require,
    spec: &OpSpec,
    classify: &dyn Fn(&str) -> Option<NameUse>,
) -> Result<String, String> {
    Ok(format!(
        "{} {} {}",
        to_rust(&r.left, spec, classify)?,
        r.cmp,
        to_rust(&r.right, spec, classify)?
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::parse_spec;

    const SPEC: &str = "#pragma opgen op t::mm
#pragma opgen dtype T in {float32: TYPE=float}
#pragma opgen input a: T[M, K]
#pragma opgen input b: T[K, N]
#pragma opgen output c: T[M, N]
#pragma opgen args a, b, c, M, N, K, lda = stride(a, 0), ldc = stride(c, 0)
#pragma opgen grid cdiv(M, TM), cdiv(N, TN)
#pragma opgen tune TM = [32, 64]
#pragma opgen tune TN = [32, 64]
";

    fn classify(n: &str) -> Option<NameUse> {
        match n {
            "M" | "N" | "K" => Some(NameUse::Dim),
            "TM" | "TN" => Some(NameUse::Macro),
            _ => None,
        }
    }

    #[test]
    fn renders_dims_macros_strides_and_safe_division() {
        let spec = parse_spec(0, SPEC).unwrap().unwrap();
        let grid: Vec<String> = spec
            .grid
            .iter()
            .map(|g| to_rust(&g.value, &spec, &classify).unwrap())
            .collect();
        assert_eq!(
            grid,
            [
                "cdiv(c.dim(\"M\"), m(\"TM\"))",
                "cdiv(c.dim(\"N\"), m(\"TN\"))"
            ]
        );
        // `c` is the third tensor (inputs, then outputs).
        assert_eq!(
            to_rust(&spec.args[7].value, &spec, &classify).unwrap(),
            "c.stride(2, 0i64)"
        );
        let scaled = spec.args[3].value.clone();
        let e = crate::spec::Expr::Bin(
            crate::spec::BinOp::Div,
            Box::new(scaled),
            Box::new(crate::spec::Expr::Neg(
                Box::new(spec.args[4].value.clone()),
                spec.span,
            )),
        );
        assert_eq!(
            to_rust(&e, &spec, &classify).unwrap(),
            "div(c.dim(\"M\"), (-c.dim(\"N\")))"
        );
    }

    #[test]
    fn unknown_names_are_errors() {
        let spec = parse_spec(0, SPEC).unwrap().unwrap();
        let only_dims = |n: &str| (n == "M").then_some(NameUse::Dim);
        let err = to_rust(&spec.grid[0].value, &spec, &only_dims).unwrap_err();
        assert!(err.contains("`TM`"), "{err}");
    }
}
