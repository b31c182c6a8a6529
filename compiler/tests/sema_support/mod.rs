//! Helpers for the sema tests: front end + sema on text or on a kernel of
//! `tests/kernels`, a flat walk over ops, and a structural check of the IR.
#![allow(dead_code)]

use tritonc::diagnostics::Diagnostic;
use tritonc::front::{parse_file, FrontOptions};
use tritonc::ir::*;
use tritonc::sema;
use tritonc::span::SourceMap;

pub fn options(defines: &[(&str, &str)]) -> FrontOptions {
    FrontOptions {
        defines: defines
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
        include_dirs: Vec::new(),
    }
}

/// Parses and lowers `text` (file `test.tc`).
pub fn lower_text(text: &str, defines: &[(&str, &str)]) -> (SourceMap, Result<Module, Diagnostic>) {
    let mut sources = SourceMap::new();
    let file = sources.add("test.tc", text);
    let tu = match parse_file(&mut sources, file, &options(defines)) {
        Ok(tu) => tu,
        Err(d) => panic!("parse error:\n{}", d.render(&sources)),
    };
    let result = sema::lower(&tu);
    (sources, result)
}

/// Lowers `text`, panicking with the rendered diagnostic on error; checks the IR.
pub fn lower_ok(text: &str, defines: &[(&str, &str)]) -> Function {
    let (sources, result) = lower_text(text, defines);
    let module = result.unwrap_or_else(|d| panic!("unexpected error:\n{}", d.render(&sources)));
    let f = module.functions.into_iter().next().expect("one function");
    check_function(&f);
    f
}

/// Lowers `text` expecting an error; returns (message, file:line:col, rendered).
pub fn lower_err(text: &str, defines: &[(&str, &str)]) -> (String, String, String) {
    let (sources, result) = lower_text(text, defines);
    match result {
        Ok(m) => panic!("expected an error, got {:#?}", m.functions[0].body),
        Err(d) => (d.message.clone(), d.location(&sources), d.render(&sources)),
    }
}

pub fn kernel_text(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/kernels")
        .join(name);
    std::fs::read_to_string(&path).expect("kernel file")
}

pub fn lower_kernel(name: &str, defines: &[(&str, &str)]) -> Function {
    lower_ok(&kernel_text(name), defines)
}

/// Every op, depth first (ops of nested regions right after their parent).
pub fn all_ops(f: &Function) -> Vec<&Op> {
    let mut out = Vec::new();
    walk(&f.body, &mut out);
    out
}

fn walk<'a>(r: &'a Region, out: &mut Vec<&'a Op>) {
    for op in &r.ops {
        out.push(op);
        match &op.kind {
            OpKind::If {
                then_region,
                else_region,
                ..
            } => {
                walk(then_region, out);
                walk(else_region, out);
            }
            OpKind::While {
                cond_region,
                body_region,
                ..
            } => {
                walk(cond_region, out);
                walk(body_region, out);
            }
            _ => {}
        }
    }
}

/// Short name of an op kind ("Load", "Dot", ...).
pub fn kind_name(k: &OpKind) -> String {
    let s = format!("{k:?}");
    s.split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap()
        .to_string()
}

pub fn count(f: &Function, name: &str) -> usize {
    all_ops(f)
        .iter()
        .filter(|o| kind_name(&o.kind) == name)
        .count()
}

pub fn ops_named<'a>(f: &'a Function, name: &str) -> Vec<&'a Op> {
    all_ops(f)
        .into_iter()
        .filter(|o| kind_name(&o.kind) == name)
        .collect()
}

/// The IR verifier, plus a light check of our own: values are defined before
/// use (scoped by regions) and element-wise operands agree.
pub fn check_function(f: &Function) {
    if let Err(e) = tritonc::ir::verifier::verify_function(f) {
        panic!(
            "verifier: {}\n{}",
            e.message,
            tritonc::ir::printer::print_function(f)
        );
    }
    let mut defined: Vec<ValueId> = f.params.iter().map(|p| p.value).collect();
    check_region(f, &f.body, &mut defined);
    assert!(f.body.yields.is_empty());
}

fn check_region(f: &Function, r: &Region, defined: &mut Vec<ValueId>) {
    let mark = defined.len();
    defined.extend(r.args.iter().copied());
    for op in &r.ops {
        for v in operands(&op.kind) {
            assert!(
                defined.contains(&v),
                "{v:?} used before definition in {:?}",
                op.kind
            );
        }
        let same = |a: ValueId, b: ValueId| {
            assert_eq!(f.ty(a), f.ty(b), "operand types differ in {:?}", op.kind)
        };
        match &op.kind {
            OpKind::Binary { lhs, rhs, .. } | OpKind::Cmp { lhs, rhs, .. } => same(*lhs, *rhs),
            OpKind::Select {
                on_true, on_false, ..
            } => same(*on_true, *on_false),
            OpKind::Dot { acc, .. } => same(*acc, op.results[0]),
            OpKind::If {
                then_region,
                else_region,
                ..
            } => {
                for reg in [then_region, else_region] {
                    check_region(f, reg, defined);
                    let tys: Vec<_> = reg.yields.iter().map(|v| f.ty(*v)).collect();
                    let res: Vec<_> = op.results.iter().map(|v| f.ty(*v)).collect();
                    assert_eq!(tys, res, "if yields");
                }
            }
            OpKind::While {
                inits,
                cond_region,
                body_region,
            } => {
                check_region(f, cond_region, defined);
                check_region(f, body_region, defined);
                let t = |vs: &[ValueId]| vs.iter().map(|v| f.ty(*v).clone()).collect::<Vec<_>>();
                assert_eq!(t(inits), t(&body_region.yields), "while yields");
                assert_eq!(t(inits), t(&op.results), "while results");
                assert_eq!(cond_region.yields.len(), 1);
            }
            _ => {}
        }
        defined.extend(op.results.iter().copied());
    }
    for v in &r.yields {
        assert!(defined.contains(v), "yield of undefined {v:?}");
    }
    defined.truncate(mark);
}

fn operands(k: &OpKind) -> Vec<ValueId> {
    use OpKind::*;
    match k {
        Splat { src }
        | Broadcast { src }
        | Reshape { src }
        | Unary { src, .. }
        | Cast { src }
        | Trans { src }
        | Reduce { src, .. } => vec![*src],
        Binary { lhs, rhs, .. } | Cmp { lhs, rhs, .. } => vec![*lhs, *rhs],
        AddPtr { ptr, offset } => vec![*ptr, *offset],
        Select {
            cond,
            on_true,
            on_false,
        } => vec![*cond, *on_true, *on_false],
        Load { ptr, mask, other } => [Some(*ptr), *mask, *other].into_iter().flatten().collect(),
        Store { ptr, value, mask } => [Some(*ptr), Some(*value), *mask]
            .into_iter()
            .flatten()
            .collect(),
        Dot { a, b, acc } => vec![*a, *b, *acc],
        AtomicRmw {
            ptr, value, mask, ..
        } => [Some(*ptr), Some(*value), *mask]
            .into_iter()
            .flatten()
            .collect(),
        AtomicCas { ptr, cmp, value } => vec![*ptr, *cmp, *value],
        If { cond, .. } => vec![*cond],
        While { inits, .. } => inits.clone(),
        _ => vec![],
    }
}
