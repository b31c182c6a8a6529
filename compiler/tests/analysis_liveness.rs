//! Live intervals over op numbers, with uses inside loops extended to the loop's end.
mod ir_support;

use ir_support::*;
use tritonc::analysis::liveness::{LiveInterval, Liveness, OpPosition};
use tritonc::ir::*;

fn iv(def: usize, last_use: usize) -> Option<LiveInterval> {
    Some(LiveInterval { def, last_use })
}

#[test]
fn sum_loop_intervals() {
    let f = sum_loop_kernel();
    verifier::verify_function(&f).unwrap();
    let l = Liveness::compute(&f);
    // 0 %i, 1 %acc, 2 range, 3 splat X, 4 px, 5 while (cond: 6; body: 7..=14),
    // 15 splat Y, 16 addptr, 17 store.
    assert_eq!(l.ops.len(), 18);
    assert_eq!(l.ops[5], OpPosition { start: 5, end: 14 });
    assert_eq!(l.ops[6], OpPosition { start: 6, end: 6 });
    let v = |i: u32| ValueId(i);
    let (n, range, px) = (v(2), v(5), v(7));
    // px is read in the body: live through the whole loop.
    assert_eq!(l.interval(px), iv(4, 14));
    // n is read by the condition each round.
    assert_eq!(l.interval(n), iv(0, 14));
    assert_eq!(l.interval(range), iv(2, 16));
    // Initial values die at the loop op.
    assert_eq!(l.interval(v(3)), iv(0, 5));
    // Carried body args live from the loop op to their last use in the body.
    let w = &f.body.ops[5];
    let OpKind::While {
        cond_region,
        body_region,
        ..
    } = &w.kind
    else {
        panic!("op 5 is the loop")
    };
    assert_eq!(l.interval(cond_region.args[0]), iv(5, 6));
    assert_eq!(l.interval(cond_region.yields[0]), iv(6, 6));
    assert_eq!(l.interval(body_region.args[0]), iv(5, 14));
    // The load is consumed right away by the add; the add is yielded at the end.
    let load = body_region.ops[4].results[0];
    let sum = body_region.ops[5].results[0];
    assert_eq!(l.interval(load), iv(11, 12));
    assert_eq!(l.interval(sum), iv(12, 14));
    // Loop results: the accumulator lives to the store, the counter is dead.
    assert_eq!(l.interval(w.results[1]), iv(5, 17));
    assert_eq!(l.interval(w.results[0]), iv(5, 5));
    assert!(l.interfere(px, load));
    let py = f.body.ops[6].results[0];
    assert!(!l.interfere(load, py));
    assert!(!l.interfere(px, py));
    // At the addptr of the store: its operands and result, and the result of the loop.
    let pstore = f.body.ops[7].results[0];
    assert_eq!(l.live_at(16), vec![range, w.results[1], py, pstore]);
}

#[test]
fn if_inside_loop() {
    let mut b = B::new("k");
    let p = b.param("P", Type::ptr(DType::I32));
    let n = b.param("n", i32t());
    let zero = b.int(0, i32t()); // 0
    let five = b.int(5, i32t()); // 1
    let a = b.b.open_region(vec![i32t()]);
    let c = b.cmp(CmpPred::Lt, a[0], n); // 3
    let cond = b.b.close_region(vec![c]);
    let a = b.b.open_region(vec![i32t()]);
    let x = b.bin(BinOp::Add, a[0], five); // 4
    let c2 = b.cmp(CmpPred::Lt, x, n); // 5
    b.b.open_region(vec![]);
    let y = b.bin(BinOp::Mul, x, five); // 7
    let then_r = b.b.close_region(vec![y]);
    b.b.open_region(vec![]);
    let else_r = b.b.close_region(vec![x]);
    let r = b.op(
        OpKind::If {
            cond: c2,
            then_region: then_r,
            else_region: else_r,
        },
        i32t(),
    ); // 6
    let body = b.b.close_region(vec![r]);
    let s = b.span();
    let w = b.b.push(
        OpKind::While {
            inits: vec![zero],
            cond_region: cond,
            body_region: body,
            pipeline: None,
            prefetch: None,
        },
        vec![i32t()],
        s,
    )[0]; // 2
    b.store(p, w, None); // 8
    let f = b.finish();
    verifier::verify_function(&f).unwrap();
    let l = Liveness::compute(&f);
    assert_eq!(l.ops.len(), 9);
    assert_eq!(l.ops[2], OpPosition { start: 2, end: 7 });
    assert_eq!(l.ops[6], OpPosition { start: 6, end: 7 });
    assert_eq!(l.interval(zero), iv(0, 2));
    // Defined before the loop, used inside it (even inside the if): to the loop's end.
    assert_eq!(l.interval(five), iv(1, 7));
    assert_eq!(l.interval(n), iv(0, 7));
    // Defined inside the body: not extended.
    assert_eq!(l.interval(x), iv(4, 7));
    assert_eq!(l.interval(c2), iv(5, 6));
    assert_eq!(l.interval(y), iv(7, 7));
    assert_eq!(l.interval(r), iv(6, 7));
    assert_eq!(l.interval(w), iv(2, 8));
    assert_eq!(l.interval(p), iv(0, 8));
}
