//! Kernel arguments: host values checked against the parameters' types.

use super::error::{InterpError, InterpResult};
use super::value::{to_storage, Data, Scalar, Tile};
use crate::ir::{Function, ScalarType, ValueId};
use std::rc::Rc;

/// One kernel argument: a number or a buffer address from [`super::Memory`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ArgValue {
    Int(i64),
    Float(f64),
    Ptr(u64),
}

/// Each parameter's value as a tile, after checking count, kind and range.
pub(crate) fn bind(func: &Function, args: &[ArgValue]) -> InterpResult<Vec<(ValueId, Rc<Tile>)>> {
    if args.len() != func.params.len() {
        return Err(InterpError::new(
            func.span,
            format!(
                "kernel `{}` takes {} arguments but {} were given",
                func.name,
                func.params.len(),
                args.len()
            ),
        ));
    }
    let mut out = Vec::with_capacity(args.len());
    for (param, &arg) in func.params.iter().zip(args) {
        let Some(info) = func.values.get(param.value.0 as usize) else {
            let msg = format!("parameter `{}` has no type", param.name);
            return Err(InterpError::new(func.span, msg));
        };
        let ty = &info.ty;
        let bad = |why: &str| {
            InterpError::new(
                func.span,
                format!("argument `{}` ({}) {why}: got {arg:?}", param.name, ty),
            )
        };
        let d = ty.scalar.dtype();
        let x = match (ty.scalar, arg) {
            (ScalarType::Ptr(_), ArgValue::Ptr(p)) => Scalar::Ptr(p),
            (ScalarType::Ptr(_), _) => return Err(bad("must be a pointer")),
            (ScalarType::Num(_), ArgValue::Int(i)) if d.is_int() => {
                let s = to_storage(ty.scalar, Scalar::Int(i)).map_err(|m| bad(&m))?;
                if s != Scalar::Int(i) && s != Scalar::Bool(i != 0)
                    || (d.bits() == 1 && !(0..=1).contains(&i))
                {
                    return Err(bad("does not fit its type"));
                }
                s
            }
            (ScalarType::Num(_), ArgValue::Float(f)) if d.is_float() => Scalar::Float(f),
            (ScalarType::Num(_), _) if d.is_int() => return Err(bad("must be an integer")),
            (ScalarType::Num(_), _) => return Err(bad("must be a float")),
        };
        let data = Data::splat(ty.scalar, x, ty.num_elements()).map_err(|m| bad(&m))?;
        let tile = Tile {
            scalar: ty.scalar,
            shape: ty.shape.clone(),
            data,
        };
        out.push((param.value, Rc::new(tile)));
    }
    Ok(out)
}
