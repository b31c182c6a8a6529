//! Runs one program (one point of the grid): walks regions op by op, keeps
//! every value in a slot indexed by `ValueId`, and handles `If`, `While` and
//! `Return`. The per-op math lives in the sibling modules.

use super::cluster::ClusterPartials;
use super::error::{InterpError, InterpResult};
use super::memory::Memory;
use super::value::{Data, Scalar, Tile};
use super::{access, atomics, cast, dot, elementwise, reduce, shape};
use crate::ir::{Const, Function, Op, OpKind, Region, ValueId};
use crate::span::Span;
use std::rc::Rc;

/// Whether the rest of the program still runs after a region.
#[derive(PartialEq)]
pub(crate) enum Flow {
    Next,
    Return,
}

pub(crate) struct Program<'a> {
    pub func: &'a Function,
    pub mem: &'a mut Memory,
    /// What the programs of a split-K cluster leave for its last one.
    pub partials: &'a mut ClusterPartials,
    pub pid: [u32; 3],
    pub grid: [u32; 3],
    /// Ops executed plus loop iterations started, against `max_steps`.
    pub steps: u64,
    pub max_steps: u64,
    values: Vec<Option<Rc<Tile>>>,
}

impl<'a> Program<'a> {
    pub fn new(
        func: &'a Function,
        mem: &'a mut Memory,
        partials: &'a mut ClusterPartials,
        pid: [u32; 3],
        grid: [u32; 3],
        max_steps: u64,
    ) -> Self {
        Program {
            func,
            mem,
            partials,
            pid,
            grid,
            steps: 0,
            max_steps,
            values: vec![None; func.values.len()],
        }
    }

    pub fn get(&self, v: ValueId, span: Span) -> InterpResult<Rc<Tile>> {
        match self.values.get(v.0 as usize) {
            Some(Some(t)) => Ok(t.clone()),
            _ => Err(InterpError::new(
                span,
                format!("value %{} is used before it is defined", v.0),
            )),
        }
    }

    fn get_opt(&self, v: Option<ValueId>, span: Span) -> InterpResult<Option<Rc<Tile>>> {
        v.map(|v| self.get(v, span)).transpose()
    }

    pub fn bind(&mut self, v: ValueId, tile: Rc<Tile>, span: Span) -> InterpResult<()> {
        match self.values.get_mut(v.0 as usize) {
            Some(slot) => {
                *slot = Some(tile);
                Ok(())
            }
            None => Err(InterpError::new(
                span,
                format!("value %{} has no type", v.0),
            )),
        }
    }

    /// Makes `data` the value of `v`, shaped by `v`'s type.
    pub fn define(&mut self, v: ValueId, data: Data, span: Span) -> InterpResult<()> {
        let Some(info) = self.func.values.get(v.0 as usize) else {
            return Err(InterpError::new(
                span,
                format!("value %{} has no type", v.0),
            ));
        };
        if data.len() != info.ty.num_elements() {
            return Err(InterpError::new(
                span,
                format!(
                    "internal: {} elements computed for a value of type {}",
                    data.len(),
                    info.ty
                ),
            ));
        }
        let tile = Tile {
            scalar: info.ty.scalar,
            shape: info.ty.shape.clone(),
            data,
        };
        self.bind(v, Rc::new(tile), span)
    }

    fn step(&mut self, span: Span) -> InterpResult<()> {
        self.steps += 1;
        if self.steps > self.max_steps {
            return Err(InterpError::new(
                span,
                format!(
                    "step limit of {} exceeded (does a loop never end?)",
                    self.max_steps
                ),
            ));
        }
        Ok(())
    }

    pub fn run_region(&mut self, region: &Region) -> InterpResult<Flow> {
        for op in &region.ops {
            self.step(op.span)?;
            if self.exec(op)? == Flow::Return {
                return Ok(Flow::Return);
            }
        }
        Ok(Flow::Next)
    }

    fn yields(&self, region: &Region, span: Span) -> InterpResult<Vec<Rc<Tile>>> {
        region.yields.iter().map(|&v| self.get(v, span)).collect()
    }

    fn bind_all(&mut self, to: &[ValueId], tiles: Vec<Rc<Tile>>, span: Span) -> InterpResult<()> {
        if to.len() != tiles.len() {
            return Err(InterpError::new(
                span,
                format!("{} values flow into {} slots", tiles.len(), to.len()),
            ));
        }
        for (&v, t) in to.iter().zip(tiles) {
            self.bind(v, t, span)?;
        }
        Ok(())
    }

    fn scalar_bool(&self, v: ValueId, span: Span) -> InterpResult<bool> {
        let t = self.get(v, span)?;
        match &t.data {
            Data::Bool(b) if b.len() == 1 => Ok(b[0]),
            _ => Err(InterpError::new(
                span,
                format!("condition must be a scalar i1, not {}", t.ty()),
            )),
        }
    }

    fn exec(&mut self, op: &Op) -> InterpResult<Flow> {
        let span = op.span;
        let err = |m: String| InterpError::new(span, m);
        let result = || -> InterpResult<ValueId> {
            op.results
                .first()
                .copied()
                .ok_or_else(|| err(format!("{:?} has no result", op.kind)))
        };
        let data = match &op.kind {
            OpKind::If {
                cond,
                then_region,
                else_region,
            } => {
                let region = if self.scalar_bool(*cond, span)? {
                    then_region
                } else {
                    else_region
                };
                if self.run_region(region)? == Flow::Return {
                    return Ok(Flow::Return);
                }
                let out = self.yields(region, span)?;
                self.bind_all(&op.results, out, span)?;
                return Ok(Flow::Next);
            }
            OpKind::While {
                inits,
                cond_region,
                body_region,
                ..
            } => return self.run_while(op, inits, cond_region, body_region),
            OpKind::Return => return Ok(Flow::Return),
            OpKind::Store { ptr, value, mask } => {
                let (ptr, value) = (self.get(*ptr, span)?, self.get(*value, span)?);
                let mask = self.get_opt(*mask, span)?;
                access::store(self.mem, &ptr, &value, mask.as_deref()).map_err(err)?;
                return Ok(Flow::Next);
            }
            kind => self.eval(kind, result()?, span).map_err(err)?,
        };
        self.define(result()?, data, span)?;
        Ok(Flow::Next)
    }

