//! How a split-K variant (manifest `cluster_splits` S > 1, from the
//! compiler's `split-k` pass) shares the tiles of a launch with its unsplit
//! sibling (the same config with no split): the sibling runs the full waves
//! of tiles, the split variant only the last, partial wave, with
//! `program_id(0)` offset past them (its added `split_tile` argument), so
//! the tail finishes in a fraction of a wave (stream-K's hybrid schedule).
//! A 3008³ matmul of 288 tiles on 132 programs at once runs 264 tiles
//! whole and splits 24 instead of running a third wave of 24.

use crate::kernel::Grid;

/// The tuning macro an op spec's `split_k [1, 4]` line declares: its values
/// are the split-K factors, one per variant, which `require` lines may read
/// (the kernel sees it too, and may ignore it). A split variant's sibling
/// has it at 1.
pub const SPLIT_K_MACRO: &str = "SPLIT_K";

/// Tiles of a launch the unsplit sibling runs (the first ones) and the
/// split variant runs (the rest).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitPlan {
    pub whole_tiles: u32,
    pub split_tiles: u32,
}

/// The plan for the op's `grid` (one program per tile, tiles along x; z
/// must be 1): `whole_slots` programs of the sibling run at once,
/// `split_slots` of the split variant (clusters x S). The tiles beyond the
/// full waves (all of them when they make less than one) are split when
/// that shortens the last wave: `tail` tiles split S ways take
/// `ceil(tail * S / split_slots) / S` of a tile's time instead of one,
/// shorter only for `tail * S <= split_slots * (S - 1)`; otherwise the
/// sibling runs every tile. With y > 1 every tile is split.
pub fn split_plan(
    splits: u32,
    grid: Grid,
    whole_slots: u32,
    split_slots: u32,
) -> std::result::Result<SplitPlan, String> {
    let splits = splits.max(1);
    if grid.2 != 1 {
        return Err(format!(
            "grid z = {}: a split-K variant ({splits} programs per tile along z) needs z = 1",
            grid.2
        ));
    }
    let tiles = grid.0;
    if grid.1 != 1 || whole_slots == 0 || split_slots == 0 {
        return Ok(SplitPlan {
            whole_tiles: 0,
            split_tiles: tiles,
        });
    }
    let full_waves = tiles / whole_slots * whole_slots;
    let tail = u64::from(tiles - full_waves);
    let shorter = tail * u64::from(splits) <= u64::from(split_slots) * u64::from(splits - 1);
    let whole_tiles = if shorter { full_waves } else { tiles };
    Ok(SplitPlan {
        whole_tiles,
        split_tiles: tiles - whole_tiles,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(tiles: u32, splits: u32, whole_slots: u32, split_slots: u32) -> (u32, u32) {
        let p = split_plan(splits, Grid(tiles, 1, 1), whole_slots, split_slots).unwrap();
        assert_eq!(p.whole_tiles + p.split_tiles, tiles);
        (p.whole_tiles, p.split_tiles)
    }

    #[test]
    fn full_waves_run_whole_and_the_tail_is_split() {
        // 3008³ in 128x256 tiles on an H100: 288 tiles, 132 programs at once.
        assert_eq!(plan(288, 2, 132, 132), (264, 24));
        assert_eq!(plan(288, 4, 132, 128), (264, 24));
        // Two programs a multiprocessor: waves of 264.
        assert_eq!(plan(300, 2, 264, 264), (264, 36));
    }

    #[test]
    fn a_tail_that_splitting_would_not_shorten_runs_whole() {
        // 4096³ in 128x256 tiles: 512 tiles, 3 waves of 132 and 116 more;
        // split in two the 116 would still take a wave.
        assert_eq!(plan(512, 2, 132, 132), (512, 0));
        // In four ways too (464 > 3 x 132); 99 left over would be split.
        assert_eq!(plan(512, 4, 132, 132), (512, 0));
        assert_eq!(plan(495, 4, 132, 132), (396, 99));
        // Less than a wave but more than half of one, split 2.
        assert_eq!(plan(100, 2, 132, 132), (100, 0));
        // ... while split 4 shortens 99 (3 rounds of a quarter: 396 <= 3 x 132).
        assert_eq!(plan(99, 4, 132, 132), (0, 99));
        assert_eq!(plan(100, 4, 132, 132), (100, 0));
        // Whole waves leave nothing to split.
        assert_eq!(plan(264, 2, 132, 132), (264, 0));
    }

    #[test]
    fn less_than_a_wave_is_all_split() {
        assert_eq!(plan(32, 4, 132, 132), (0, 32));
        assert_eq!(plan(1, 2, 132, 132), (0, 1));
    }

    #[test]
    fn a_second_grid_axis_or_no_occupancy_splits_everything() {
        let p = split_plan(4, Grid(300, 2, 1), 132, 132).unwrap();
        assert_eq!(
            p,
            SplitPlan {
                whole_tiles: 0,
                split_tiles: 300
            }
        );
        assert_eq!(plan(300, 4, 0, 132), (0, 300));
        let err = split_plan(4, Grid(96, 1, 2), 132, 132).unwrap_err();
        assert!(err.contains("needs z = 1"), "{err}");
    }
}
