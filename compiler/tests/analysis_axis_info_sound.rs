//! Soundness of axis info: random integer programs over `i32[16, 16]` tiles
//! are evaluated on concrete inputs that keep the parameters' promises, and
//! every fact the analysis claims (contiguity, divisibility, constancy, known
//! value) must hold of the computed elements. Wrong facts here would mean
//! wrong vectorized loads and stores on the GPU.
mod ir_support;

use ir_support::*;
use proptest::prelude::*;
use std::collections::HashMap;
use tritonc::analysis::axis_info::{analyze, AxisInfo, AxisInfoMap};
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

/// Values built so far, by kind: what later instructions pick their operands from.
#[derive(Clone, Default)]
struct Pools {
    scalars: Vec<ValueId>,
    tiles: Vec<ValueId>,
    masks: Vec<ValueId>,
    ptrs: Vec<ValueId>,
}

fn pick(pool: &[ValueId], i: usize) -> Option<ValueId> {
    (!pool.is_empty()).then(|| pool[i % pool.len()])
}

/// Parameters `n0`, `n1` (ints with `mult`), `P0: f32*`, `P1: f16*`, then
/// `pid` and a row range in the pools.
fn prologue(
    b: &mut B,
    mult: [Option<u64>; 2],
    ptr_attrs: &[ParamAttrs; 2],
) -> (Pools, Vec<ValueId>) {
    let mut pools = Pools::default();
    for (i, m) in mult.iter().enumerate() {
        let attrs = ParamAttrs {
            multiple_of: *m,
            ..Default::default()
        };
        pools
            .scalars
            .push(b.param_attrs(&format!("n{i}"), i32t(), attrs));
    }
    let ptr_params: Vec<ValueId> = [(DType::F32, 0), (DType::F16, 1)]
        .iter()
        .map(|&(d, i)| b.param_attrs(&format!("P{i}"), Type::ptr(d), ptr_attrs[i].clone()))
        .collect();
    pools.scalars.push(b.pid(0));
    let row = b.range(0, N as i64);
    let row = b.reshape(row, &[1, N]);
    let row = b.broadcast(row, &[N, N]);
    pools.tiles.push(row);
    (pools, ptr_params)
}

fn apply(b: &mut B, pools: &mut Pools, ptr_params: &[ValueId], ins: &Instr) {
    let Pools {
        scalars,
        tiles,
        masks,
        ptrs,
    } = pools;
    match *ins {
        Instr::ScalarConst(c) => scalars.push(b.int(c, i32t())),
        Instr::ScalarBin(o, x, y) => {
            let (x, y) = (pick(scalars, x).unwrap(), pick(scalars, y).unwrap());
            scalars.push(b.bin(BIN_OPS[o], x, y));
        }
        Instr::Splat(s) => {
            let s = pick(scalars, s).unwrap();
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
            let (x, y) = (pick(tiles, x).unwrap(), pick(tiles, y).unwrap());
            tiles.push(b.bin(BIN_OPS[o], x, y));
        }
        Instr::Trans(t) => {
            let t = pick(tiles, t).unwrap();
            tiles.push(b.op(OpKind::Trans { src: t }, tile(DType::I32, &[N, N])));
        }
        Instr::Cmp(p, x, y) => {
            let (x, y) = (pick(tiles, x).unwrap(), pick(tiles, y).unwrap());
            masks.push(b.cmp(PREDS[p], x, y));
        }
        Instr::Select(m, x, y) => {
            let Some(m) = pick(masks, m) else { return };
            let (x, y) = (pick(tiles, x).unwrap(), pick(tiles, y).unwrap());
            tiles.push(select(b, m, x, y));
        }
        Instr::MaskAnd(x, y) => {
            let (Some(x), Some(y)) = (pick(masks, x), pick(masks, y)) else {
                return;
            };
            masks.push(b.bin(BinOp::And, x, y));
        }
        Instr::Blocks(t, s, x, y) => {
            let t = pick(tiles, t).unwrap();
            let [s, x, y] = [s, x, y].map(|i| pick(scalars, i).unwrap());
            let [s, x, y] = [s, x, y].map(|v| b.splat(v, &[N, N]));
            let m = b.cmp(CmpPred::Lt, t, s);
            masks.push(m);
            tiles.push(select(b, m, x, y));
        }
        Instr::PtrAdd(p, t) => {
            let t = pick(tiles, t).unwrap();
            let base = if p % 3 == 2 {
                match pick(ptrs, p / 3) {
                    Some(q) => q,
                    None => return,
                }
            } else {
                let q = ptr_params[p % 2];
                b.splat(q, &[N, N])
            };
            ptrs.push(b.addptr(base, t));
        }
    }
}

