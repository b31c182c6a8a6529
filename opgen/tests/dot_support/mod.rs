//! The bundled op specs and the dot op's candidate filtering as the
//! generated op does it: every tuning point whose `require` lines hold for
//! the inputs (shared by the interpreter and autotune-key tests).

#![allow(dead_code)]

use std::path::PathBuf;
use triton_opgen::spec::{BinOp, Expr, OpSpec};

pub fn op_path(name: &str) -> PathBuf {
    PathBuf::from(format!(
        "{}/../tests/ops/{name}.tc",
        env!("CARGO_MANIFEST_DIR")
    ))
}

pub fn macro_value(defines: &[(String, String)], name: &str) -> u32 {
    defines
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.parse().unwrap())
        .unwrap()
}

/// The value of a `require` side or a grid axis for these inputs; `stride(a, 0)` and
/// `stride(b, 0)` are the leading strides (the op's output is dense).
pub fn eval_with_strides(e: &Expr, value: &dyn Fn(&str) -> i64, lda: i64, ldb: i64) -> i64 {
    let go = |e: &Expr| eval_with_strides(e, value, lda, ldb);
    match e {
        Expr::Int(v, _) => *v,
        Expr::Name(n, _) => value(n),
        Expr::Neg(inner, _) => -go(inner),
        Expr::Bin(op, l, r) => {
            let (l, r) = (go(l), go(r));
            match op {
                BinOp::Add => l + r,
                BinOp::Sub => l - r,
                BinOp::Mul => l * r,
                BinOp::Div => l / r,
            }
        }
        Expr::Call(f, args, _) => match (f.as_str(), &args[0]) {
            ("cdiv", x) => (go(x) + go(&args[1]) - 1) / go(&args[1]),
            ("stride", Expr::Name(t, _)) if t == "a" => lda,
            ("stride", Expr::Name(t, _)) if t == "b" => ldb,
            other => panic!("the test does not evaluate {other:?}"),
        },
    }
}

/// Every tuning point of the float32 group (dtype and fixed macros included)
/// whose `require` lines hold for these inputs: the op's candidates.
pub fn candidates(
    spec: &OpSpec,
    (m, n, k): (usize, usize, usize),
    (lda, ldb): (usize, usize),
) -> Vec<Vec<(String, String)>> {
    let mut points: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for t in &spec.tune {
        points = points
            .into_iter()
            .flat_map(|p| {
                t.values.iter().map(move |v| {
                    let mut next = p.clone();
                    next.push((t.name.clone(), v.clone()));
                    next
                })
            })
            .collect();
    }
    let mut fixed: Vec<(String, String)> = spec.dtypes[0].choices[0].macros.clone();
    for d in &spec.defines {
        fixed.push((d.name.clone(), d.values[0].clone()));
    }
    points
        .into_iter()
        .filter(|point| {
            let value = |name: &str| match name {
                "M" => m as i64,
                "N" => n as i64,
                "K" => k as i64,
                _ => macro_value(point, name) as i64,
            };
            spec.requires.iter().all(|r| {
                let l = eval_with_strides(&r.left, &value, lda as i64, ldb as i64);
                let rv = eval_with_strides(&r.right, &value, lda as i64, ldb as i64);
                match r.cmp {
                    "==" => l == rv,
                    "!=" => l != rv,
                    "<=" => l <= rv,
                    "<" => l < rv,
                    ">=" => l >= rv,
                    ">" => l > rv,
                    other => panic!("unknown comparison {other}"),
                }
            })
        })
        .map(|point| fixed.iter().cloned().chain(point).collect())
        .collect()
}
