//! A loaded kernel variant: its function handle, the manifest entry it came
//! from, its resource use, and launching it.

use crate::args::{check_args, KernelArg, PackedArgs};
use crate::device::Device;
use crate::driver::CallContext;
use crate::error::{Result, RuntimeError};
use crate::manifest::{Manifest, Variant};
use crate::module::{Module, ModuleImage};
use crate::stream::Stream;
use crate::tensor_map::EncodedTensorMap;
use cudarc::driver::{result, sys};
use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// Dynamic shared memory a kernel may use without opting in, bytes.
pub const DEFAULT_DYNAMIC_SHARED_LIMIT: u32 = 48 * 1024;

/// Resource use of a loaded kernel (`cuFuncGetAttribute`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelAttributes {
    pub registers_per_thread: u32,
    pub static_shared_bytes: u32,
    /// The most threads per block this kernel can be launched with.
    pub max_threads_per_block: u32,
    /// Local memory (register spills, stack) per thread, bytes.
    pub local_bytes_per_thread: u32,
    /// PTX ISA and SASS versions, e.g. 80 and 90.
    pub ptx_version: u32,
    pub binary_version: u32,
}

/// The grid of a launch: programs along x, y, z.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid(pub u32, pub u32, pub u32);

/// The grid of a variant with `cluster_splits` programs per grid point
/// along z (split-K: the kernel's PTX declares clusters of that many): the
/// op's grid, whose z must be 1, with z set to the splits.
pub fn clustered_grid(cluster_splits: u32, grid: Grid) -> std::result::Result<Grid, String> {
    let splits = cluster_splits.max(1);
    if splits == 1 {
        return Ok(grid);
    }
    if grid.2 != 1 {
        return Err(format!(
            "grid z = {}: a split-K variant ({splits} programs per tile along z) needs z = 1",
            grid.2
        ));
    }
    Ok(Grid(grid.0, grid.1, splits))
}

/// Whether a launch of `grid_x` programs along x fills whole clusters of
/// `variant` (its `cluster_x`: TMA multicast pairs).
pub fn fits_clusters(variant: &Variant, grid_x: u32) -> bool {
    grid_x % variant.cluster_x.max(1) == 0
}

impl From<u32> for Grid {
    fn from(x: u32) -> Grid {
        Grid(x, 1, 1)
    }
}
impl From<(u32, u32)> for Grid {
    fn from((x, y): (u32, u32)) -> Grid {
        Grid(x, y, 1)
    }
}
impl From<(u32, u32, u32)> for Grid {
    fn from((x, y, z): (u32, u32, u32)) -> Grid {
        Grid(x, y, z)
    }
}

/// A persistent variant's launch of `grid`: at most `resident` programs
/// along x, and the tile count they loop below (the asked x, as the
/// kernel's last `i32` argument); `None` past `i32::MAX` tiles.
pub fn persistent_launch(grid: Grid, resident: u32) -> Option<(Grid, i32)> {
    let tiles = i32::try_from(grid.0).ok()?;
    Some((Grid(grid.0.min(resident.max(1)), grid.1, grid.2), tiles))
}

pub struct Kernel {
    device: Arc<Device>,
    _module: Arc<Module>,
    function: sys::CUfunction,
    variant: Variant,
    attributes: KernelAttributes,
    /// The dynamic shared memory size already opted in to.
    shared_opt_in: AtomicU32,
    /// Programs the device holds at once (a persistent variant's grid
    /// ceiling), asked of the driver on the first launch.
    resident: std::sync::OnceLock<u32>,
}

// SAFETY: function handles may be used from any thread; the module they live
// in is kept alive by `_module`.
unsafe impl Send for Kernel {}
unsafe impl Sync for Kernel {}

impl Kernel {
    /// Loads a manifest variant (its file, relative to the manifest) on
    /// `device`, reusing an already loaded module of the same image.
    pub fn load(device: &Arc<Device>, manifest: &Manifest, variant: &Variant) -> Result<Kernel> {
        let path = manifest.file_path(variant);
        let image = ModuleImage::from_file(&path)?;
        Kernel::from_image(device, &image, &path.display().to_string(), variant.clone())
    }

