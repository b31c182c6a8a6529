//! Helpers for the sema tests: front end + sema on text or on a kernel of
//! `tests/kernels`, a flat walk over ops, and a structural check of the IR.
#![allow(dead_code)]

#[path = "../source_support/mod.rs"]
mod source_support;
pub use source_support::*;

use tritonc::diagnostics::Diagnostic;
use tritonc::front::ast::TranslationUnit;
use tritonc::ir::walk::{operands, walk_ops};
use tritonc::ir::*;
use tritonc::sema;
use tritonc::span::{FileId, SourceMap};

/// Parses and lowers `text` (file `test.tc`).
pub fn lower_text(text: &str, defines: &[(&str, &str)]) -> (SourceMap, Result<Module, Diagnostic>) {
    lower_parsed(parse_text("test.tc", text, &options(defines)))
}

/// Lowers what `parse_text` / `parse_kernel_file` parsed; a parse error panics.
fn lower_parsed(
    (sources, _, parsed): (SourceMap, FileId, Result<TranslationUnit, Diagnostic>),
) -> (SourceMap, Result<Module, Diagnostic>) {
    let tu = parsed.unwrap_or_else(|d| panic!("parse error:\n{}", d.render(&sources)));
    let result = sema::lower(&tu);
    (sources, result)
}

/// Lowers `text`, panicking with the rendered diagnostic on error; checks the IR.
pub fn lower_ok(text: &str, defines: &[(&str, &str)]) -> Function {
    function_ok(lower_text(text, defines))
}

/// The one function of a lowered module, after `check_function`.
fn function_ok((sources, result): (SourceMap, Result<Module, Diagnostic>)) -> Function {
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

/// Lowers `tests/kernels/<name>` with these macros; checks the IR.
pub fn lower_kernel(name: &str, defines: &[(&str, &str)]) -> Function {
    function_ok(lower_parsed(parse_kernel_file(name, defines)))
}

/// Every op, depth first (ops of nested regions right after their parent).
pub fn all_ops(f: &Function) -> Vec<&Op> {
    walk_ops(f).into_iter().map(|v| v.op).collect()
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
                ..
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