    fn run_while(
        &mut self,
        op: &Op,
        inits: &[ValueId],
        cond: &Region,
        body: &Region,
    ) -> InterpResult<Flow> {
        let span = op.span;
        let mut carried: Vec<Rc<Tile>> = inits
            .iter()
            .map(|&v| self.get(v, span))
            .collect::<InterpResult<_>>()?;
        loop {
            self.step(span)?;
            self.bind_all(&cond.args, carried.clone(), span)?;
            if self.run_region(cond)? == Flow::Return {
                return Ok(Flow::Return);
            }
            let Some(&c) = cond.yields.first() else {
                return Err(InterpError::new(
                    span,
                    "loop condition region yields nothing",
                ));
            };
            if !self.scalar_bool(c, span)? {
                break;
            }
            self.bind_all(&body.args, carried, span)?;
            if self.run_region(body)? == Flow::Return {
                return Ok(Flow::Return);
            }
            carried = self.yields(body, span)?;
        }
        self.bind_all(&op.results, carried, span)?;
        Ok(Flow::Next)
    }

    /// Ops with one result and no control flow: the value of `out`.
    fn eval(&mut self, kind: &OpKind, out: ValueId, span: Span) -> Result<Data, String> {
        let Some(out_info) = self.func.values.get(out.0 as usize) else {
            return Err(format!("value %{} has no type", out.0));
        };
        let out_ty = out_info.ty.clone();
        let n = out_ty.num_elements();
        let get = |v: ValueId| self.get(v, span).map_err(|e| e.message);
        Ok(match kind {
            OpKind::Constant { value } => {
                let x = match *value {
                    Const::Int(i) => Scalar::Int(i),
                    Const::Float(f) => Scalar::Float(f),
                    Const::Bool(b) => Scalar::Bool(b),
                };
                Data::splat(out_ty.scalar, x, n)?
            }
            OpKind::ProgramId { axis } | OpKind::NumPrograms { axis } => {
                let table = if matches!(kind, OpKind::ProgramId { .. }) {
                    self.pid
                } else {
                    self.grid
                };
                let Some(&x) = table.get(*axis as usize) else {
                    return Err(format!("grid axis {axis} does not exist (0, 1 or 2)"));
                };
                Data::Int(vec![x as i64])
            }
            OpKind::MakeRange { start, end } => shape::make_range(*start, *end, n)?,
            OpKind::Splat { src } => shape::splat(&*get(*src)?, n)?,
            OpKind::Broadcast { src } => shape::broadcast(&*get(*src)?, &out_ty.shape)?,
            OpKind::Reshape { src } => shape::reshape(&*get(*src)?, &out_ty.shape)?,
            OpKind::Trans { src } => shape::trans(&*get(*src)?)?,
            // Layouts place elements on threads; the values stay.
            OpKind::ConvertLayout { src } => get(*src)?.data.clone(),
            OpKind::ClusterSum { src, splits } => {
                let src = get(*src)?;
                self.partials
                    .sum(self.pid, self.grid, *splits, out, &src.data)?
            }
            OpKind::Binary { op, lhs, rhs } => {
                elementwise::binary(*op, &*get(*lhs)?, &*get(*rhs)?)?
            }
            OpKind::Cmp { pred, lhs, rhs } => elementwise::cmp(*pred, &*get(*lhs)?, &*get(*rhs)?)?,
            OpKind::Unary { op, src } => elementwise::unary(*op, &*get(*src)?)?,
            OpKind::Select {
                cond,
                on_true,
                on_false,
            } => elementwise::select(&*get(*cond)?, &*get(*on_true)?, &*get(*on_false)?)?,
            OpKind::Cast { src } => cast::cast(&*get(*src)?, out_ty.scalar)?,
            OpKind::AddPtr { ptr, offset } => access::add_ptr(&*get(*ptr)?, &*get(*offset)?)?,
            OpKind::Load { ptr, mask, other } => {
                let mask = mask.map(get).transpose()?;
                let other = other.map(get).transpose()?;
                access::load(self.mem, &*get(*ptr)?, mask.as_deref(), other.as_deref())?
            }
            OpKind::Reduce { src, axis, kind } => reduce::reduce(&*get(*src)?, *axis, *kind)?,
            OpKind::Dot { a, b, acc } => dot::dot(&*get(*a)?, &*get(*b)?, &*get(*acc)?)?,
            OpKind::AtomicRmw {
                op,
                ptr,
                value,
                mask,
            } => {
                let (ptr, value) = (get(*ptr)?, get(*value)?);
                let mask = mask.map(get).transpose()?;
                atomics::atomic_rmw(self.mem, *op, &ptr, &value, mask.as_deref())?
            }
            OpKind::AtomicCas { ptr, cmp, value } => {
                let (ptr, cmp, value) = (get(*ptr)?, get(*cmp)?, get(*value)?);
                atomics::atomic_cas(self.mem, &ptr, &cmp, &value)?
            }
            OpKind::Store { .. } | OpKind::If { .. } | OpKind::While { .. } | OpKind::Return => {
                unreachable!("handled by exec")
            }
        })
    }
}
