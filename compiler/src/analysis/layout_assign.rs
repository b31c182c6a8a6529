//! Layout assignment: picks a [`Layout`] for every tile value so that memory
//! accesses are coalesced and vectorized and most ops need no conversion.
//!
//! Every tile shape has a canonical blocked layout whose per-thread vector
//! along the last axis is the widest vector any load or store of that shape
//! can use. A backward pass then lets consumers choose their operands'
//! layouts: element-wise operands take the result's layout, a broadcast's
//! source the result's layout, a reshape's source the layout that keeps its
//! registers in place, a reduction's source the parent of the slice its result
//! is wanted in. Values nobody constrains get the canonical layout. Codegen
//! converts (through shared memory) wherever an op's actual result layout
//! differs from the one its consumer asked for.
//!
//! A load or store whose pointers are contiguous along another axis than the
//! last (`X + rm[:, newaxis] + rn[newaxis, :] * ldx`) gets a layout ordered by
//! [`AxisInfoMap::contiguity_order`], vectorized along that axis; a load no
//! consumer constrains (a transpose's source) keeps its access layout.
use super::axis_info::AxisInfoMap;
use super::mma;
use crate::ir::layout::{reshape_src_layout, BlockedLayout, Layout, LayoutMap};
use crate::ir::walk::{walk_ops, DefUse, Use};
use crate::ir::{Function, OpKind, Region, ValueId};

impl LayoutMap {
    fn suggest(&mut self, func: &Function, v: ValueId, layout: Layout) {
        if !func.ty(v).is_scalar() && layout.rank() == func.ty(v).rank() {
            self.layouts.entry(v).or_insert(layout);
        }
    }
}

/// Whether layouts can be assigned (the checks codegen makes before it
/// lowers): a power-of-two number of warps up to 32 and tiles a thread can
/// hold. Codegen checks that each tile's layout fits its shape (a dimension
/// that is not a power of two, like 192, needs the CTA tile to divide it).
pub fn applies(func: &Function, num_warps: usize) -> bool {
    let threads = 32 * num_warps;
    num_warps.is_power_of_two()
        && num_warps <= 32
        && func.values.iter().all(|v| {
            v.ty.shape.iter().product::<usize>().div_ceil(threads)
                <= crate::arch::MAX_TILE_ELEMENTS_PER_THREAD
        })
}

pub fn assign(func: &Function, num_warps: usize, widths: &AxisInfoMap) -> LayoutMap {
    let mut map = LayoutMap::new(num_warps);
    collect_vector_widths(func, &func.body, widths, &mut map);
    seed_mma(func, &func.body, &mut map);
    backward(func, &func.body, widths, &mut map);
    settle_reductions(func, &func.body, &mut map);
    transpose_dot_operands_in_place(func, &mut map);
    map
}

/// A transpose read only as the `b` of tensor-core dots (`a @ ^b`, a
/// matmul with `b` stored `[N][K]`) takes its source's layout seen
/// transposed: it moves no data, and the dot stages `b` from registers that
/// run along K (K-major, 16-byte stores) instead of the tile crossing
/// shared memory twice.
fn transpose_dot_operands_in_place(func: &Function, map: &mut LayoutMap) {
    let ops = walk_ops(func);
    let du = DefUse::compute(func);
    for visit in &ops {
        let OpKind::Trans { src } = visit.op.kind else {
            continue;
        };
        let Some(&result) = visit.op.results.first() else {
            continue;
        };
        let uses = du.uses_of(result);
        let only_dot_b = !uses.is_empty()
            && uses.iter().all(|u| match u {
                Use::Operand { op, operand: 1 } => {
                    let op = ops[*op].op;
                    matches!(op.kind, OpKind::Dot { .. })
                        && mma::plan_for_op(func, op, map.num_warps).is_some()
                }
                _ => false,
            });
        let Layout::Blocked(from) = map.get(func, src) else {
            continue;
        };
        if let (true, Some(t)) = (only_dot_b, from.transposed()) {
            map.layouts.insert(result, Layout::Blocked(t));
        }
    }
}

