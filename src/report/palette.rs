//! The colours of every chart, in the report's page and in the SVG files:
//! one palette, apart from both chart writers so that each names it
//! without naming the other.

/// The Okabe–Ito palette without its yellow (too pale on white) and black
/// (kept for axes): distinguishable with every common colour-vision
/// deficiency, and dark enough on white.
pub const PALETTE: [&str; 6] = [
    "#0072B2", // blue
    "#D55E00", // vermillion
    "#009E73", // bluish green
    "#CC79A7", // reddish purple
    "#E69F00", // orange
    "#56B4E9", // sky blue
];

/// Colour `i` of the palette, repeating after its end.
pub fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Colour `i` as red, green and blue, for plotters' charts.
pub fn rgb(i: usize) -> (u8, u8, u8) {
    let hex = colour(i);
    let channel = |at: usize| u8::from_str_radix(&hex[at..at + 2], 16).unwrap_or(0);
    (channel(1), channel(3), channel(5))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn palette_is_okabe_ito_without_pale_colours() {
        for c in PALETTE {
            let rgb: Vec<u32> = (0..3)
                .map(|i| u32::from_str_radix(&c[1 + 2 * i..3 + 2 * i], 16).unwrap())
                .collect();
            // Relative luminance well below white's: no pale yellow or pink.
            let luma = 0.2126 * rgb[0] as f64 + 0.7152 * rgb[1] as f64 + 0.0722 * rgb[2] as f64;
            assert!(luma < 180.0, "{c} is too pale on white ({luma:.0})");
        }
        assert_eq!(colour(0), "#0072B2");
        assert_eq!(rgb(0), (0x00, 0x72, 0xB2));
        assert_eq!(colour(PALETTE.len()), colour(0));
    }
}
