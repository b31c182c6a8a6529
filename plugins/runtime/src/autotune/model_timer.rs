//! A [`KernelTimer`] without a GPU: each timed run takes what a model says
//! the config last launched takes. For testing tuning logic (which variant
//! is picked, what is reused) where there is no device.

use super::tuner::KernelTimer;
use crate::error::Result;
use std::cell::Cell;
use std::rc::Rc;

/// Clones share the record of the last launch, so the launch closure and a
/// timer factory can each hold one.
#[derive(Clone)]
pub struct ModelTimer {
    launched: Rc<Cell<usize>>,
    model: Rc<dyn Fn(usize) -> f64>,
}

impl ModelTimer {
    /// `model(position)`: milliseconds of the candidate at `position`.
    pub fn new(model: impl Fn(usize) -> f64 + 'static) -> ModelTimer {
        ModelTimer {
            launched: Rc::new(Cell::new(0)),
            model: Rc::new(model),
        }
    }

    /// What the launch closure calls: candidate `position` ran.
    pub fn launched(&self, position: usize) {
        self.launched.set(position);
    }
}

impl KernelTimer for ModelTimer {
    fn time_ms(&mut self, run: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
        run()?;
        Ok((self.model)(self.launched.get()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_the_config_last_launched() {
        let timer = ModelTimer::new(|pos| [3.0, 1.0][pos]);
        let mut t = timer.clone();
        assert_eq!(t.time_ms(&mut || Ok(())).unwrap(), 3.0);
        assert_eq!(
            t.time_ms(&mut || {
                timer.launched(1);
                Ok(())
            })
            .unwrap(),
            1.0
        );
    }
}
