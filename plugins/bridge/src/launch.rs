//! One op: its embedded variants, kernels loaded per device, the autotuner's
//! choices, and the launch of one call.

use crate::decided::{Decisions, Resolved};
use crate::per_device::PerDevice;
use crate::pin::Pin;
use opgen_runtime::kernel::fits_clusters;
use opgen_runtime::split_launch::SPLIT_K_MACRO;
use opgen_runtime::tensor_map;
use opgen_runtime::{
    split_plan, Chooser, Device, EventTimer, Grid, Kernel, KernelArg, KernelTimer, ModuleImage,
    Stream, TuneKey, Variant,
};
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

struct Entry {
    variant: Variant,
    image: ModuleImage,
    /// Digest of the image: the autotune key names the code it times.
    digest: String,
    config: String,
    /// For a split-K variant, the same config unsplit (its `SPLIT_K` 1):
    /// it runs the full waves of tiles, the split variant the rest.
    unsplit: Option<usize>,
}

pub struct Op {
    name: String,
    /// The variants, or why they could not be read (reported at launch).
    entries: Result<Vec<Entry>, String>,
    /// Kernels loaded per (device, variant).
    kernels: PerDevice<Arc<Kernel>>,
    /// Programs of a persistent kernel that fit on the device at once, per
    /// (device, variant): asked of the driver once, not at every launch.
    resident: PerDevice<u32>,
    /// Programs of a split-K variant that run at once (its clusters x S).
    split_resident: PerDevice<u32>,
    /// The config per tune key (op, dims, dtypes, device, candidates).
    chooser: Chooser,
    /// The last launched variant (index into the entries), for `last_config`.
    last_launched: AtomicUsize,
    /// Calls already decided: the per-call fast path, which builds no
    /// autotune key (and, given a call key, needs no candidates).
    decided: Decisions,
    /// A config the user pinned: launched instead of the autotuner's pick.
    pin: Pin,
}

/// One compiled variant as a generated library embeds it: static data,
/// borrowed (the op copies what it keeps).
#[derive(Clone, Copy, Debug)]
pub struct VariantRef<'a> {
    /// The entry point in the image ("": the description's).
    pub kernel: &'a str,
    /// "SIZE=256 num_warps=4": the autotuner's name for it.
    pub config: &'a str,
    /// The manifest entry: macros, num_warps, shared_bytes, params.
    pub json: &'a str,
    /// PTX text (no NUL needed) or a cubin.
    pub image: &'a [u8],
}

/// Programs per axis; `persistent`: x is a work count, and the runtime
/// launches min(x, SMs x blocks per SM) programs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchGrid {
    pub x: u32,
    pub y: u32,
    pub z: u32,
    pub persistent: bool,
}

/// One call: the candidates (indices into the variants) with their grids,
/// the kernel arguments, the framework's stream of `device`, and what keys
/// the autotuner's choice (dtype group, dims).
pub struct Call<'a> {
    pub device: i32,
    /// The framework's `CUstream` (null: the default stream).
    pub stream: *mut c_void,
    pub candidates: &'a [u32],
    pub grids: &'a [LaunchGrid],
    pub args: &'a [KernelArg],
    pub dtype_key: &'a str,
    pub dims: &'a [i64],
    /// What decides the candidates, grids and tuning key (the dtype group,
    /// the dims, each stride and attribute the grid and the requirements
    /// read): the decision is remembered under it for [`Op::launch_known`].
    /// Empty: remembered by the exact candidates, dims and dtype group.
    pub call_key: &'a [i64],
}

#[cfg(test)]
impl<'a> Call<'a> {
    /// A call on device 0's default stream with no grids or arguments.
    pub(crate) fn bare(
        candidates: &'a [u32],
        dims: &'a [i64],
        dtype_key: &'a str,
        call_key: &'a [i64],
    ) -> Call<'a> {
        Call {
            device: 0,
            stream: std::ptr::null_mut(),
            candidates,
            grids: &[],
            args: &[],
            dtype_key,
            dims,
            call_key,
        }
    }
}

