//! All variants of one kernel from a manifest, loaded on one device, with
//! autotuning over them: what a generated op holds.

use crate::autotune::{Autotuner, Choice, TuneKey};
use crate::device::Device;
use crate::error::{Result, RuntimeError};
use crate::kernel::Kernel;
use crate::manifest::{Manifest, Variant};
use crate::module::ModuleImage;
use crate::stream::Stream;
use crate::timer::EventTimer;
use std::sync::Arc;

pub struct KernelSet {
    kernels: Vec<Kernel>,
    configs: Vec<String>,
}

impl KernelSet {
    /// Loads every variant of `kernel` from the manifest's files.
    pub fn load(device: &Arc<Device>, manifest: &Manifest, kernel: &str) -> Result<KernelSet> {
        KernelSet::load_with(device, manifest, kernel, |variant| {
            ModuleImage::from_file(&manifest.file_path(variant))
        })
    }

    /// Loads every variant of `kernel`, taking each image from `image_of`
    /// (a plugin embeds its PTX instead of reading files).
    pub fn load_with(
        device: &Arc<Device>,
        manifest: &Manifest,
        kernel: &str,
        mut image_of: impl FnMut(&Variant) -> Result<ModuleImage>,
    ) -> Result<KernelSet> {
        let mut kernels = Vec::new();
        let mut configs = Vec::new();
        for variant in manifest.variants_of(kernel) {
            let image = image_of(variant)?;
            kernels.push(Kernel::from_image(
                device,
                &image,
                &variant.file,
                variant.clone(),
            )?);
            configs.push(variant.config_id(&manifest.tuning_macros));
        }
        if kernels.is_empty() {
            return Err(RuntimeError::Manifest {
                path: manifest.dir.join("manifest.json"),
                message: format!("no variant of kernel `{kernel}`"),
            });
        }
        Ok(KernelSet { kernels, configs })
    }

    pub fn kernels(&self) -> &[Kernel] {
        &self.kernels
    }

    /// Config ids, in the order of [`KernelSet::kernels`].
    pub fn configs(&self) -> &[String] {
        &self.configs
    }

    /// The variant to use for `key` (built over [`KernelSet::configs`]):
    /// cached, or benchmarked on `stream` with CUDA events through
    /// `launch(kernel)` on the real inputs.
    pub fn tune(
        &self,
        tuner: &mut Autotuner,
        key: &TuneKey,
        stream: &Stream,
        mut launch: impl FnMut(&Kernel) -> Result<()>,
    ) -> Result<(&Kernel, Choice)> {
        let mut timer = EventTimer::new(stream)?;
        let choice = tuner.tune(key, &self.configs, &mut timer, &mut |i| {
            launch(&self.kernels[i])
        })?;
        Ok((&self.kernels[choice.index], choice))
    }
}
