//! Values made once per (device, variant): a kernel loads its module into one
//! device's context, and a persistent grid's size depends on the device, so
//! an op used on `cuda:0` and `cuda:1` keeps one of each per device.

use std::collections::HashMap;
use std::sync::Mutex;

pub struct PerDevice<V: Clone> {
    values: Mutex<HashMap<(usize, usize), V>>,
}

impl<V: Clone> Default for PerDevice<V> {
    fn default() -> Self {
        PerDevice {
            values: Mutex::new(HashMap::new()),
        }
    }
}

impl<V: Clone> PerDevice<V> {
    /// The value of (`device`, `variant`), made by `make` the first time.
    /// `make` runs without the lock held (it may load a module or ask the
    /// driver); when two threads race, the first value stored is kept.
    pub fn get_or_make<E>(
        &self,
        device: usize,
        variant: usize,
        make: impl FnOnce() -> Result<V, E>,
    ) -> Result<V, E> {
        let key = (device, variant);
        if let Some(v) = self.lock().get(&key) {
            return Ok(v.clone());
        }
        let made = make()?;
        Ok(self.lock().entry(key).or_insert(made).clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(usize, usize), V>> {
        self.values.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn each_device_and_variant_is_made_once() {
        let cache: PerDevice<String> = PerDevice::default();
        let made = Cell::new(0);
        let get = |device, variant| {
            cache
                .get_or_make(device, variant, || -> Result<String, ()> {
                    made.set(made.get() + 1);
                    Ok(format!("module of variant {variant} on device {device}"))
                })
                .unwrap()
        };
        // Alternating devices, as an op called on cuda:0 then cuda:1 does.
        for _ in 0..3 {
            assert_eq!(get(0, 5), "module of variant 5 on device 0");
            assert_eq!(get(1, 5), "module of variant 5 on device 1");
        }
        assert_eq!(made.get(), 2);
        assert_eq!(get(1, 2), "module of variant 2 on device 1");
        assert_eq!(made.get(), 3);
    }

    #[test]
    fn a_failure_is_not_kept() {
        let cache: PerDevice<u32> = PerDevice::default();
        let first: Result<u32, String> = cache.get_or_make(1, 0, || Err("out of memory".into()));
        assert_eq!(first, Err("out of memory".to_string()));
        // The next call tries again and keeps what it made.
        assert_eq!(cache.get_or_make(1, 0, || Ok::<_, String>(7)), Ok(7));
        assert_eq!(cache.get_or_make(1, 0, || Ok::<_, String>(9)), Ok(7));
    }
}