impl Op {
    pub fn new(name: &str, raw: &[VariantRef]) -> Op {
        let entries = raw
            .iter()
            .enumerate()
            .map(|(i, v)| read_entry(i, v))
            .collect::<Result<Vec<_>, String>>()
            .map(with_unsplit_siblings);
        Op::with_entries(name.to_string(), entries)
    }

    pub fn broken(reason: &str) -> Op {
        Op::with_entries(String::new(), Err(reason.to_string()))
    }

    fn with_entries(name: String, entries: Result<Vec<Entry>, String>) -> Op {
        Op {
            chooser: Chooser::new(&name),
            name,
            entries,
            kernels: PerDevice::default(),
            resident: PerDevice::default(),
            split_resident: PerDevice::default(),
            last_launched: AtomicUsize::new(usize::MAX),
            decided: Decisions::default(),
            pin: Pin::default(),
        }
    }

    /// The distinct configs of the op's variants, in variant order (the
    /// variants of several dtypes share them).
    pub fn configs(&self) -> Vec<&str> {
        let mut configs: Vec<&str> = Vec::new();
        for entry in self.entries.iter().flatten() {
            if !configs.contains(&entry.config.as_str()) {
                configs.push(&entry.config);
            }
        }
        configs
    }

    /// Pins `config` for every later launch ("" unpins).
    pub fn pin(&self, config: &str) -> Result<(), String> {
        self.entries.as_ref().map_err(|e| e.clone())?;
        self.pin.set(config, &self.configs())
    }

    /// Takes this op's usable entries of a pre-tuned table (an autotune
    /// cache file's JSON); returns how many.
    pub fn preload(&self, json: &str) -> usize {
        self.chooser.preload(json)
    }

    /// Configs this op benchmarked in this process (0 when every call was
    /// decided from its cache or pre-tuned table).
    pub fn benchmark_calls(&self) -> u64 {
        self.chooser.benchmark_calls()
    }

    pub fn last_config(&self) -> String {
        let index = self.last_launched.load(Ordering::Relaxed);
        match &self.entries {
            Ok(entries) => entries
                .get(index)
                .map(|e| e.config.clone())
                .unwrap_or_default(),
            Err(_) => String::new(),
        }
    }

    /// Why the embedded variants cannot be used anywhere, if they cannot.
    pub fn problem(&self) -> Option<String> {
        self.entries.as_ref().err().cloned()
    }

    pub fn launch(&self, call: &Call) -> Result<(), String> {
        let entries = self.entries.as_ref().map_err(|e| e.clone())?;
        if call.candidates.is_empty() || call.grids.len() != call.candidates.len() {
            return Err("no config to launch".to_string());
        }
        if let Some(bad) = call
            .candidates
            .iter()
            .find(|&&c| c as usize >= entries.len())
        {
            return Err(format!(
                "config index {bad} out of range ({} variants)",
                entries.len()
            ));
        }
        // Variants whose TMA copies cannot take these tensors (a misaligned
        // view, an empty dim), or whose multicast pairs an odd grid would
        // split, leave the candidates (the usual call, all admitted,
        // allocates nothing here).
        let admits = |i: &usize| {
            let variant = &entries[call.candidates[*i] as usize].variant;
            tensor_map::admits(variant, call.args) && fits_clusters(variant, call.grids[*i].x)
        };
        if !(0..call.candidates.len()).all(|i| admits(&i)) {
            let admitted: Vec<usize> = (0..call.candidates.len()).filter(admits).collect();
            if admitted.is_empty() {
                return Err(format!(
                    "{}: no compiled config accepts these inputs (each copies tiles with TMA, \
                     which needs 16-byte aligned tensors with rows of a multiple of 16 bytes, \
                     or runs in pairs of programs, which needs an even grid)",
                    self.name
                ));
            }
            let candidates: Vec<u32> = admitted.iter().map(|&i| call.candidates[i]).collect();
            let grids: Vec<LaunchGrid> = admitted.iter().map(|&i| call.grids[i]).collect();
            // Decided by these candidates, not by the call key: a call of
            // that key with aligned tensors admits them all.
            return self.launch(&Call {
                candidates: &candidates,
                grids: &grids,
                call_key: &[],
                ..*call
            });
        }
        let candidate_configs = call
            .candidates
            .iter()
            .map(|&c| entries[c as usize].config.as_str());
        let pinned = self
            .pin
            .position(candidate_configs)
            .map_err(|e| format!("{}: {e}", self.name))?;
        let ordinal = usize::try_from(call.device)
            .map_err(|_| format!("invalid device index {}", call.device))?;
        let device = Device::open(ordinal).map_err(|e| e.to_string())?;
        // SAFETY: the framework's stream of this device, alive during the call.
        let stream = unsafe { Stream::from_raw(&device, call.stream.cast()) };
        let pick = match pinned {
            Some(at) => at.position,
            None => self.decide(entries, &device, &stream, call, ordinal)?,
        };
        let resolved = resolve(entries, call, pick);
        if let Some(at) = pinned {
            self.decided
                .insert(call, ordinal, at.generation, pick, resolved);
        }
        self.launch_resolved(entries, &device, &stream, resolved, call.args)
    }