    /// Loads `variant.kernel` from an image already in memory; `label` names
    /// the image in errors.
    pub fn from_image(
        device: &Arc<Device>,
        image: &ModuleImage,
        label: &str,
        variant: Variant,
    ) -> Result<Kernel> {
        let module = device.load_module(image, label)?;
        let function = module.function(&variant.kernel)?;
        let attributes = read_attributes(function, &variant.kernel)?;
        let kernel = Kernel {
            device: device.clone(),
            _module: module,
            function,
            variant,
            attributes,
            shared_opt_in: AtomicU32::new(DEFAULT_DYNAMIC_SHARED_LIMIT),
            resident: std::sync::OnceLock::new(),
        };
        kernel.check_block(kernel.variant.shared_bytes)?;
        Ok(kernel)
    }

    pub fn name(&self) -> &str {
        &self.variant.kernel
    }

    pub fn variant(&self) -> &Variant {
        &self.variant
    }

    pub fn attributes(&self) -> &KernelAttributes {
        &self.attributes
    }

    pub fn device(&self) -> &Arc<Device> {
        &self.device
    }

    pub fn raw(&self) -> sys::CUfunction {
        self.function
    }

    /// Threads per block: `(num_warps + producer_warps) * 32`.
    pub fn block_threads(&self) -> u32 {
        (self.variant.num_warps + self.variant.producer_warps) * 32
    }

    /// Launches with the manifest's dynamic shared memory size.
    pub fn launch(&self, stream: &Stream, grid: impl Into<Grid>, args: &[KernelArg]) -> Result<()> {
        self.launch_with_shared(stream, grid, self.variant.shared_bytes, args)
    }

    /// Launches with `dynamic_shared_bytes` of dynamic shared memory,
    /// opting in above 48 KiB.
    pub fn launch_with_shared(
        &self,
        stream: &Stream,
        grid: impl Into<Grid>,
        dynamic_shared_bytes: u32,
        args: &[KernelArg],
    ) -> Result<()> {
        self.launch_tiles(stream, grid.into(), 0, dynamic_shared_bytes, args)
    }

    /// Launches a split-K variant over the tiles `first_tile ..` (its
    /// `program_id(0)` offset by `first_tile`, its added `split_tile`
    /// argument), every one split: the tail of a launch whose first tiles
    /// the unsplit variant ran ([`crate::split_launch`]).
    pub fn launch_split_tail(
        &self,
        stream: &Stream,
        grid: impl Into<Grid>,
        first_tile: u32,
        args: &[KernelArg],
    ) -> Result<()> {
        if self.variant.cluster_splits <= 1 {
            return Err(self.invalid("not a split-K variant".to_string()));
        }
        self.launch_tiles(
            stream,
            grid.into(),
            first_tile,
            self.variant.shared_bytes,
            args,
        )
    }

    fn launch_tiles(
        &self,
        stream: &Stream,
        grid: Grid,
        first_tile: u32,
        dynamic_shared_bytes: u32,
        args: &[KernelArg],
    ) -> Result<()> {
        let grid = self.clustered(grid)?;
        // A split-K variant's last parameter: the tile of program 0.
        let with_tile: Vec<KernelArg>;
        let args = if self.variant.cluster_splits > 1 {
            let first = i32::try_from(first_tile)
                .map_err(|_| self.invalid(format!("first tile {first_tile}")))?;
            with_tile = args
                .iter()
                .copied()
                .chain([KernelArg::I32(first)])
                .collect();
            &with_tile[..]
        } else {
            args
        };
        check_args(&self.variant, args)?;
        self.check_grid(grid)?;
        self.check_block(dynamic_shared_bytes)?;
        if stream.device().ordinal() != self.device.ordinal() {
            return Err(self.invalid(format!(
                "stream of device {} used for a kernel loaded on device {}",
                stream.device().ordinal(),
                self.device.ordinal()
            )));
        }
        self.device.bind()?;
        self.opt_in_shared(dynamic_shared_bytes)?;
        let mut maps = crate::tensor_map::encode_all(&self.variant, args)?;
        let mut packed = PackedArgs::new(args);
        let mut pointers = packed.pointers();
        pointers.extend(
            maps.iter_mut()
                .map(|m| (m as *mut EncodedTensorMap).cast::<c_void>()),
        );
        // A persistent variant: as many programs as the device holds at
        // once, each looping over the tiles below its last argument.
        let (grid, mut tiles) = if self.variant.persistent {
            persistent_launch(grid, self.resident_programs()?)
                .ok_or_else(|| self.invalid(format!("{} tiles along x", grid.0)))?
        } else {
            (grid, 0)
        };
        if self.variant.persistent {
            pointers.push((&mut tiles as *mut i32).cast::<c_void>());
        }
        let block = self.block_threads();
        // SAFETY: arguments were checked against the kernel's parameters and
        // packed in slots that outlive the call (the driver copies them).
        unsafe {
            result::launch_kernel(
                self.function,
                (grid.0, grid.1, grid.2),
                (block, 1, 1),
                dynamic_shared_bytes,
                stream.raw(),
                &mut pointers,
            )
        }
        .call("cuLaunchKernel", || {
            format!(
                "kernel `{}`, grid ({}, {}, {}), block {block}, {dynamic_shared_bytes} B dynamic shared",
                self.variant.kernel, grid.0, grid.1, grid.2
            )
        })
    }

