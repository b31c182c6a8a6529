//! Soundness of axis info: random integer programs over `i32[16, 16]` tiles
//! are evaluated on concrete inputs that keep the parameters' promises, and
//! every fact the analysis claims (contiguity, divisibility, constancy, known
//! value) must hold of the computed elements. Wrong facts here would mean
//! wrong vectorized loads and stores on the GPU.
mod ir_support;

use ir_support::*;
use proptest::prelude::*;
use std::collections::HashMap;
use tritonc::analysis::axis_info::{analyze, AxisInfo};
use tritonc::ir::*;

const N: usize = 16;

#[derive(Clone, Debug)]
enum Instr {
    ScalarConst(i64),
    ScalarBin(usize, usize, usize),
    Splat(usize),
    RowRange(i64),
    ColRange(i64),
    TileConst(i64),
    TileBin(usize, usize, usize),
    Trans(usize),
    Cmp(usize, usize, usize),
    Select(usize, usize, usize),
    MaskAnd(usize, usize),
    PtrAdd(usize, usize),
    /// `t < splat(s) ? splat(x) : splat(y)`: tiles equal in runs (partial constancy).
    Blocks(usize, usize, usize, usize),
}

const BIN_OPS: [BinOp; 11] = [
    BinOp::Add,
    BinOp::Sub,
    BinOp::Mul,
    BinOp::Div,
    BinOp::Rem,
    BinOp::Shl,
    BinOp::Shr,
    BinOp::Min,
    BinOp::Max,
    BinOp::And,
    BinOp::Add,
];
const PREDS: [CmpPred; 6] = [
    CmpPred::Lt,
    CmpPred::Le,
    CmpPred::Gt,
    CmpPred::Ge,
    CmpPred::Eq,
    CmpPred::Ne,
];
const CONSTS: [i64; 10] = [0, 1, 2, 3, 4, 8, 16, -8, 5, 32];