fn select(b: &mut B, cond: ValueId, on_true: ValueId, on_false: ValueId) -> ValueId {
    let ty = b.ty(on_true);
    b.op(
        OpKind::Select {
            cond,
            on_true,
            on_false,
        },
        ty,
    )
}

fn build(mult: [Option<u64>; 2], ptr_attrs: &[ParamAttrs; 2], prog: &[Instr]) -> Function {
    let mut b = B::new("random");
    let (mut pools, ptr_params) = prologue(&mut b, mult, ptr_attrs);
    for ins in prog {
        apply(&mut b, &mut pools, &ptr_params, ins);
    }
    b.finish()
}

/// `prefix`, then a loop running `trips` times that carries a counter, two
/// int tiles and an `f32*` tile through a random `body`.
fn build_loop(
    mult: [Option<u64>; 2],
    ptr_attrs: &[ParamAttrs; 2],
    prefix: &[Instr],
    body: &[Instr],
    picks: [usize; 5],
    trips: i64,
) -> Function {
    let mut b = B::new("random_loop");
    let (mut pools, ptr_params) = prologue(&mut b, mult, ptr_attrs);
    for ins in prefix {
        apply(&mut b, &mut pools, &ptr_params, ins);
    }
    let f32_ptr = |b: &B, v: &ValueId| b.ty(*v).scalar == ScalarType::Ptr(DType::F32);
    let p_init = match pools.ptrs.iter().find(|v| f32_ptr(&b, v)) {
        Some(&p) => p,
        None => {
            let t = b.splat(ptr_params[0], &[N, N]);
            b.addptr(t, pools.tiles[0])
        }
    };
    let zero = b.int(0, i32t());
    let limit = b.int(trips, i32t());
    let one = b.int(1, i32t());
    let inits = vec![
        zero,
        pick(&pools.tiles, picks[0]).unwrap(),
        pick(&pools.tiles, picks[1]).unwrap(),
        p_init,
    ];
    let types: Vec<Type> = inits.iter().map(|v| b.ty(*v)).collect();
    let a = b.b.open_region(types.clone());
    let c = b.cmp(CmpPred::Lt, a[0], limit);
    let cond = b.b.close_region(vec![c]);
    let a = b.b.open_region(types.clone());
    let mut inner = pools.clone();
    inner.tiles.extend([a[1], a[2]]);
    inner.ptrs.push(a[3]);
    for ins in body {
        apply(&mut b, &mut inner, &ptr_params, ins);
    }
    let next = b.bin(BinOp::Add, a[0], one);
    let body_ptrs: Vec<ValueId> = inner
        .ptrs
        .iter()
        .copied()
        .filter(|v| f32_ptr(&b, v))
        .collect();
    let yields = vec![
        next,
        pick(&inner.tiles, picks[2]).unwrap(),
        pick(&inner.tiles, picks[3]).unwrap(),
        pick(&body_ptrs, picks[4]).unwrap(),
    ];
    let body = b.b.close_region(yields);
    let s = b.span();
    let results = b.b.push(
        OpKind::While {
            inits,
            cond_region: cond,
            body_region: body,
            pipeline: None,
            prefetch: None,
        },
        types,
        s,
    );
    // Use the results once more after the loop.
    let sum = b.bin(BinOp::Add, results[1], results[2]);
    b.addptr(results[3], sum);
    b.finish()
}

/// Concrete values: every element, row-major (scalars have one).
type Env = HashMap<ValueId, Vec<i64>>;