    /// Repeats the launch decided for `call_key` on `device` (under the
    /// current pin, if any) without the candidates: `Ok(false)` where there
    /// is none (a new key or pin, inputs the decided variant's tensor maps
    /// cannot take), and the caller then computes the candidates and calls
    /// [`Op::launch`].
    pub fn launch_known(
        &self,
        device: i32,
        stream: *mut c_void,
        call_key: &[i64],
        args: &[KernelArg],
    ) -> Result<bool, String> {
        let (Ok(entries), Ok(ordinal)) = (self.entries.as_ref(), usize::try_from(device)) else {
            return Ok(false); // the full launch says what is wrong
        };
        let Some(resolved) = self
            .decided
            .resolved(call_key, ordinal, self.pin.generation())
        else {
            return Ok(false);
        };
        let admits = |i: usize| tensor_map::admits(&entries[i].variant, args);
        if !admits(resolved.index)
            || !resolved.sibling.is_none_or(admits)
            || !fits_clusters(&entries[resolved.index].variant, resolved.grid.x)
        {
            return Ok(false);
        }
        let device = Device::open(ordinal).map_err(|e| e.to_string())?;
        // SAFETY: the framework's stream of this device, alive during the call.
        let stream = unsafe { Stream::from_raw(&device, stream.cast()) };
        self.launch_resolved(entries, &device, &stream, resolved, args)?;
        Ok(true)
    }

    /// The candidate (position in `call.candidates`) to launch: decided
    /// before, the only one, or the autotuner's pick; remembered.
    fn decide(
        &self,
        entries: &[Entry],
        device: &Arc<Device>,
        stream: &Stream,
        call: &Call,
        ordinal: usize,
    ) -> Result<usize, String> {
        if let Some(pick) = self.decided.pick(call, ordinal) {
            return Ok(pick);
        }
        let pick = if call.candidates.len() == 1 {
            0
        } else {
            self.choose(entries, device, stream, call)?
        };
        self.decided
            .insert(call, ordinal, 0, pick, resolve(entries, call, pick));
        Ok(pick)
    }

    fn launch_resolved(
        &self,
        entries: &[Entry],
        device: &Arc<Device>,
        stream: &Stream,
        resolved: Resolved,
        args: &[KernelArg],
    ) -> Result<(), String> {
        let index = resolved.index;
        self.launch_one(entries, device, stream, resolved, args)
            .map_err(|e| format!("variant `{}`: {e}", entries[index].config))?;
        self.last_launched.store(index, Ordering::Relaxed);
        Ok(())
    }

