//! Checks a parsed spec for names that do not resolve, dims no input binds,
//! duplicates and misuse of functions. Checks against the compiled kernel's
//! parameters live in `crate::bind`.

use super::*;
use tritonc::diagnostics::Diagnostic;

pub fn validate(spec: &OpSpec) -> Result<(), Diagnostic> {
    super::names::check_names(spec)?;
    check_dtypes(spec)?;
    check_tensors(spec)?;
    check_macro_names(spec)?;
    check_attr_names(spec)?;
    check_divisors(spec)?;
    check_grid_macro_values(spec)?;
    check_overflow(spec)?;
    check_args(spec)?;
    check_grid(spec)?;
    check_launch_requires(spec)?;
    if let Some(pad) = &spec.pad {
        check_pad(spec, pad)?;
    }
    if let Some(backward) = &spec.backward {
        check_backward(spec, backward)?;
    }
    Ok(())
}

/// The macros the grid and the `require` lines read are evaluated by the
/// launcher as integers: each of their values must be one (`64u`, C's
/// unsigned 64, is a kernel literal but not a launcher value).
fn check_grid_macro_values(spec: &OpSpec) -> Result<(), Diagnostic> {
    for name in crate::plan::grid_macros(spec) {
        let macros = spec
            .tune
            .iter()
            .chain(&spec.defines)
            .filter(|m| m.name == name);
        for m in macros {
            if let Some(bad) = m.values.iter().find(|v| v.trim().parse::<i64>().is_err()) {
                return Err(Diagnostic::error(
                    m.span,
                    format!(
                        "`{name}` = `{bad}` is read by the grid or a `require`, which need a plain integer"
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn check_dtypes(spec: &OpSpec) -> Result<(), Diagnostic> {
    for (i, d) in spec.dtypes.iter().enumerate() {
        if let Some(prev) = spec.dtypes[..i].iter().find(|p| p.var == d.var) {
            return Err(Diagnostic::error(
                d.span,
                format!("dtype variable `{}` is declared twice", d.var),
            )
            .with_label(prev.span, "first declared here"));
        }
        for (j, choice) in d.choices.iter().enumerate() {
            if d.choices[..j].iter().any(|p| p.dtype == choice.dtype) {
                return Err(Diagnostic::error(
                    choice.span,
                    format!("`{}` is listed twice for `{}`", choice.dtype, d.var),
                ));
            }
        }
    }
    for (i, d) in spec.derived_dtypes.iter().enumerate() {
        check_derived_dtype(spec, &spec.derived_dtypes[..i], d)?;
    }
    Ok(())
}

/// `dtype S from T {...}`: a new name, following a chosen variable, with one
/// entry for each of its choices and none for others.
fn check_derived_dtype(
    spec: &OpSpec,
    earlier: &[DerivedDtype],
    d: &DerivedDtype,
) -> Result<(), Diagnostic> {
    let prev = spec
        .dtypes
        .iter()
        .map(|p| (&p.var, p.span))
        .chain(earlier.iter().map(|p| (&p.var, p.span)))
        .find(|(var, _)| **var == d.var);
    if let Some((_, at)) = prev {
        return Err(Diagnostic::error(
            d.span,
            format!("dtype variable `{}` is declared twice", d.var),
        )
        .with_label(at, "first declared here"));
    }
    let Some(source) = spec.dtype_var(&d.source) else {
        return Err(Diagnostic::error(
            d.span,
            format!(
                "`{}` follows `{}`, which is not a dtype variable declared with `dtype {} in {{...}}`",
                d.var, d.source, d.source
            ),
        ));
    };
    for (j, (from, _)) in d.map.iter().enumerate() {
        if d.map[..j].iter().any(|(p, _)| p == from) {
            return Err(Diagnostic::error(
                d.span,
                format!("`{from}` is mapped twice for `{}`", d.var),
            ));
        }
        if !source.choices.iter().any(|c| c.dtype == *from) {
            return Err(Diagnostic::error(
                d.span,
                format!("`{from}` is not a choice of `{}`", d.source),
            )
            .with_label(source.span, "its choices"));
        }
    }
    if let Some(missing) = source.choices.iter().find(|c| d.of(&c.dtype).is_none()) {
        return Err(Diagnostic::error(
            d.span,
            format!(
                "`{}` gives no dtype for `{}` = {}; map every choice of `{}`",
                d.var, d.source, missing.dtype, d.source
            ),
        )
        .with_label(source.span, "its choices"));
    }
    Ok(())
}

/// `tune` and `define` macros, the dtype choices' macros, dims and tensors
/// share one namespace. A macro given twice is compiled with one value (the
/// last `-D` wins) and launched with another (the grid reads the first); a dim
/// or tensor named like a macro makes the grid read the macro.
fn check_macro_names(spec: &OpSpec) -> Result<(), Diagnostic> {
    let macros: Vec<(&MacroSpec, &str)> = spec
        .tune
        .iter()
        .map(|m| (m, "tune"))
        .chain(spec.defines.iter().map(|m| (m, "define")))
        .collect();
    let tensors: Vec<&TensorSpec> = spec.inputs.iter().chain(spec.outputs.iter()).collect();
    for (i, (m, kind)) in macros.iter().enumerate() {
        if let Some((prev, prev_kind)) = macros[..i].iter().find(|(p, _)| p.name == m.name) {
            return Err(Diagnostic::error(
                m.span,
                format!(
                    "`{}` is declared twice (`{prev_kind}`, then `{kind}`): the kernel would be built with one value and launched with the other",
                    m.name
                ),
            )
            .with_label(prev.span, "first declared here"));
        }
        if let Some(d) = spec.dtypes.iter().find(|d| {
            d.choices
                .iter()
                .any(|c| c.macros.iter().any(|(n, _)| *n == m.name))
        }) {
            return Err(Diagnostic::error(
                m.span,
                format!(
                    "`{}` is also set by the dtype choices of `{}`",
                    m.name, d.var
                ),
            )
            .with_label(d.span, "set here"));
        }
        for t in &tensors {
            let clash = if t.name == m.name {
                Some("a tensor")
            } else if t
                .dims
                .iter()
                .any(|d| matches!(d, Dim::Sym(s) if *s == m.name))
            {
                Some("a dim")
            } else {
                None
            };
            if let Some(what) = clash {
                return Err(Diagnostic::error(
                    m.span,
                    format!(
                        "`{}` names both a `{kind}` macro and {what} of `{}`: grids and requirements could not tell them apart",
                        m.name, t.name
                    ),
                )
                .with_label(t.span, "here"));
            }
        }
    }
    Ok(())
}

/// An attribute shares the namespace of tensors, dims, dtype variables and
/// macros: the launcher reads it by name.
fn check_attr_names(spec: &OpSpec) -> Result<(), Diagnostic> {
    // Python and torch schemas take arguments with defaults last.
    if let Some(with_default) = spec.attrs.iter().position(|a| a.default.is_some()) {
        if let Some(a) = spec.attrs[with_default..]
            .iter()
            .find(|a| a.default.is_none())
        {
            return Err(Diagnostic::error(
                a.span,
                format!("attribute `{}` has no default but follows one that has", a.name),
            )
            .with_label(spec.attrs[with_default].span, "this one has a default")
            .with_note("declare the attributes without a default first (frameworks take them in this order)"));
        }
    }
    for a in &spec.attrs {
        let tensor = spec.inputs.iter().chain(spec.outputs.iter()).find(|t| {
            t.name == a.name
                || t.dims
                    .iter()
                    .any(|d| matches!(d, Dim::Sym(s) if *s == a.name))
        });
        let clash = if let Some(t) = tensor {
            Some((
                if t.name == a.name {
                    "a tensor"
                } else {
                    "a dim"
                },
                t.span,
            ))
        } else if let Some(m) = spec
            .tune
            .iter()
            .chain(spec.defines.iter())
            .find(|m| m.name == a.name)
        {
            Some(("a macro", m.span))
        } else {
            spec.dtypes
                .iter()
                .map(|d| (&d.var, d.span))
                .chain(spec.derived_dtypes.iter().map(|d| (&d.var, d.span)))
                .find(|(var, _)| **var == a.name)
                .map(|(_, at)| ("a dtype variable", at))
        };
        if let Some((what, at)) = clash {
            return Err(Diagnostic::error(
                a.span,
                format!("attribute `{}` has the name of {what}", a.name),
            )
            .with_label(at, "here"));
        }
    }
    Ok(())
}

/// A float attribute goes whole to a float kernel parameter; int and bool
/// ones are integers wherever the launcher computes one.
fn check_attr_use(spec: &OpSpec, e: &Expr, name: &str, span: Span) -> Result<bool, Diagnostic> {
    let Some(attr) = spec.attr(name) else {
        return Ok(false);
    };
    if attr.ty == AttrType::Float && !matches!(e, Expr::Name(..)) {
        return Err(Diagnostic::error(
            span,
            format!("float attribute `{name}` can only be passed whole, to a float parameter of the kernel"),
        )
        .with_note("int and bool attributes may be used in integer expressions"));
    }
    Ok(true)
}

/// The expressions the generated launcher computes: kernel arguments, grid,
/// both sides of each requirement and of the `pad` line's condition.
fn launcher_exprs(spec: &OpSpec) -> impl Iterator<Item = &Expr> {
    spec.args
        .iter()
        .map(|a| &a.value)
        .chain(spec.launch_exprs())
        .chain(
            spec.pad
                .iter()
                .flat_map(|p| &p.conditions)
                .flat_map(|c| [&c.left, &c.right]),
        )
}

/// No division by zero in the kernel arguments, the grid or the requirements:
/// a divisor that is 0, or a macro one of whose values is 0, would divide by
/// zero in the generated launcher at run time.
fn check_divisors(spec: &OpSpec) -> Result<(), Diagnostic> {
    for e in launcher_exprs(spec) {
        if let Some(divisor) = zero_divisor(spec, e) {
            return Err(Diagnostic::error(
                divisor.span(),
                "this divisor is 0 (for at least one value of its macros): the launcher would divide by zero",
            ));
        }
    }
    Ok(())
}

/// The first divisor in `e` (of `/` or `cdiv`) that can be 0.
fn zero_divisor<'a>(spec: &OpSpec, e: &'a Expr) -> Option<&'a Expr> {
    let can_be_zero = |d: &Expr| {
        let values = |name: &str| -> Vec<i64> {
            spec.tune
                .iter()
                .chain(spec.defines.iter())
                .filter(|m| m.name == name)
                .flat_map(|m| m.values.iter().filter_map(|v| v.trim().parse::<i64>().ok()))
                .collect()
        };
        match d {
            Expr::Name(n, _) => values(n).contains(&0),
            other => other.eval(&|_| None) == Some(0),
        }
    };
    match e {
        Expr::Int(..) | Expr::Name(..) => None,
        Expr::Neg(inner, _) => zero_divisor(spec, inner),
        Expr::Bin(op, l, r) => {
            if *op == BinOp::Div && can_be_zero(r) {
                return Some(r);
            }
            zero_divisor(spec, l).or_else(|| zero_divisor(spec, r))
        }
        Expr::Call(f, args, _) => {
            if f == "cdiv" && args.get(1).is_some_and(can_be_zero) {
                return args.get(1);
            }
            args.iter().find_map(|a| zero_divisor(spec, a))
        }
    }
}

/// No constant part of an argument, grid or requirement expression (one
/// over literals and `tune`/`define` macros only) overflows a 64-bit integer
/// for any value of its macros: the launcher computes them in `int64_t`,
/// where an overflow is undefined.
fn check_overflow(spec: &OpSpec) -> Result<(), Diagnostic> {
    let macro_values = |name: &str| -> Option<Vec<i64>> {
        let m = spec
            .tune
            .iter()
            .chain(spec.defines.iter())
            .find(|m| m.name == name)?;
        m.values
            .iter()
            .map(|v| v.trim().parse::<i64>().ok())
            .collect()
    };
    for e in launcher_exprs(spec) {
        if let Some((at, assignment)) = overflowing(e, &macro_values) {
            let when = if assignment.is_empty() {
                String::new()
            } else {
                format!(" (for {assignment})")
            };
            return Err(Diagnostic::error(
                at.span(),
                format!("this expression overflows a 64-bit integer{when}: the launcher computes it in int64_t"),
            ));
        }
    }
    Ok(())
}

/// The first constant subexpression of `e` (largest first) that overflows for
/// some assignment of its macros' values, and that assignment (`SIZE = 256`).
fn overflowing<'a>(
    e: &'a Expr,
    values: &dyn Fn(&str) -> Option<Vec<i64>>,
) -> Option<(&'a Expr, String)> {
    let names: Vec<&str> = e.names().into_iter().map(|(n, _)| n).collect();
    let lists: Option<Vec<(&str, Vec<i64>)>> =
        names.iter().map(|n| Some((*n, values(n)?))).collect();
    if let (Some(lists), false) = (lists, matches!(e, Expr::Int(..) | Expr::Name(..))) {
        // Every assignment of the macros it reads (tuning lists are short).
        let mut assignment = vec![0usize; lists.len()];
        loop {
            let value_of = |n: &str| {
                lists
                    .iter()
                    .zip(&assignment)
                    .find(|((name, _), _)| *name == n)
                    .map(|((_, vals), &i)| vals[i])
            };
            if e.eval(&value_of).is_none() && !divides_by_zero(e, &value_of) {
                let text = lists
                    .iter()
                    .zip(&assignment)
                    .map(|((n, vals), &i)| format!("{n} = {}", vals[i]))
                    .collect::<Vec<_>>()
                    .join(", ");
                return Some((e, text));
            }
            // Next assignment, or done.
            let mut k = 0;
            while k < lists.len() {
                assignment[k] += 1;
                if assignment[k] < lists[k].1.len() {
                    break;
                }
                assignment[k] = 0;
                k += 1;
            }
            if k == lists.len() {
                return None;
            }
        }
    }
    match e {
        Expr::Int(..) | Expr::Name(..) => None,
        Expr::Neg(inner, _) => overflowing(inner, values),
        Expr::Bin(_, l, r) => overflowing(l, values).or_else(|| overflowing(r, values)),
        Expr::Call(_, args, _) => args.iter().find_map(|a| overflowing(a, values)),
    }
}

/// Whether `e` fails to evaluate for a zero divisor (reported by
/// [`check_divisors`]) rather than an overflow.
fn divides_by_zero(e: &Expr, value_of: &dyn Fn(&str) -> Option<i64>) -> bool {
    match e {
        Expr::Int(..) | Expr::Name(..) => false,
        Expr::Neg(inner, _) => divides_by_zero(inner, value_of),
        Expr::Bin(op, l, r) => {
            (*op == BinOp::Div && r.eval(value_of) == Some(0))
                || divides_by_zero(l, value_of)
                || divides_by_zero(r, value_of)
        }
        Expr::Call(f, args, _) => {
            (f == "cdiv" && args.get(1).and_then(|d| d.eval(value_of)) == Some(0))
                || args.iter().any(|a| divides_by_zero(a, value_of))
        }
    }
}

fn check_tensors(spec: &OpSpec) -> Result<(), Diagnostic> {
    let all: Vec<&TensorSpec> = spec.inputs.iter().chain(spec.outputs.iter()).collect();
    let bound = spec.dim_bindings();
    for (i, t) in all.iter().enumerate() {
        if let Some(prev) = all[..i].iter().find(|p| p.name == t.name) {
            return Err(Diagnostic::error(
                t.span,
                format!("tensor `{}` is declared twice", t.name),
            )
            .with_label(prev.span, "first declared here"));
        }
        if !spec.is_dtype_var(&t.dtype) && ir_elem_type(&t.dtype).is_none() {
            return Err(Diagnostic::error(
                t.span,
                format!(
                    "`{}` of `{}` is neither a dtype variable (declare it with `dtype {} in {{...}}`) nor a dtype",
                    t.dtype, t.name, t.dtype
                ),
            ));
        }
        if bound.iter().any(|(s, _, _)| *s == t.name) {
            return Err(Diagnostic::error(
                t.span,
                format!("`{}` names both a tensor and a dimension", t.name),
            ));
        }
    }
    for out in &spec.outputs {
        for dim in &out.dims {
            match dim {
                Dim::Sym(s) if !bound.iter().any(|(b, _, _)| b == s) => {
                    return Err(Diagnostic::error(
                        out.span,
                        format!(
                            "dimension `{s}` of output `{}` is not a dimension of any input",
                            out.name
                        ),
                    ))
                }
                Dim::Lit(v) if *v < 0 => {
                    return Err(Diagnostic::error(
                        out.span,
                        format!("dimension {v} of output `{}` is negative", out.name),
                    ))
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// Names an argument may use: tensors (as pointers), dims and fixed macros.
fn check_args(spec: &OpSpec) -> Result<(), Diagnostic> {
    let bound = spec.dim_bindings();
    for arg in &spec.args {
        check_calls(spec, &arg.value)?;
        for (name, span) in arg.value.names() {
            let is_tensor = spec.tensor(name).is_some();
            let is_dim = bound.iter().any(|(s, _, _)| s == name);
            if is_tensor
                && !matches!(arg.value, Expr::Name(..))
                && !is_call_tensor(&arg.value, name)
            {
                return Err(Diagnostic::error(
                    span,
                    format!("tensor `{name}` can only be passed whole (as its data pointer) or inside stride/size/numel"),
                ));
            }
            if is_tensor || is_dim || check_attr_use(spec, &arg.value, name, span)? {
                continue;
            }
            let note = if spec.tune.iter().any(|m| m.name == name) {
                "tuning macros are compile-time constants of the kernel; they cannot be passed as arguments"
            } else {
                "arguments may use the op's tensors, the dimensions of its inputs, its attributes, and stride/size/numel/cdiv/min/max"
            };
            return Err(Diagnostic::error(
                span,
                format!("unknown name `{name}` in the kernel arguments"),
            )
            .with_note(note));
        }
    }
    Ok(())
}

/// Whether every mention of tensor `name` in `e` is a first argument of
/// stride/size/numel.
fn is_call_tensor(e: &Expr, name: &str) -> bool {
    match e {
        Expr::Name(n, _) => n != name,
        Expr::Int(..) => true,
        Expr::Neg(inner, _) => is_call_tensor(inner, name),
        Expr::Bin(_, l, r) => is_call_tensor(l, name) && is_call_tensor(r, name),
        Expr::Call(f, args, _) => {
            let takes_tensor = matches!(f.as_str(), "stride" | "size" | "numel");
            args.iter().enumerate().all(|(i, a)| {
                if takes_tensor && i == 0 {
                    true
                } else {
                    is_call_tensor(a, name)
                }
            })
        }
    }
}

/// `stride(x, 0)`: the first argument is a tensor, the axis a literal in range.
fn check_calls(spec: &OpSpec, e: &Expr) -> Result<(), Diagnostic> {
    match e {
        Expr::Int(..) | Expr::Name(..) => Ok(()),
        Expr::Neg(inner, _) => check_calls(spec, inner),
        Expr::Bin(_, l, r) => {
            check_calls(spec, l)?;
            check_calls(spec, r)
        }
        Expr::Call(f, args, span) => {
            if matches!(f.as_str(), "stride" | "size" | "numel") {
                let tensor = match &args[0] {
                    Expr::Name(n, s) => spec.tensor(n).ok_or_else(|| {
                        Diagnostic::error(*s, format!("`{n}` is not a tensor of this op"))
                    })?,
                    other => {
                        return Err(Diagnostic::error(
                            other.span(),
                            format!("the first argument of `{f}` must be a tensor"),
                        ))
                    }
                };
                if f != "numel" {
                    let axis = match &args[1] {
                        Expr::Int(v, _) => *v,
                        other => {
                            return Err(Diagnostic::error(
                                other.span(),
                                format!("the axis of `{f}` must be a number"),
                            ))
                        }
                    };
                    if axis < 0 || axis as usize >= tensor.dims.len() {
                        return Err(Diagnostic::error(
                            *span,
                            format!(
                                "axis {axis} is out of range for `{}`, which has {} dimension{}",
                                tensor.name,
                                tensor.dims.len(),
                                if tensor.dims.len() == 1 { "" } else { "s" }
                            ),
                        ));
                    }
                }
                Ok(())
            } else {
                args.iter().try_for_each(|a| check_calls(spec, a))
            }
        }
    }
}

/// A `pad` line names dims the inputs bind, each once, and decides on dims
/// alone (it is decided once a call, before any config is looked at); its
/// divisors and overflow are checked with the launcher's other expressions.
fn check_pad(spec: &OpSpec, pad: &Pad) -> Result<(), Diagnostic> {
    let bound = spec.dim_bindings();
    let is_dim = |name: &str| bound.iter().any(|(s, _, _)| s == name);
    for (i, (dim, span)) in pad.dims.iter().enumerate() {
        if !is_dim(dim) {
            return Err(Diagnostic::error(
                *span,
                format!("`{dim}` is not a dimension of an input: `pad` lists input dimensions"),
            ));
        }
        if let Some((_, first)) = pad.dims[..i].iter().find(|(d, _)| d == dim) {
            return Err(Diagnostic::error(*span, format!("`{dim}` is listed twice"))
                .with_label(*first, "first listed here"));
        }
    }
    for condition in &pad.conditions {
        for e in [&condition.left, &condition.right] {
            check_calls(spec, e)?;
            for (name, span) in e.names() {
                if !is_dim(name) {
                    return Err(Diagnostic::error(
                        span,
                        format!("unknown name `{name}` in the `pad` condition"),
                    )
                    .with_note("it is decided before any config: it may use input dimensions, numbers and cdiv/min/max"));
                }
            }
        }
    }
    Ok(())
}

/// Grid names: dims, tuning and fixed macros.
fn check_grid(spec: &OpSpec) -> Result<(), Diagnostic> {
    let bound = spec.dim_bindings();
    for value in spec.launch_exprs() {
        check_calls(spec, value)?;
        for (name, span) in value.names() {
            if let Some(attr) = spec.attr(name) {
                if attr.ty == AttrType::Float {
                    return Err(Diagnostic::error(
                        span,
                        format!("float attribute `{name}` cannot be used in the grid or a `require` (they are integers)"),
                    ));
                }
                continue;
            }
            let known = bound.iter().any(|(s, _, _)| s == name)
                || crate::plan::is_macro(spec, name)
                || (spec.tensor(name).is_some() && is_call_tensor(value, name));
            if !known {
                return Err(Diagnostic::error(
                    span,
                    format!("unknown name `{name}` in the grid or a `require`"),
                )
                .with_note("grids and requirements may use input dimensions, `tune`/`define` macros, int and bool attributes and stride/size/numel/cdiv/min/max"));
            }
        }
    }
    Ok(())
}

/// `require` lines that read `num_warps` are decided per variant when the
/// op is generated: they may read macros, numbers and cdiv/min/max only.
fn check_launch_requires(spec: &OpSpec) -> Result<(), Diagnostic> {
    for r in &spec.launch_requires {
        for e in [&r.left, &r.right] {
            check_calls(spec, e)?;
            for (name, span) in e.names() {
                if name != NUM_WARPS_NAME && !crate::plan::is_macro(spec, name) {
                    return Err(Diagnostic::error(
                        span,
                        format!("`{name}` in a `require` that reads `num_warps`"),
                    )
                    .with_note("a `require` on `num_warps` is decided for each variant when the op is generated: it may use `tune`/`define` macros, `num_warps`, numbers and cdiv/min/max, not input dimensions or attributes"));
                }
            }
        }
    }
    Ok(())
}

fn check_backward(spec: &OpSpec, backward: &Backward) -> Result<(), Diagnostic> {
    for (i, grad) in backward.grads.iter().enumerate() {
        if spec.input(&grad.input).is_none() {
            return Err(Diagnostic::error(
                grad.span,
                format!("`d{}`: the op has no input `{}`", grad.input, grad.input),
            ));
        }
        if backward.grads[..i].iter().any(|g| g.input == grad.input) {
            return Err(Diagnostic::error(
                grad.span,
                format!("the gradient of `{}` is given twice", grad.input),
            ));
        }
        check_grad_expr(spec, &grad.value, grad.span)?;
    }
    Ok(())
}

fn check_grad_expr(
    spec: &OpSpec,
    e: &GradExpr,
    span: tritonc::span::Span,
) -> Result<(), Diagnostic> {
    match e {
        GradExpr::Tensor(name) => {
            let is_output_grad = name
                .strip_prefix('d')
                .is_some_and(|o| spec.outputs.iter().any(|t| t.name == o));
            if spec.tensor(name).is_some() || is_output_grad {
                Ok(())
            } else {
                Err(Diagnostic::error(
                    span,
                    format!("`{name}` in the backward is not an input, an output or an output's gradient (`d<output>`)"),
                ))
            }
        }
        GradExpr::Call { args, .. } => args.iter().try_for_each(|a| check_grad_expr(spec, a, span)),
    }
}