/// Evaluates `ops` (straight-line, or one `While` with straight-line
/// regions), calling `seen` on the environment after every loop round and at
/// the end. Values that would overflow i32 math (or divide by zero) are left
/// out, with everything computed from them.
fn eval_ops(f: &Function, ops: &[Op], env: &mut Env, pid: i64, seen: &mut dyn FnMut(&Env)) {
    for op in ops {
        if walk::operands(&op.kind)
            .iter()
            .any(|v| !env.contains_key(v))
        {
            // A loop with a lost init still runs: its values stay unknown.
            continue;
        }
        if let OpKind::While {
            inits,
            cond_region,
            body_region,
            ..
        } = &op.kind
        {
            let mut carried: Vec<Vec<i64>> = inits.iter().map(|v| env[v].clone()).collect();
            loop {
                for (arg, val) in cond_region.args.iter().zip(&carried) {
                    env.insert(*arg, val.clone());
                }
                eval_ops(f, &cond_region.ops, env, pid, seen);
                if env.get(&cond_region.yields[0]) != Some(&vec![1]) {
                    break;
                }
                for (arg, val) in body_region.args.iter().zip(&carried) {
                    env.insert(*arg, val.clone());
                }
                eval_ops(f, &body_region.ops, env, pid, seen);
                seen(env);
                let next: Option<Vec<Vec<i64>>> = body_region
                    .yields
                    .iter()
                    .map(|y| env.get(y).cloned())
                    .collect();
                let Some(next) = next else { return };
                // Forget this round's body values before the next one.
                for o in walk::walk_ops(f) {
                    if o.depth > 0 {
                        for r in &o.op.results {
                            env.remove(r);
                        }
                    }
                }
                carried = next;
            }
            for (r, val) in op.results.iter().zip(carried) {
                env.insert(*r, val);
            }
            continue;
        }
        let Some(out) = eval_op(f, op, env, pid) else {
            continue;
        };
        if out.iter().all(|v| v.abs() < 1 << 30) {
            env.insert(op.results[0], out);
        }
    }
}

fn eval(f: &Function, params: &[i64], pid: i64, seen: &mut dyn FnMut(&Env)) {
    let mut env: Env = HashMap::new();
    for (p, &v) in f.params.iter().zip(params) {
        env.insert(p.value, vec![v]);
    }
    eval_ops(f, &f.body.ops, &mut env, pid, seen);
    seen(&env);
}

