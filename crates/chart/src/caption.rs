//! How large a title is drawn: the usual size, or smaller when a long title (a workload
//! named in full) would run past the picture's edges. Text is laid out by estimate (no
//! font files), so the width of a character is taken as a share of its size.

/// The usual title size in pixels.
const TITLE_PX: u32 = 20;
/// The smallest size a title shrinks to.
const MIN_TITLE_PX: u32 = 11;
/// Width of an average character as a share of the font size (sans-serif).
const CHAR_WIDTH: f64 = 0.56;

/// The font size at which `title` fits in `width` pixels, with a margin each side.
pub(crate) fn title_px(title: &str, width: u32) -> u32 {
    let chars = title.chars().count().max(1) as f64;
    let fits = (f64::from(width.saturating_sub(40)) / (chars * CHAR_WIDTH)).floor() as u32;
    fits.clamp(MIN_TITLE_PX, TITLE_PX)
}

#[cfg(test)]
mod tests {
    use super::title_px;

    #[test]
    fn short_titles_keep_their_size_and_long_ones_shrink() {
        assert_eq!(title_px("throughput", 640), 20);
        let long =
            "throughput vs cluster size: zipf(0.8), 793 docs, 128 MiB, cache 32 MiB per node";
        let px = title_px(long, 640);
        assert!((11..20).contains(&px), "{px}");
        assert!(long.len() as f64 * 0.56 * f64::from(px) <= 600.0);
        assert_eq!(title_px(&"x".repeat(1000), 640), 11);
    }
}