/// A reduction leaves its result in its source's layout minus the reduced
/// axis, whatever its users wanted (they get a conversion): the map says so.
fn settle_reductions(func: &Function, region: &Region, map: &mut LayoutMap) {
    for op in &region.ops {
        if let OpKind::Reduce { src, axis, .. } = &op.kind {
            let result = op.results[0];
            if let Some(l) = reduction_layout(func, map, *src, *axis) {
                if !func.ty(result).is_scalar() {
                    map.layouts.insert(result, l);
                }
            }
        }
        for nested in crate::ir::walk::regions(&op.kind) {
            settle_reductions(func, nested, map);
        }
    }
}

/// The layout a reduction of `src` along `axis` produces: its source's
/// blocked layout (the canonical one for other layouts) minus the axis.
pub fn reduction_layout(
    func: &Function,
    map: &LayoutMap,
    src: ValueId,
    axis: usize,
) -> Option<Layout> {
    reduction_source_layout(func, map, src)?.reduced(axis)
}

/// The blocked layout a reduction reads `src` in.
pub fn reduction_source_layout(func: &Function, map: &LayoutMap, src: ValueId) -> Option<Layout> {
    match map.get(func, src) {
        Layout::Blocked(b) => Some(Layout::Blocked(b)),
        _ => match map.canonical(&func.ty(src).shape) {
            Layout::Blocked(b) => Some(Layout::Blocked(b)),
            _ => None,
        },
    }
}

/// The layout a load or store through `ptr` wants: the canonical layout when
/// its pointers are most contiguous along the last axis, else a layout whose
/// fastest axis is the most contiguous one, vectorized along it.
pub fn access_layout(
    func: &Function,
    widths: &AxisInfoMap,
    map: &LayoutMap,
    ptr: ValueId,
    mask: Option<ValueId>,
) -> Layout {
    let shape = &func.ty(ptr).shape;
    let rank = shape.len();
    let order = widths.contiguity_order(ptr);
    let row_major = order.len() != rank || order.first().is_none_or(|&d| d + 1 == rank);
    if row_major {
        return map.canonical(shape);
    }
    let vec = widths.vector_width_along(ptr, mask, order[0], func) as usize;
    Layout::Blocked(BlockedLayout::for_shape_ordered(
        shape,
        map.num_warps,
        vec,
        &order,
    ))
}

/// The layout a load through `ptr` wants: its access layout, widened where
/// its pointers run along the fastest axis further than their alignment lets
/// one aligned vector read (an odd leading dimension): each thread then
/// holds whole runs, which codegen reads misaligned
/// (`codegen::lower::misaligned_runs`) instead of element by element.
pub fn load_layout(
    func: &Function,
    widths: &AxisInfoMap,
    map: &LayoutMap,
    ptr: ValueId,
    mask: Option<ValueId>,
) -> Layout {
    let layout = access_layout(func, widths, map, ptr, mask);
    let Layout::Blocked(blocked) = &layout else {
        return layout;
    };
    let shape = &func.ty(ptr).shape;
    let Some((axis, held)) = layout.tile_map(shape).fastest_run() else {
        return layout;
    };
    let run = widths.run_width_along(ptr, axis, func) as usize;
    if run <= held {
        return layout;
    }
    Layout::Blocked(BlockedLayout::for_shape_ordered(
        shape,
        map.num_warps,
        run,
        &blocked.order,
    ))
}