/// Every computed value against its facts, by type.
fn check_env(f: &Function, info: &AxisInfoMap, env: &Env) -> Result<(), String> {
    let mut ids: Vec<&ValueId> = env.keys().collect();
    ids.sort();
    for &v in ids {
        let vals = &env[&v];
        let facts = info.get(v).ok_or(format!("%{} has no facts", v.0))?;
        let name = format!("%{}", v.0);
        let shape = &f.ty(v).shape;
        match f.ty(v).scalar {
            ScalarType::Ptr(d) => check_ptr(&name, facts, vals, shape, d.size_bytes() as i64)?,
            ScalarType::Num(DType::I1) => {
                let mut only_k = facts.clone();
                only_k.contiguity = vec![1; facts.axes()];
                check(&name, &only_k, vals, shape, false)?;
            }
            ScalarType::Num(_) => check(&name, facts, vals, shape, true)?,
        }
    }
    Ok(())
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

/// Checks facts against the elements of a tile of `shape` (row-major;
/// scalars have the empty shape and one element).
fn check(
    name: &str,
    info: &AxisInfo,
    vals: &[i64],
    shape: &[usize],
    check_div: bool,
) -> Result<(), String> {
    let dims: Vec<usize> = if shape.is_empty() {
        vec![1]
    } else {
        shape.to_vec()
    };
    if let Some(v) = info.value {
        if vals.iter().any(|&x| x != v) {
            return Err(format!("{name}: claims value {v}, has {vals:?}"));
        }
    }
    // Row-major strides.
    let strides: Vec<usize> = (0..dims.len())
        .map(|a| dims[a + 1..].iter().product())
        .collect();
    for a in 0..dims.len() {
        let (c, d, k) = (
            info.contiguity[a] as usize,
            info.divisibility[a] as i64,
            info.constancy[a] as usize,
        );
        for flat in 0..vals.len() {
            let i = (flat / strides[a]) % dims[a];
            let here = vals[flat];
            if i % c == 0 {
                if check_div && here % d != 0 {
                    return Err(format!(
                        "{name}: axis {a} chunk start at {flat} = {here} not a multiple of {d}"
                    ));
                }
            } else if here != vals[flat - strides[a]] + 1 {
                return Err(format!("{name}: axis {a} contiguity {c} broken at {flat}"));
            }
            if i % k != 0 && here != vals[flat - strides[a]] {
                return Err(format!("{name}: axis {a} constancy {k} broken at {flat}"));
            }
        }
    }
    Ok(())
}

/// Pointer facts are in bytes for divisibility, elements for contiguity.
fn check_ptr(
    name: &str,
    info: &AxisInfo,
    addrs: &[i64],
    shape: &[usize],
    elem: i64,
) -> Result<(), String> {
    let mut as_elems = info.clone();
    as_elems.divisibility = vec![1; info.axes()];
    let scaled: Vec<i64> = addrs.iter().map(|a| a / elem).collect();
    if addrs.iter().any(|a| a % elem != 0) {
        return Err(format!(
            "{name}: address not a multiple of the element size"
        ));
    }
    check(name, &as_elems, &scaled, shape, false)?;
    // Divisibility holds at chunk starts only: check it there.
    let dims: Vec<usize> = if shape.is_empty() {
        vec![1]
    } else {
        shape.to_vec()
    };
    for a in 0..info.axes() {
        let stride: usize = dims[a + 1..].iter().product();
        let c = info.contiguity[a] as usize;
        for (flat, &addr) in addrs.iter().enumerate() {
            let idx = (flat / stride) % dims[a];
            if idx % c == 0 && addr % info.divisibility[a] as i64 != 0 {
                return Err(format!(
                    "{name}: address {addr} at {flat} not a multiple of {} bytes",
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

/// Concrete inputs keeping the parameters' promises.
fn inputs(
    mult: [Option<u64>; 2],
    ptr_attrs: &[ParamAttrs; 2],
    (a, b, _, k0, k1): (i64, i64, i64, i64, i64),
) -> [i64; 4] {
    [
        int_value(mult[0], a),
        int_value(mult[1], b),
        ptr_value(&ptr_attrs[0], 4, k0),
        ptr_value(&ptr_attrs[1], 2, k1),
    ]
}

fn run_checks(
    f: &Function,
    mult: [Option<u64>; 2],
    ptr_attrs: &[ParamAttrs; 2],
    samples: &[(i64, i64, i64, i64, i64)],
) -> Result<(), TestCaseError> {
    verifier::verify_function(f).map_err(|e| TestCaseError::fail(e.message))?;
    let info = analyze(f);
    for &sample in samples {
        let params = inputs(mult, ptr_attrs, sample);
        let pid = sample.2;
        let mut failure = None;
        eval(f, &params, pid, &mut |env| {
            if failure.is_none() {
                failure = check_env(f, &info, env).err();
            }
        });
        if let Some(e) = failure {
            return Err(TestCaseError::fail(format!(
                "{e}\ninputs {params:?} pid {pid}\n{}\n{}",
                printer::print_function(f),
                info.dump(f)
            )));
        }
    }
    Ok(())
}

fn samples() -> impl Strategy<Value = Vec<(i64, i64, i64, i64, i64)>> {
    proptest::collection::vec((-4i64..8, -4i64..8, 0i64..6, 0i64..5, 0i64..5), 4)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn facts_hold_on_concrete_values(
        mult in [mult_strategy(), mult_strategy()],
        ptr_attrs in [ptr_attr_strategy(), ptr_attr_strategy()],
        prog in proptest::collection::vec(instr(), 1..30),
        samples in samples(),
    ) {
        let f = build(mult, &ptr_attrs, &prog);
        run_checks(&f, mult, &ptr_attrs, &samples)?;
    }

    #[test]
    fn loop_facts_hold_every_round(
        mult in [mult_strategy(), mult_strategy()],
        ptr_attrs in [ptr_attr_strategy(), ptr_attr_strategy()],
        prefix in proptest::collection::vec(instr(), 0..12),
        body in proptest::collection::vec(instr(), 1..12),
        picks in any::<[usize; 5]>(),
        trips in 0i64..4,
        samples in samples(),
    ) {
        let f = build_loop(mult, &ptr_attrs, &prefix, &body, picks, trips);
        run_checks(&f, mult, &ptr_attrs, &samples)?;
    }
}