    /// The candidate (position in `call.candidates`) the autotuner picks.
    fn choose(
        &self,
        entries: &[Entry],
        device: &Arc<Device>,
        stream: &Stream,
        call: &Call,
    ) -> Result<usize, String> {
        let (key, configs) = self.tune_key(entries, device.name(), call);
        // Called only when the key is not decided yet: tuning waits on events,
        // which a stream being captured into a CUDA graph forbids.
        let mut make_timer = || -> opgen_runtime::Result<Box<dyn KernelTimer + '_>> {
            if stream.is_capturing()? {
                return Err(opgen_runtime::RuntimeError::Autotune {
                    key: key.to_string(),
                    reason: "these shapes have no tuned config yet and the stream is being captured \
                             into a CUDA graph, where nothing may wait: run the op once on these \
                             shapes before capturing, or embed a pre-tuned table (triton-opgen --tuned)"
                        .to_string(),
                });
            }
            Ok(Box::new(EventTimer::new(stream)?))
        };
        self.chooser
            .choose(&key, &configs, &mut make_timer, &mut |pos| {
                // The tuner names the config of a failure itself.
                let resolved = resolve(entries, call, pos);
                self.launch_one(entries, device, stream, resolved, call.args)
            })
            .map_err(|e| e.to_string())
    }

    /// The autotune key of a call on a device of this name, and its
    /// candidates' configs: each config with the code it runs names the
    /// key's code, so that a rebuild whose code changed tunes again.
    fn tune_key(
        &self,
        entries: &[Entry],
        device_name: &str,
        call: &Call,
    ) -> (TuneKey, Vec<String>) {
        let candidates = call.candidates.iter().map(|&c| &entries[c as usize]);
        let configs: Vec<String> = candidates.clone().map(|e| e.config.clone()).collect();
        let images: Vec<String> = candidates
            .map(|e| format!("{}@{}", e.config, e.digest))
            .collect();
        let key = self
            .chooser
            .key(call.dims, call.dtype_key, device_name, &configs)
            .with_code(&images);
        (key, configs)
    }

    /// Launches a resolved call: its variant, or a split-K variant's tail
    /// beside its unsplit sibling's full waves.
    fn launch_one(
        &self,
        entries: &[Entry],
        device: &Arc<Device>,
        stream: &Stream,
        Resolved {
            index,
            grid,
            sibling,
        }: Resolved,
        args: &[KernelArg],
    ) -> opgen_runtime::Result<()> {
        if let Some(unsplit) = sibling {
            return self.launch_split(entries, device, stream, (index, unsplit), grid, args);
        }
        let kernel = self.kernel(entries, device, index)?;
        let x = if grid.persistent {
            let resident = self.resident_programs(device, index, &kernel)?;
            grid.x.min(resident).max(1)
        } else {
            grid.x
        };
        kernel.launch(stream, Grid(x, grid.y, grid.z), args)
    }

    /// Split variant `index` and its unsplit sibling share the tiles of the
    /// launch (the runtime's `split_plan`).
    fn launch_split(
        &self,
        entries: &[Entry],
        device: &Arc<Device>,
        stream: &Stream,
        (index, unsplit): (usize, usize),
        grid: LaunchGrid,
        args: &[KernelArg],
    ) -> opgen_runtime::Result<()> {
        let kernel = self.kernel(entries, device, index)?;
        let whole = self.kernel(entries, device, unsplit)?;
        let whole_slots = self.resident_programs(device, unsplit, &whole)?;
        let split_slots = self
            .split_resident
            .get_or_make(device.ordinal(), index, || {
                Ok::<_, opgen_runtime::RuntimeError>(
                    kernel.resident_clusters()? * kernel.variant().cluster_splits,
                )
            })?;
        let full = Grid(grid.x, grid.y, grid.z);
        let Ok(plan) = split_plan(
            kernel.variant().cluster_splits,
            full,
            whole_slots,
            split_slots,
        ) else {
            return kernel.launch(stream, full, args); // which says what is wrong
        };
        if plan.whole_tiles > 0 {
            whole.launch(stream, Grid(plan.whole_tiles, grid.y, grid.z), args)?;
        }
        if plan.split_tiles > 0 {
            let tail = Grid(plan.split_tiles, grid.y, grid.z);
            kernel.launch_split_tail(stream, tail, plan.whole_tiles, args)?;
        }
        Ok(())
    }

    /// Programs of variant `index` (loaded as `kernel`) the device runs at
    /// once, `SMs x blocks per SM`: asked of the driver once per device.
    fn resident_programs(
        &self,
        device: &Arc<Device>,
        index: usize,
        kernel: &Kernel,
    ) -> opgen_runtime::Result<u32> {
        self.resident
            .get_or_make(device.ordinal(), index, || kernel.persistent_grid(u32::MAX))
    }

    fn kernel(
        &self,
        entries: &[Entry],
        device: &Arc<Device>,
        index: usize,
    ) -> opgen_runtime::Result<Arc<Kernel>> {
        self.kernels.get_or_make(device.ordinal(), index, || {
            let entry = &entries[index];
            let label = format!("{} [{}]", self.name, entry.config);
            Kernel::from_image(device, &entry.image, &label, entry.variant.clone()).map(Arc::new)
        })
    }
}