fn collect_vector_widths(
    func: &Function,
    region: &Region,
    widths: &AxisInfoMap,
    map: &mut LayoutMap,
) {
    for op in &region.ops {
        let access = match &op.kind {
            OpKind::Load { ptr, mask, .. } => Some((*ptr, *mask)),
            OpKind::Store { ptr, mask, .. } => Some((*ptr, *mask)),
            OpKind::If {
                then_region,
                else_region,
                ..
            } => {
                collect_vector_widths(func, then_region, widths, map);
                collect_vector_widths(func, else_region, widths, map);
                None
            }
            OpKind::While {
                cond_region,
                body_region,
                ..
            } => {
                collect_vector_widths(func, cond_region, widths, map);
                collect_vector_widths(func, body_region, widths, map);
                None
            }
            _ => None,
        };
        if let Some((ptr, mask)) = access {
            let shape = func.ty(ptr).shape.clone();
            if !shape.is_empty() {
                let w = widths.vector_width(ptr, mask, func) as usize;
                let e = map.vec_by_shape.entry(shape).or_insert(1);
                *e = (*e).max(w);
            }
        }
    }
}

/// Tensor-core dots produce their accumulator in the mma layout; it is fixed
/// before the backward pass so that the accumulator keeps that layout across
/// a loop (the carried value, its init, region args and yield all take it) and
/// only the epilogue converts.
fn seed_mma(func: &Function, region: &Region, map: &mut LayoutMap) {
    for op in &region.ops {
        match &op.kind {
            OpKind::Dot { a, acc, .. } => {
                if let Some(cfg) = mma::plan_for_op(func, op, map.num_warps) {
                    let l = Layout::Blocked(mma::accumulator_layout(&cfg));
                    map.suggest(func, op.results[0], l.clone());
                    map.suggest(func, *acc, l.clone());
                    // In a chain of dots (FlashAttention's `q @ k^T`, then
                    // `p @ v`) warps split along M only, and `a` takes the
                    // accumulator layout, which is this dot's A fragments:
                    // codegen reads them from registers. `p` stays where the
                    // first dot left it; `q`, loaded once before the loop,
                    // is loaded in that layout instead of being staged
                    // through shared memory at every iteration.
                    if cfg.warps[1] == 1 && mma::in_dot_chain(func, op) {
                        map.suggest(func, *a, l);
                    }
                }
            }
            OpKind::If {
                then_region,
                else_region,
                ..
            } => {
                seed_mma(func, then_region, map);
                seed_mma(func, else_region, map);
            }
            OpKind::While {
                inits,
                cond_region,
                body_region,
                ..
            } => {
                seed_mma(func, cond_region, map);
                seed_mma(func, body_region, map);
                for (i, &r) in op.results.iter().enumerate() {
                    let Some(&y) = body_region.yields.get(i) else {
                        continue;
                    };
                    let Some(l) = dot_derived_layout(func, body_region, map, y) else {
                        continue;
                    };
                    for v in [
                        Some(&r),
                        inits.get(i),
                        cond_region.args.get(i),
                        body_region.args.get(i),
                    ]
                    .into_iter()
                    .flatten()
                    {
                        map.suggest(func, *v, l.clone());
                    }
                }
            }
            // Split-K sums the accumulator where the dot left it; the
            // epilogue converts the total once.
            OpKind::ClusterSum { src, .. } => {
                if let Some(l) = map.layouts.get(src).cloned() {
                    map.suggest(func, op.results[0], l);
                }
            }
            _ => {}
        }
    }
}

/// The access layout of `v` when a load of `region` reads it from memory
/// contiguous along another axis than the last (`k^T` from a row-major
/// `k`): a dot stages its operands through shared memory from any blocked
/// layout, so the load stays coalesced instead of taking the canonical
/// layout, one element a thread per row.
fn loaded_layout(
    func: &Function,
    region: &Region,
    widths: &AxisInfoMap,
    map: &LayoutMap,
    v: ValueId,
) -> Option<Layout> {
    let op = region.defining_op(v)?;
    let OpKind::Load { ptr, mask, .. } = &op.kind else {
        return None;
    };
    let l = load_layout(func, widths, map, *ptr, *mask);
    (l != map.canonical(&func.ty(v).shape)).then_some(l)
}