    /// Blocks of this kernel that fit on one SM at once
    /// (`cuOccupancyMaxActiveBlocksPerMultiprocessor`).
    pub fn max_active_blocks_per_sm(&self) -> Result<u32> {
        self.device.bind()?;
        self.opt_in_shared(self.variant.shared_bytes)?;
        // SAFETY: function is live.
        let blocks = unsafe {
            result::occupancy::max_active_block_per_multiprocessor(
                self.function,
                self.block_threads() as i32,
                self.variant.shared_bytes as usize,
            )
        }
        .call("cuOccupancyMaxActiveBlocksPerMultiprocessor", || {
            format!("kernel `{}`", self.variant.kernel)
        })?;
        Ok(blocks.max(0) as u32)
    }

    /// Clusters of this split-K variant the device runs at once
    /// (`cuOccupancyMaxActiveClusters`: a cluster must fit in one GPC, so
    /// this can be less than the SMs' blocks over the cluster size, which is
    /// the answer where the driver has none).
    pub fn resident_clusters(&self) -> Result<u32> {
        self.clusters_at_once(1, self.variant.cluster_splits.max(1))
    }

    /// Clusters of `x` programs along x and `z` along z the device runs at
    /// once (see [`Kernel::resident_clusters`]).
    fn clusters_at_once(&self, x: u32, z: u32) -> Result<u32> {
        self.device.bind()?;
        self.opt_in_shared(self.variant.shared_bytes)?;
        let config = sys::CUlaunchConfig {
            gridDimX: x,
            gridDimY: 1,
            gridDimZ: z,
            blockDimX: self.block_threads(),
            blockDimY: 1,
            blockDimZ: 1,
            sharedMemBytes: self.variant.shared_bytes,
            hStream: std::ptr::null_mut(),
            attrs: std::ptr::null_mut(),
            numAttrs: 0,
        };
        let mut clusters: std::ffi::c_int = 0;
        // SAFETY: function is live; config outlives the call.
        let asked =
            unsafe { sys::cuOccupancyMaxActiveClusters(&mut clusters, self.function, &config) };
        if asked == sys::CUresult::CUDA_SUCCESS && clusters > 0 {
            return Ok(clusters as u32);
        }
        Ok(self.max_active_blocks_per_sm()? * self.device.properties().sm_count / (x * z))
    }

    /// Programs of this kernel the device holds at once (asked once).
    fn resident_programs(&self) -> Result<u32> {
        if let Some(&n) = self.resident.get() {
            return Ok(n);
        }
        let n = self.persistent_grid(u32::MAX)?;
        Ok(*self.resident.get_or_init(|| n))
    }