fn instr() -> impl Strategy<Value = Instr> {
    let c = (0..CONSTS.len()).prop_map(|i| CONSTS[i]);
    prop_oneof![
        c.clone().prop_map(Instr::ScalarConst),
        (0..BIN_OPS.len(), any::<usize>(), any::<usize>())
            .prop_map(|(o, a, b)| Instr::ScalarBin(o, a, b)),
        any::<usize>().prop_map(Instr::Splat),
        (-4i64..20).prop_map(Instr::RowRange),
        (-4i64..20).prop_map(Instr::ColRange),
        c.prop_map(Instr::TileConst),
        (0..BIN_OPS.len(), any::<usize>(), any::<usize>())
            .prop_map(|(o, a, b)| Instr::TileBin(o, a, b)),
        (0..BIN_OPS.len(), any::<usize>(), any::<usize>())
            .prop_map(|(o, a, b)| Instr::TileBin(o, a, b)),
        any::<usize>().prop_map(Instr::Trans),
        (0..PREDS.len(), any::<usize>(), any::<usize>()).prop_map(|(p, a, b)| Instr::Cmp(p, a, b)),
        (any::<usize>(), any::<usize>(), any::<usize>())
            .prop_map(|(m, a, b)| Instr::Select(m, a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Instr::MaskAnd(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(p, t)| Instr::PtrAdd(p, t)),
        (
            any::<usize>(),
            any::<usize>(),
            any::<usize>(),
            any::<usize>()
        )
            .prop_map(|(t, s, x, y)| Instr::Blocks(t, s, x, y)),
    ]
}

/// A program and the pools of its values by kind.
struct Program {
    func: Function,
    tiles: Vec<ValueId>,
    masks: Vec<ValueId>,
    ptrs: Vec<ValueId>,
    scalars: Vec<ValueId>,
}

fn pick(pool: &[ValueId], i: usize) -> Option<ValueId> {
    (!pool.is_empty()).then(|| pool[i % pool.len()])
}

fn build(mult: [Option<u64>; 2], ptr_attrs: [ParamAttrs; 2], prog: &[Instr]) -> Program {
    let mut b = B::new("random");
    let mut scalars = vec![];
    for (i, m) in mult.iter().enumerate() {
        let attrs = ParamAttrs {
            multiple_of: *m,
            ..Default::default()
        };
        scalars.push(b.param_attrs(&format!("n{i}"), i32t(), attrs));
    }
    let ptr_params: Vec<ValueId> = [(DType::F32, 0), (DType::F16, 1)]
        .iter()
        .map(|&(d, i)| b.param_attrs(&format!("P{i}"), Type::ptr(d), ptr_attrs[i].clone()))
        .collect();
    scalars.push(b.pid(0));
    let row = b.range(0, N as i64);
    let row = b.reshape(row, &[1, N]);
    let row = b.broadcast(row, &[N, N]);
    let mut tiles = vec![row];
    let mut masks = vec![];
    let mut ptrs = vec![];
    for ins in prog {
        match *ins {
            Instr::ScalarConst(c) => scalars.push(b.int(c, i32t())),
            Instr::ScalarBin(o, x, y) => {
                let (x, y) = (pick(&scalars, x).unwrap(), pick(&scalars, y).unwrap());
                scalars.push(b.bin(BIN_OPS[o], x, y));
            }
            Instr::Splat(s) => {
                let s = pick(&scalars, s).unwrap();
                tiles.push(b.splat(s, &[N, N]));
            }
            Instr::RowRange(start) | Instr::ColRange(start) => {
                let r = b.range(start, start + N as i64);
                let shape: &[usize] = match ins {
                    Instr::RowRange(_) => &[1, N],
                    _ => &[N, 1],
                };
                let r = b.reshape(r, shape);
                tiles.push(b.broadcast(r, &[N, N]));
            }
            Instr::TileConst(c) => tiles.push(b.int(c, tile(DType::I32, &[N, N]))),
            Instr::TileBin(o, x, y) => {
                let (x, y) = (pick(&tiles, x).unwrap(), pick(&tiles, y).unwrap());
                tiles.push(b.bin(BIN_OPS[o], x, y));
            }
            Instr::Trans(t) => {
                let t = pick(&tiles, t).unwrap();
                tiles.push(b.op(OpKind::Trans { src: t }, tile(DType::I32, &[N, N])));
            }
            Instr::Cmp(p, x, y) => {
                let (x, y) = (pick(&tiles, x).unwrap(), pick(&tiles, y).unwrap());
                masks.push(b.cmp(PREDS[p], x, y));
            }
            Instr::Select(m, x, y) => {
                let Some(m) = pick(&masks, m) else { continue };
                let (x, y) = (pick(&tiles, x).unwrap(), pick(&tiles, y).unwrap());
                tiles.push(b.op(
                    OpKind::Select {
                        cond: m,
                        on_true: x,
                        on_false: y,
                    },
                    tile(DType::I32, &[N, N]),
                ));
            }
            Instr::MaskAnd(x, y) => {
                let (Some(x), Some(y)) = (pick(&masks, x), pick(&masks, y)) else {
                    continue;
                };
                masks.push(b.bin(BinOp::And, x, y));
            }
            Instr::Blocks(t, s, x, y) => {
                let t = pick(&tiles, t).unwrap();
                let [s, x, y] = [s, x, y].map(|i| pick(&scalars, i).unwrap());
                let [s, x, y] = [s, x, y].map(|v| b.splat(v, &[N, N]));
                let m = b.cmp(CmpPred::Lt, t, s);
                masks.push(m);
                tiles.push(b.op(
                    OpKind::Select {
                        cond: m,
                        on_true: x,
                        on_false: y,
                    },
                    tile(DType::I32, &[N, N]),
                ));
            }
            Instr::PtrAdd(p, t) => {
                let t = pick(&tiles, t).unwrap();
                let base = if p % 3 == 2 {
                    match pick(&ptrs, p / 3) {
                        Some(q) => q,
                        None => continue,
                    }
                } else {
                    let q = ptr_params[p % 2];
                    b.splat(q, &[N, N])
                };
                ptrs.push(b.addptr(base, t));
            }
        }
    }
    Program {
        func: b.finish(),
        tiles,
        masks,
        ptrs,
        scalars,
    }
}

/// Concrete values: every element, row-major (scalars have one).
type Env = HashMap<ValueId, Vec<i64>>;

/// Evaluates the straight-line body. Values that would overflow i32 math (or
/// divide by zero) are left out, with everything computed from them.
fn eval(f: &Function, params: &[i64], pid: i64) -> Env {
    let mut env: Env = HashMap::new();
    for (p, &v) in f.params.iter().zip(params) {
        env.insert(p.value, vec![v]);
    }
    for op in &f.body.ops {
        if walk::operands(&op.kind)
            .iter()
            .any(|v| !env.contains_key(v))
        {
            continue;
        }
        let Some(out) = eval_op(f, op, &env, pid) else {
            continue;
        };
        if out.iter().all(|v| v.abs() < 1 << 30) {
            env.insert(op.results[0], out);
        }
    }
    env
}

fn eval_op(f: &Function, op: &Op, env: &Env, pid: i64) -> Option<Vec<i64>> {
    let ty = f.ty(op.results[0]).clone();
    let n = ty.num_elements();
    let get = |v: &ValueId| env[v].clone();
    let out: Vec<i64> = match &op.kind {
        OpKind::ProgramId { .. } => vec![pid],
        OpKind::Constant {
            value: Const::Int(c),
        } => vec![*c; n],
        OpKind::MakeRange { start, end } => (*start..*end).collect(),
        OpKind::Splat { src } => vec![get(src)[0]; n],
        OpKind::Reshape { src } => get(src),
        OpKind::Broadcast { src } => {
            let s = get(src);
            let from = &f.ty(*src).shape;
            (0..n)
                .map(|i| {
                    let (r, c) = (i / N, i % N);
                    let (r, c) = (r % from[0], c % from[1]);
                    s[r * from[1] + c]
                })
                .collect()
        }
        OpKind::Trans { src } => {
            let s = get(src);
            (0..n).map(|i| s[(i % N) * N + i / N]).collect()
        }
        OpKind::Binary { op: bop, lhs, rhs } => {
            let (l, r) = (get(lhs), get(rhs));
            let mut out = Vec::with_capacity(n);
            for (&x, &y) in l.iter().zip(&r) {
                out.push(match bop {
                    BinOp::Add => x + y,
                    BinOp::Sub => x - y,
                    BinOp::Mul => x * y,
                    BinOp::Div | BinOp::Rem if y == 0 => return None,
                    BinOp::Div => x / y,
                    BinOp::Rem => x % y,
                    BinOp::Shl | BinOp::Shr if !(0..31).contains(&y) => return None,
                    BinOp::Shl => x << y,
                    BinOp::Shr => x >> y,
                    BinOp::Min => x.min(y),
                    BinOp::Max => x.max(y),
                    BinOp::And => x & y,
                    BinOp::Or => x | y,
                    BinOp::Xor => x ^ y,
                });
            }
            out
        }
        OpKind::Cmp { pred, lhs, rhs } => {
            let (l, r) = (get(lhs), get(rhs));
            l.iter()
                .zip(&r)
                .map(|(&x, &y)| {
                    (match pred {
                        CmpPred::Lt => x < y,
                        CmpPred::Le => x <= y,
                        CmpPred::Gt => x > y,
                        CmpPred::Ge => x >= y,
                        CmpPred::Eq => x == y,
                        CmpPred::Ne => x != y,
                    }) as i64
                })
                .collect()
        }
        OpKind::Select {
            cond,
            on_true,
            on_false,
        } => {
            let (c, t, e) = (get(cond), get(on_true), get(on_false));
            (0..n)
                .map(|i| if c[i] != 0 { t[i] } else { e[i] })
                .collect()
        }
        OpKind::AddPtr { ptr, offset } => {
            let elem = ty.scalar.dtype().size_bytes() as i64;
            let (p, o) = (get(ptr), get(offset));
            p.iter().zip(&o).map(|(&a, &x)| a + x * elem).collect()
        }
        other => panic!("unexpected op {other:?}"),
    };
    Some(out)
}

/// Checks the facts of a `[N, N]` tile (or scalar) against its elements.
fn check(name: &str, info: &AxisInfo, vals: &[i64], check_div: bool) -> Result<(), String> {
    let rank = if vals.len() == 1 { 1 } else { 2 };
    let dims = if rank == 1 { vec![1] } else { vec![N, N] };
    let at = |r: usize, c: usize| vals[r * dims.last().unwrap() + c];
    if let Some(v) = info.value {
        if vals.iter().any(|&x| x != v) {
            return Err(format!("{name}: claims value {v}, has {vals:?}"));
        }
    }
    for a in 0..rank {
        let (c, d, k) = (
            info.contiguity[a] as usize,
            info.divisibility[a] as i64,
            info.constancy[a] as usize,
        );
        let len = dims[a];
        for other in 0..(vals.len() / len) {
            let elem = |i: usize| {
                if rank == 1 {
                    vals[0]
                } else if a == 0 {
                    at(i, other)
                } else {
                    at(other, i)
                }
            };
            for i in 0..len {
                if i % c == 0 {
                    if check_div && elem(i) % d != 0 {
                        return Err(format!(
                            "{name}: axis {a} chunk start {i} (line {other}) = {} not a multiple of {d}",
                            elem(i)
                        ));
                    }
                } else if elem(i) != elem(i - 1) + 1 {
                    return Err(format!(
                        "{name}: axis {a} contiguity {c} broken at {i} (line {other})"
                    ));
                }
                if i % k != 0 && elem(i) != elem(i - 1) {
                    return Err(format!(
                        "{name}: axis {a} constancy {k} broken at {i} (line {other})"
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Pointer facts are in bytes for divisibility, elements for contiguity.
fn check_ptr(name: &str, info: &AxisInfo, addrs: &[i64], elem: i64) -> Result<(), String> {
    let mut as_elems = info.clone();
    as_elems.divisibility = vec![1; info.axes()];
    let scaled: Vec<i64> = addrs.iter().map(|a| a / elem).collect();
    if addrs.iter().any(|a| a % elem != 0) {
        return Err(format!(
            "{name}: address not a multiple of the element size"
        ));
    }
    check(name, &as_elems, &scaled, false)?;
    // Divisibility holds at chunk starts only: check it there.
    for a in 0..info.axes() {
        let c = info.contiguity[a] as usize;
        for (i, &addr) in addrs.iter().enumerate() {
            let idx = if a == 0 { i / N } else { i % N };
            if idx % c == 0 && addr % info.divisibility[a] as i64 != 0 {
                return Err(format!(
                    "{name}: address {addr} at {i} not a multiple of {} bytes",
                    info.divisibility[a]
                ));
            }
        }
    }
    Ok(())
}

fn mult_strategy() -> impl Strategy<Value = Option<u64>> {
    prop_oneof![
        Just(None),
        Just(Some(1)),
        Just(Some(4)),
        Just(Some(16)),
        Just(Some(6))
    ]
}

fn ptr_attr_strategy() -> impl Strategy<Value = ParamAttrs> {
    prop_oneof![
        Just(ParamAttrs::default()),
        Just(ParamAttrs {
            aligned: Some(4),
            ..Default::default()
        }),
        Just(ParamAttrs {
            multiple_of: Some(2),
            ..Default::default()
        }),
    ]
}

/// An integer value meeting a `__multipleof`; `k` picks the multiple.
fn int_value(mult: Option<u64>, k: i64) -> i64 {
    match mult {
        Some(m) => m as i64 * k,
        None => k * 7 + 3,
    }
}

/// A pointer meeting its parameter's promise, and no more aligned than it must be.
fn ptr_value(attrs: &ParamAttrs, elem: i64, k: i64) -> i64 {
    let align = match (attrs.multiple_of, attrs.aligned) {
        (Some(m), _) => m as i64 * elem,
        (None, Some(a)) => a as i64,
        (None, None) => 16,
    };
    (1 << 20) + align * (2 * k + 1)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn facts_hold_on_concrete_values(
        mult in [mult_strategy(), mult_strategy()],
        ptr_attrs in [ptr_attr_strategy(), ptr_attr_strategy()],
        prog in proptest::collection::vec(instr(), 1..30),
        inputs in proptest::collection::vec((-4i64..8, -4i64..8, 0i64..6, 0i64..5, 0i64..5), 4),
    ) {
        let p = build(mult, ptr_attrs.clone(), &prog);
        verifier::verify_function(&p.func).map_err(|e| TestCaseError::fail(e.message))?;
        let info = analyze(&p.func);
        let text = printer::print_function(&p.func);
        for (a, b, pid, k0, k1) in inputs {
            let params = [
                int_value(mult[0], a),
                int_value(mult[1], b),
                ptr_value(&ptr_attrs[0], 4, k0),
                ptr_value(&ptr_attrs[1], 2, k1),
            ];
            let env = eval(&p.func, &params, pid);
            for &v in p.tiles.iter().chain(&p.scalars) {
                let Some(vals) = env.get(&v) else { continue };
                check(&format!("%{}", v.0), info.get(v).unwrap(), vals, true)
                    .map_err(|e| TestCaseError::fail(format!("{e}\ninputs {params:?} pid {pid}\n{text}")))?;
            }
            for &m in &p.masks {
                let mut only_k = info.get(m).unwrap().clone();
                only_k.contiguity = vec![1; 2];
                let Some(vals) = env.get(&m) else { continue };
                check(&format!("%{}", m.0), &only_k, vals, false)
                    .map_err(|e| TestCaseError::fail(format!("{e}\ninputs {params:?}\n{text}")))?;
            }
            for &q in &p.ptrs {
                let elem = p.func.ty(q).scalar.dtype().size_bytes() as i64;
                let Some(addrs) = env.get(&q) else { continue };
                check_ptr(&format!("%{}", q.0), info.get(q).unwrap(), addrs, elem)
                    .map_err(|e| TestCaseError::fail(format!("{e}\ninputs {params:?}\n{text}")))?;
            }
        }
    }
}