/// The layout of the first load of `region` (or a region nested in it)
/// through one of `pointers`, where it is not the canonical one: a widened
/// load of misaligned runs, or one contiguous along another axis.
fn loaded_through_layout(
    func: &Function,
    region: &Region,
    widths: &AxisInfoMap,
    map: &LayoutMap,
    pointers: &[ValueId],
) -> Option<Layout> {
    region.ops.iter().find_map(|op| match &op.kind {
        OpKind::Load { ptr, mask, .. } if pointers.contains(ptr) => {
            let l = load_layout(func, widths, map, *ptr, *mask);
            (l != map.canonical(&func.ty(*ptr).shape)).then_some(l)
        }
        kind => crate::ir::walk::regions(kind)
            .into_iter()
            .find_map(|nested| loaded_through_layout(func, nested, widths, map, pointers)),
    })
}

/// The layout `region` computes `v` in when `v` derives from a tensor-core
/// dot of the region: the dot's accumulator layout, kept by element-wise
/// ops (`acc * alpha + p @ v`), and its slice after a reduction (a running
/// row maximum). A loop carrying such a value keeps it there, so neither
/// the accumulator nor its row statistics cross shared memory at every
/// iteration (FlashAttention's loop).
fn dot_derived_layout(
    func: &Function,
    region: &Region,
    map: &LayoutMap,
    v: ValueId,
) -> Option<Layout> {
    let op = region.defining_op(v)?;
    let from = |operands: &[ValueId]| {
        operands
            .iter()
            .filter(|o| func.ty(**o).shape == func.ty(v).shape)
            .find_map(|o| dot_derived_layout(func, region, map, *o))
    };
    match &op.kind {
        OpKind::Dot { .. } if mma::plan_for_op(func, op, map.num_warps).is_some() => {
            map.layouts.get(&v).cloned()
        }
        OpKind::Binary { lhs, rhs, .. } => from(&[*lhs, *rhs]),
        OpKind::Select {
            on_true, on_false, ..
        } => from(&[*on_true, *on_false]),
        OpKind::Unary { src, .. } | OpKind::Cast { src } => from(&[*src]),
        OpKind::Reduce { src, axis, .. } => {
            dot_derived_layout(func, region, map, *src)?.reduced(*axis)
        }
        _ => None,
    }
}