/// What launching the call's candidate at `pos` means: its variant and
/// grid, and for a split-K variant whose unsplit sibling the call admits
/// too, that sibling (it runs the full waves, the split variant the tail).
fn resolve(entries: &[Entry], call: &Call, pos: usize) -> Resolved {
    let index = call.candidates[pos] as usize;
    let grid = call.grids[pos];
    let sibling = entries[index]
        .unsplit
        .filter(|&u| !grid.persistent && call.candidates.contains(&(u as u32)));
    Resolved {
        index,
        grid,
        sibling,
    }
}

fn read_entry(i: usize, v: &VariantRef) -> Result<Entry, String> {
    let mut variant: Variant = serde_json::from_str(v.json)
        .map_err(|e| format!("variant {i} of the op has an invalid description: {e}"))?;
    if !v.kernel.is_empty() {
        variant.kernel = v.kernel.to_string();
    }
    let bytes = v.image;
    let actual = opgen_runtime::image_digest(bytes);
    if let Some(expected) = &variant.image_digest {
        if &actual != expected {
            return Err(format!(
                "the PTX of variant {i} ({}) is not the one triton-opgen compiled (digest {actual}, \
                 expected {expected}): the build folder was edited or damaged; generate it again",
                v.config
            ));
        }
    }
    let image = if bytes.starts_with(b"\x7fELF") {
        ModuleImage::Cubin(bytes.to_vec())
    } else {
        let text = String::from_utf8(bytes.to_vec())
            .map_err(|_| format!("variant {i}: the image is neither PTX text nor a cubin"))?;
        ModuleImage::Ptx(text.trim_end_matches('\0').to_string())
    };
    Ok(Entry {
        variant,
        image,
        digest: actual,
        config: v.config.to_string(),
        unsplit: None,
    })
}