    /// Grid for a persistent kernel (seed 002): `NUM_SM x occupancy`, at most
    /// `work_items` programs and at least one. A variant in clusters along
    /// x (TMA multicast pairs) counts whole clusters that fit at once: a
    /// cluster's programs share one GPC, so `SMs x blocks per SM` may not
    /// all be usable, and a program past them would wait for a whole tile
    /// loop to finish.
    pub fn persistent_grid(&self, work_items: u32) -> Result<u32> {
        let programs = match self.variant.cluster_x {
            0 | 1 => {
                let per_sm = self.max_active_blocks_per_sm()?.max(1);
                self.device.properties().sm_count.saturating_mul(per_sm)
            }
            pair => self.clusters_at_once(pair, 1)?.max(1) * pair,
        };
        Ok(programs.min(work_items).max(1))
    }

    fn opt_in_shared(&self, bytes: u32) -> Result<()> {
        if bytes <= self.shared_opt_in.load(Ordering::Acquire) {
            return Ok(());
        }
        // SAFETY: function is live; the size was checked against the device.
        unsafe {
            result::function::set_function_attribute(
                self.function,
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                bytes as i32,
            )
        }
        .call("cuFuncSetAttribute", || {
            format!(
                "kernel `{}`, MAX_DYNAMIC_SHARED_SIZE_BYTES = {bytes}",
                self.variant.kernel
            )
        })?;
        self.shared_opt_in.fetch_max(bytes, Ordering::AcqRel);
        Ok(())
    }

    fn check_block(&self, dynamic_shared_bytes: u32) -> Result<()> {
        let threads = self.block_threads();
        if threads > self.attributes.max_threads_per_block {
            return Err(self.invalid(format!(
                "{} warps = {threads} threads per block, the kernel allows at most {}",
                self.variant.num_warps + self.variant.producer_warps,
                self.attributes.max_threads_per_block
            )));
        }
        let limit = self.device.properties().max_shared_per_block_optin;
        let total = dynamic_shared_bytes as u64 + self.attributes.static_shared_bytes as u64;
        if total > limit as u64 {
            return Err(self.invalid(format!(
                "{dynamic_shared_bytes} B dynamic + {} B static shared memory exceeds the device's {limit} B per block",
                self.attributes.static_shared_bytes
            )));
        }
        Ok(())
    }

    /// The grid the driver gets: see [`clustered_grid`].
    fn clustered(&self, grid: Grid) -> Result<Grid> {
        if !fits_clusters(&self.variant, grid.0) {
            return Err(self.invalid(format!(
                "grid x = {}: a TMA multicast variant runs in pairs of programs along x, \
                 which needs an even grid x",
                grid.0
            )));
        }
        clustered_grid(self.variant.cluster_splits, grid).map_err(|reason| self.invalid(reason))
    }

    fn check_grid(&self, grid: Grid) -> Result<()> {
        let max = self.device.properties().max_grid;
        let dims = [
            (grid.0, max.0, 'x'),
            (grid.1, max.1, 'y'),
            (grid.2, max.2, 'z'),
        ];
        for (n, limit, axis) in dims {
            if n == 0 || n > limit {
                return Err(self.invalid(format!("grid {axis} = {n}, must be 1 to {limit}")));
            }
        }
        Ok(())
    }

    fn invalid(&self, reason: String) -> RuntimeError {
        RuntimeError::InvalidLaunch {
            kernel: self.variant.kernel.clone(),
            reason,
        }
    }
}

fn read_attributes(function: sys::CUfunction, kernel: &str) -> Result<KernelAttributes> {
    use sys::CUfunction_attribute::*;
    let get = |attr: sys::CUfunction_attribute| -> Result<u32> {
        // SAFETY: function is live.
        let v = unsafe { result::function::get_function_attribute(function, attr) }
            .call("cuFuncGetAttribute", || {
                format!("{attr:?} of kernel `{kernel}`")
            })?;
        Ok(v.max(0) as u32)
    };
    Ok(KernelAttributes {
        registers_per_thread: get(CU_FUNC_ATTRIBUTE_NUM_REGS)?,
        static_shared_bytes: get(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
        max_threads_per_block: get(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
        local_bytes_per_thread: get(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?,
        ptx_version: get(CU_FUNC_ATTRIBUTE_PTX_VERSION)?,
        binary_version: get(CU_FUNC_ATTRIBUTE_BINARY_VERSION)?,
    })
}