fn backward(func: &Function, region: &Region, widths: &AxisInfoMap, map: &mut LayoutMap) {
    for op in region.ops.iter().rev() {
        let result = op.results.first().copied();
        let wanted = result.map(|r| map.get(func, r));
        match &op.kind {
            OpKind::Binary { lhs, rhs, .. } | OpKind::Cmp { lhs, rhs, .. } => {
                let l = wanted.clone().unwrap_or(Layout::Scalar);
                map.suggest(func, *lhs, l.clone());
                map.suggest(func, *rhs, l);
            }
            OpKind::Unary { src, .. }
            | OpKind::Cast { src }
            | OpKind::Broadcast { src }
            | OpKind::ClusterSum { src, .. } => {
                map.suggest(func, *src, wanted.clone().unwrap_or(Layout::Scalar));
            }
            OpKind::AddPtr { ptr, offset } => {
                let l = wanted.clone().unwrap_or(Layout::Scalar);
                map.suggest(func, *ptr, l.clone());
                map.suggest(func, *offset, l);
            }
            OpKind::Select {
                cond,
                on_true,
                on_false,
            } => {
                let l = wanted.clone().unwrap_or(Layout::Scalar);
                for v in [cond, on_true, on_false] {
                    map.suggest(func, *v, l.clone());
                }
            }
            OpKind::Load { ptr, mask, other } => {
                if let Some(r) = result.filter(|r| !map.layouts.contains_key(r)) {
                    let l = load_layout(func, widths, map, *ptr, *mask);
                    map.suggest(func, r, l);
                }
                let l = result.map_or(Layout::Scalar, |r| map.get(func, r));
                for v in [Some(*ptr), *mask, *other].into_iter().flatten() {
                    map.suggest(func, v, l.clone());
                }
            }
            OpKind::AtomicRmw {
                ptr, value, mask, ..
            } => {
                let l = wanted.clone().unwrap_or(Layout::Scalar);
                for v in [Some(*ptr), Some(*value), *mask].into_iter().flatten() {
                    map.suggest(func, v, l.clone());
                }
            }
            OpKind::AtomicCas { ptr, cmp, value } => {
                let l = wanted.clone().unwrap_or(Layout::Scalar);
                for v in [ptr, cmp, value] {
                    map.suggest(func, *v, l.clone());
                }
            }
            OpKind::Store { ptr, value, mask } => {
                let l = access_layout(func, widths, map, *ptr, *mask);
                for v in [Some(*ptr), Some(*value), *mask].into_iter().flatten() {
                    map.suggest(func, v, l.clone());
                }
            }
            OpKind::Reshape { src } => {
                if let (Some(r), Some(w)) = (result, &wanted) {
                    if let Some(l) = reshape_src_layout(w, &func.ty(*src).shape, &func.ty(r).shape)
                    {
                        map.suggest(func, *src, l);
                    }
                }
            }
            OpKind::Reduce { src, axis, .. } => {
                let l = match wanted {
                    Some(Layout::Slice { parent, dim }) if dim == *axis => Layout::Blocked(parent),
                    _ => map.canonical(&func.ty(*src).shape),
                };
                map.suggest(func, *src, l);
            }
            // The source keeps its own layout (a load's access layout): the
            // transpose goes through shared memory either way.
            OpKind::Trans { .. } => {}
            // Inserted after assignment, with both sides' layouts known.
            OpKind::ConvertLayout { .. } => {}
            OpKind::Dot { a, b, acc } => {
                for v in [*a, *b] {
                    let l = loaded_layout(func, region, widths, map, v)
                        .unwrap_or_else(|| map.canonical(&func.ty(v).shape));
                    map.suggest(func, v, l);
                }
                map.suggest(func, *acc, wanted.clone().unwrap_or(Layout::Scalar));
            }
            OpKind::If {
                then_region,
                else_region,
                ..
            } => {
                for (i, &r) in op.results.iter().enumerate() {
                    let l = map.get(func, r);
                    map.suggest(func, r, l.clone());
                    for y in [then_region.yields.get(i), else_region.yields.get(i)]
                        .into_iter()
                        .flatten()
                    {
                        map.suggest(func, *y, l.clone());
                    }
                }
                backward(func, then_region, widths, map);
                backward(func, else_region, widths, map);
            }
            OpKind::While {
                inits,
                cond_region,
                body_region,
                ..
            } => {
                for (i, &r) in op.results.iter().enumerate() {
                    // A value loaded a step ahead (the register pre-fetch of
                    // an unaligned dot loop) is carried in its load's layout,
                    // and so is a pointer the loop loads through: else it
                    // would cross shared memory to that layout every step.
                    let unset = !map.layouts.contains_key(&r);
                    let loaded = body_region
                        .yields
                        .get(i)
                        .filter(|_| unset)
                        .and_then(|&y| loaded_layout(func, body_region, widths, map, y))
                        .or_else(|| {
                            let carried = [body_region.args.get(i), body_region.yields.get(i)];
                            let carried: Vec<ValueId> =
                                carried.into_iter().flatten().copied().collect();
                            unset
                                .then(|| {
                                    loaded_through_layout(func, body_region, widths, map, &carried)
                                })
                                .flatten()
                        });
                    let l = loaded.unwrap_or_else(|| map.get(func, r));
                    map.suggest(func, r, l.clone());
                    for v in [
                        inits.get(i),
                        cond_region.args.get(i),
                        body_region.args.get(i),
                        body_region.yields.get(i),
                    ]
                    .into_iter()
                    .flatten()
                    {
                        map.suggest(func, *v, l.clone());
                    }
                }
                backward(func, body_region, widths, map);
                backward(func, cond_region, widths, map);
            }
            OpKind::Constant { .. }
            | OpKind::ProgramId { .. }
            | OpKind::NumPrograms { .. }
            | OpKind::MakeRange { .. }
            | OpKind::Splat { .. }
            | OpKind::Return => {}
        }
    }
}