/// Links each split-K variant to its unsplit sibling: the same kernel,
/// macros and config (warps, stages) but `SPLIT_K` 1.
fn with_unsplit_siblings(mut entries: Vec<Entry>) -> Vec<Entry> {
    let unsplit_of = |split: &Entry| {
        let mut macros = split.variant.macros.clone();
        macros.insert(SPLIT_K_MACRO.to_string(), "1".to_string());
        let config: Vec<String> = split
            .config
            .split_whitespace()
            .map(|item| match item.split_once('=') {
                Some((SPLIT_K_MACRO, _)) => format!("{SPLIT_K_MACRO}=1"),
                _ => item.to_string(),
            })
            .collect();
        entries.iter().position(|e| {
            e.variant.cluster_splits <= 1
                && e.variant.kernel == split.variant.kernel
                && e.variant.num_warps == split.variant.num_warps
                && e.variant.macros == macros
                && e.config
                    .split_whitespace()
                    .eq(config.iter().map(String::as_str))
        })
    };
    let siblings: Vec<Option<usize>> = entries
        .iter()
        .map(|e| {
            (e.variant.cluster_splits > 1)
                .then(|| unsplit_of(e))
                .flatten()
        })
        .collect();
    for (entry, sibling) in entries.iter_mut().zip(siblings) {
        entry.unsplit = sibling;
    }
    entries
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An op of one variant whose description records `digest` for `image`.
    fn op_with_digest(image: &[u8], digest: &str) -> Op {
        let json = format!(
            "{{\"file\":\"x\",\"kernel\":\"add\",\"num_warps\":4,\"params\":[],\"image_digest\":\"{digest}\"}}"
        );
        let raw = [VariantRef {
            kernel: "add",
            config: "SIZE=128 num_warps=4",
            json: &json,
            image,
        }];
        Op::new("t::add", &raw)
    }

    #[test]
    fn an_image_that_does_not_match_its_digest_is_refused_naming_the_variant() {
        let compiled = b".version 8.0\n.visible .entry add()\n";
        let edited = b".version 8.0\n.visible .entry add_()\n";
        let digest = opgen_runtime::image_digest(compiled);
        let call = call(&[0], &[], "");
        let err = op_with_digest(edited, &digest).launch(&call).unwrap_err();
        assert!(
            err.contains("variant 0 (SIZE=128 num_warps=4) is not the one triton-opgen compiled")
                && err.contains("generate it again"),
            "{err}"
        );
        // The image it was compiled to passes this check (and fails later
        // for want of a GPU or of a grid, not of its digest).
        let err = op_with_digest(compiled, &digest).launch(&call).unwrap_err();
        assert!(!err.contains("triton-opgen compiled"), "{err}");
    }

    #[test]
    fn a_split_variant_finds_its_unsplit_sibling_of_the_same_dtype_and_stages() {
        let variant = |config: &str, ty: &str, splits: u32| {
            let split = config
                .split_whitespace()
                .find(|i| i.starts_with("SPLIT_K="))
                .unwrap();
            let json = format!(
                "{{\"file\":\"x\",\"kernel\":\"dot\",\"num_warps\":4,\"params\":[],\
                 \"cluster_splits\":{splits},\"macros\":{{\"TM\":\"64\",\"TYPE\":\"{ty}\",\
                 \"SPLIT_K\":\"{}\"}}}}",
                &split["SPLIT_K=".len()..]
            );
            (config.to_string(), json)
        };
        let raw = [
            variant("TM=64 SPLIT_K=1 num_warps=4 num_stages=3", "half", 1),
            variant("TM=64 SPLIT_K=2 num_warps=4 num_stages=3", "half", 2),
            variant("TM=64 SPLIT_K=2 num_warps=4 num_stages=8", "half", 2),
            variant("TM=64 SPLIT_K=1 num_warps=4 num_stages=3", "float", 1),
            variant("TM=64 SPLIT_K=2 num_warps=4 num_stages=3", "float", 2),
        ];
        let entries: Vec<Entry> = raw
            .iter()
            .enumerate()
            .map(|(i, (config, json))| {
                let v = VariantRef {
                    kernel: "",
                    config,
                    json,
                    image: b".version 8.0\n",
                };
                read_entry(i, &v).unwrap()
            })
            .collect();
        let linked: Vec<Option<usize>> = with_unsplit_siblings(entries)
            .iter()
            .map(|e| e.unsplit)
            .collect();
        assert_eq!(linked, [None, Some(0), None, None, Some(3)]);
    }

    #[test]
    fn the_tuning_key_names_the_code_of_the_candidates() {
        // Two builds of one op: the same config names, one image edited.
        let build = |second: &'static [u8]| {
            let json = r#"{"file":"x","kernel":"add","num_warps":4,"params":[]}"#;
            let raw = [
                VariantRef {
                    kernel: "add",
                    config: "SIZE=128",
                    json,
                    image: b".version 8.0\n",
                },
                VariantRef {
                    kernel: "add",
                    config: "SIZE=256",
                    json,
                    image: second,
                },
            ];
            Op::new("t::add", &raw)
        };
        let key = |op: &Op, candidates: &[u32]| {
            let entries = op.entries.as_ref().unwrap();
            let (key, configs) =
                op.tune_key(entries, "H100", &call(candidates, &[1024], "T=float32"));
            (key.to_string(), configs)
        };
        let old = build(b".version 8.0\n");
        let new = build(b".version 8.0\n// edited\n");
        let (old_key, configs) = key(&old, &[0, 1]);
        assert_eq!(configs, ["SIZE=128", "SIZE=256"]);
        assert!(
            old_key.starts_with("t::add|[1024]|T=float32|H100|cands=2:"),
            "{old_key}"
        );
        assert!(old_key.contains("|code="), "{old_key}");
        assert_eq!(key(&build(b".version 8.0\n"), &[0, 1]).0, old_key);
        assert_ne!(key(&new, &[0, 1]).0, old_key);
        // A call whose candidates exclude the edited variant keeps its key.
        assert_eq!(key(&new, &[0]).0, key(&old, &[0]).0);
    }

    fn call<'a>(candidates: &'a [u32], dims: &'a [i64], dtype: &'a str) -> Call<'a> {
        Call::bare(candidates, dims, dtype, &[])
    }

    /// A dot op of two variants: `(config, manifest json)` of the one under
    /// test, then a plain one (`TMA=0`).
    fn dot_op((config, json): (&str, &str)) -> Op {
        let plain = r#"{"file":"x","kernel":"dot","num_warps":4,"params":[]}"#;
        let image = b".version 8.0\n";
        let raw = [
            VariantRef {
                kernel: "dot",
                config,
                json,
                image,
            },
            VariantRef {
                kernel: "dot",
                config: "TMA=0 num_warps=4",
                json: plain,
                image,
            },
        ];
        Op::new("t::dot", &raw)
    }

    #[test]
    fn multicast_pairs_leave_the_candidates_of_an_odd_grid() {
        let pair = r#"{"file":"x","kernel":"dot","num_warps":4,"params":[],"cluster_x":2}"#;
        let op = dot_op(("TMA=2 num_warps=4", pair));
        let dims = [64, 64, 64];
        let launch = |candidates: &[u32], x: u32| {
            let grid = LaunchGrid {
                x,
                y: 1,
                z: 1,
                persistent: false,
            };
            let grids = vec![grid; candidates.len()];
            op.launch(&Call {
                candidates,
                grids: &grids,
                ..call(candidates, &dims, "T=float16")
            })
            .unwrap_err()
        };
        // Alone on 3 programs: refused, saying why.
        let err = launch(&[0], 3);
        assert!(
            err.contains("pairs of programs") && err.contains("even grid"),
            "{err}"
        );
        // Beside a plain variant, or on 4 programs, the call goes on (and
        // fails later, for want of a GPU or of a real kernel).
        assert!(!launch(&[0, 1], 3).contains("pairs"));
        assert!(!launch(&[0], 4).contains("pairs"));
    }

    #[test]
    fn variants_whose_tensor_maps_cannot_take_the_inputs_leave_the_candidates() {
        // b: f16[K, N] with K, N, ldb the arguments 1, 2, 3.
        let map = r#"{"base":0,"rows":1,"cols":2,"row_stride":3,"elem_bytes":2,"swizzle_bytes":128,
            "dims":[{"extent":{"cols_over":1},"stride":{"elements":1},"box_size":64},
                    {"extent":{"rows_over":1},"stride":{"rows":1},"box_size":64}]}"#;
        let tma = format!(
            r#"{{"file":"x","kernel":"dot","num_warps":4,"params":[],"tensor_maps":[{map}]}}"#
        );
        let op = dot_op(("TMA=1 num_warps=4", &tma));
        let grid = LaunchGrid {
            x: 1,
            y: 1,
            z: 1,
            persistent: false,
        };
        let with = |base: u64| {
            vec![
                KernelArg::Ptr(base),
                KernelArg::I32(64),
                KernelArg::I32(64),
                KernelArg::I32(64),
            ]
        };
        let (misaligned, aligned) = (with(0x7008), with(0x7000));
        let dims = [64, 64, 64];
        let launch = |candidates: &[u32], args: &[KernelArg]| {
            let grids = vec![grid; candidates.len()];
            op.launch(&Call {
                candidates,
                grids: &grids,
                args,
                ..call(candidates, &dims, "T=float16")
            })
            .unwrap_err()
        };
        // A base 8 bytes off 16: the TMA variant alone cannot run.
        let err = launch(&[0], &misaligned);
        assert!(
            err.contains("TMA") && err.contains("16-byte aligned"),
            "{err}"
        );
        // Beside the plain variant the call goes on (and fails later, for
        // want of a GPU or of a real kernel, not for TMA); aligned inputs
        // admit the TMA variant.
        assert!(!launch(&[0, 1], &misaligned).contains("TMA"));
        assert!(!launch(&[0], &aligned).contains("TMA"));
    }
}
