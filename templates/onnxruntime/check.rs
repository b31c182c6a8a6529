// Copied verbatim by triton-opgen: checks the inputs' dtypes and shapes
// against the op's spec and derives the outputs' (no ORT calls here).
use crate::op_spec::{DERIVED, DTYPE_VARS, GROUPS, INPUTS, OUTPUTS, QUALIFIED};
use crate::spec_types::{dtype_name, DimDesc, DtypeDesc};

/// What is known of one input: element type, dims (-1: unknown) and, during
/// shape inference, the graph's name of each dim (empty: none, or not read).
pub struct Seen {
    pub dtype: i32,
    pub dims: Vec<i64>,
    pub names: Vec<String>,
}

/// The outputs' element types and dims (-1 where a dim is not known yet),
/// with the graph's name of the input dim each output dim equals ("" if none).
pub struct Derived {
    pub outputs: Vec<(i32, Vec<i64>, Vec<String>)>,
    /// The dtype group (row of GROUPS) the inputs select.
    pub group: usize,
    /// Each symbolic dim with its value (-1: unknown), in binding order.
    pub dims: Vec<(&'static str, i64)>,
}

pub fn check(inputs: &[Seen]) -> Result<Derived, String> {
    if inputs.len() != INPUTS.len() {
        return Err(format!(
            "{QUALIFIED} takes {} inputs, got {}",
            INPUTS.len(),
            inputs.len()
        ));
    }
    let group = pick_group(inputs)?;
    // Each spec symbol: its value, the input that bound it, that dim's graph name.
    let mut syms: Vec<(&'static str, i64, &'static str, &str)> = Vec::new();
    for (desc, seen) in INPUTS.iter().zip(inputs) {
        if seen.dims.len() != desc.dims.len() {
            return Err(format!(
                "{QUALIFIED}: input `{}` must have rank {} ({}), got rank {} (shape {:?})",
                desc.name,
                desc.dims.len(),
                dims_text(desc.dims),
                seen.dims.len(),
                seen.dims
            ));
        }
        for (axis, (want, &got)) in desc.dims.iter().zip(&seen.dims).enumerate() {
            match *want {
                DimDesc::Lit(n) if got >= 0 && got != n => {
                    return Err(format!(
                        "{QUALIFIED}: input `{}` must have size {n} on axis {axis}, got {got}",
                        desc.name
                    ))
                }
                DimDesc::Lit(_) => {}
                DimDesc::Sym(sym) => match syms.iter().find(|(s, ..)| *s == sym) {
                    Some(&(_, bound, by, _)) if bound >= 0 && got >= 0 && bound != got => {
                        return Err(format!(
                            "{QUALIFIED}: input `{}` has {sym} = {got} on axis {axis}, but input `{by}` has {sym} = {bound}",
                            desc.name
                        ))
                    }
                    Some(_) => {}
                    None => {
                        let name = seen.names.get(axis).map_or("", String::as_str);
                        syms.push((sym, got, desc.name, name));
                    }
                },
            }
        }
    }
    let outputs = OUTPUTS
        .iter()
        .map(|desc| {
            let dtype = match desc.dtype {
                DtypeDesc::Var(v) => GROUPS[group][v],
                DtypeDesc::Fixed(code) => code,
            };
            let mut dims = Vec::new();
            let mut names = Vec::new();
            for dim in desc.dims {
                match *dim {
                    DimDesc::Lit(n) => {
                        dims.push(n);
                        names.push(String::new());
                    }
                    DimDesc::Sym(sym) => {
                        let (value, name) = syms
                            .iter()
                            .find(|(s, ..)| *s == sym)
                            .map_or((-1, ""), |&(_, v, _, name)| (v, name));
                        dims.push(value);
                        names.push(name.to_string());
                    }
                }
            }
            (dtype, dims, names)
        })
        .collect();
    Ok(Derived {
        outputs,
        group,
        dims: syms.iter().map(|&(s, v, ..)| (s, v)).collect(),
    })
}

/// The dtype group the inputs select: each variable is set by the first
/// input that uses it; later inputs must agree.
fn pick_group(inputs: &[Seen]) -> Result<usize, String> {
    let mut assigned: Vec<Option<(i32, &'static str)>> = vec![None; DTYPE_VARS.len()];
    for (desc, seen) in INPUTS.iter().zip(inputs) {
        match desc.dtype {
            DtypeDesc::Fixed(code) if seen.dtype != code => {
                return Err(format!(
                    "{QUALIFIED}: input `{}` must be {}, got {}",
                    desc.name,
                    dtype_name(code),
                    dtype_name(seen.dtype)
                ))
            }
            DtypeDesc::Fixed(_) => {}
            DtypeDesc::Var(v) => {
                let allowed: Vec<i32> = GROUPS.iter().map(|g| g[v]).collect();
                if !allowed.contains(&seen.dtype) {
                    let mut names: Vec<&str> = Vec::new();
                    for &code in &allowed {
                        if !names.contains(&dtype_name(code)) {
                            names.push(dtype_name(code));
                        }
                    }
                    return Err(format!(
                        "{QUALIFIED}: input `{}` has dtype {}; {} must be one of {{{}}}",
                        desc.name,
                        dtype_name(seen.dtype),
                        DTYPE_VARS[v],
                        names.join(", ")
                    ));
                }
                match assigned[v] {
                    Some((code, by)) if code != seen.dtype => {
                        return Err(format!(
                            "{QUALIFIED}: input `{}` has dtype {}, but input `{by}` makes {} = {}",
                            desc.name,
                            dtype_name(seen.dtype),
                            DTYPE_VARS[v],
                            dtype_name(code)
                        ))
                    }
                    Some(_) => {}
                    None => assigned[v] = Some((seen.dtype, desc.name)),
                }
            }
        }
    }
    // An input of a derived variable: the dtype its source's input makes it.
    for &(var, source) in DERIVED {
        let (Some((got, by)), Some((code, from))) = (assigned[var], assigned[source]) else {
            continue;
        };
        let want = GROUPS.iter().find(|g| g[source] == code).map(|g| g[var]);
        if let Some(want) = want.filter(|&w| w != got) {
            return Err(format!(
                "{QUALIFIED}: input `{by}` has dtype {} but must be {} where `{from}` is {} ({} follows {})",
                dtype_name(got),
                dtype_name(want),
                dtype_name(code),
                DTYPE_VARS[var],
                DTYPE_VARS[source]
            ));
        }
    }
    GROUPS
        .iter()
        .position(|g| {
            g.iter()
                .zip(&assigned)
                .all(|(&code, a)| a.is_none_or(|(c, _)| c == code))
        })
        .ok_or_else(|| {
            // Each variable as the inputs set it, and the combinations compiled.
            let given: Vec<String> = assigned
                .iter()
                .zip(DTYPE_VARS)
                .filter_map(|(a, var)| a.map(|(code, by)| format!("{var} = {} from `{by}`", dtype_name(code))))
                .collect();
            let compiled: Vec<String> = GROUPS
                .iter()
                .map(|g| {
                    let pairs: Vec<String> = g
                        .iter()
                        .zip(DTYPE_VARS)
                        .map(|(&code, var)| format!("{var}={}", dtype_name(code)))
                        .collect();
                    pairs.join(",")
                })
                .collect();
            format!(
                "{QUALIFIED}: no compiled variant for these input dtypes ({}); compiled: {}",
                given.join(", "),
                compiled.join("; ")
            )
        })
}

fn dims_text(dims: &[DimDesc]) -> String {
    let parts: Vec<String> = dims
        .iter()
        .map(|d| match d {
            DimDesc::Sym(s) => s.to_string(),
            DimDesc::Lit(n) => n.to_string(),
        })
        .collect();
    format!("[{}]", parts.join(", "))
}
