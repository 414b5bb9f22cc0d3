//! Drawing the tray icon: Slate's tablet with the Needs-you count painted into it.
//!
//! The count goes into the icon's pixels because that is the only badge every tray shows: KDE and
//! the plain SNI hosts ignore the tray title, Windows has none, and window badges need a taskbar
//! button that a tray app does not have (on Linux only Unity shows one). Three looks keep the
//! states apart even at 16 px: no badge for 0, a round red badge with one large digit for 1–9, and a red bar with
//! "9+" for 10 or more. The digits come from a 5×7 pixel font drawn at double size, so no font
//! crate is needed and the result is the same on every machine.
//!
//! This module is pure: it returns RGBA bytes. Handing them to the tray is `tray`'s job.

/// The icon's side in pixels. Trays scale it; 32 keeps the digits crisp at 16 and at 32.
pub const SIZE: u32 = 32;

/// Which of the three looks a count gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    /// Nothing needs you: the plain tablet.
    Calm,
    /// One to nine sessions: a round badge with the digit.
    Digit(u8),
    /// Ten or more: a bar reading "9+".
    Many,
}

impl Look {
    pub fn of(count: usize) -> Look {
        match count {
            0 => Look::Calm,
            1..=9 => Look::Digit(count as u8),
            _ => Look::Many,
        }
    }

    /// A short name, used for the reference PNGs in `icons/tray/`.
    pub fn name(self) -> String {
        match self {
            Look::Calm => "needs-0".to_string(),
            Look::Digit(digit) => format!("needs-{digit}"),
            Look::Many => "needs-many".to_string(),
        }
    }
}

/// The badge red. Tests and the desktop test look for it.
pub const RED: [u8; 3] = [229, 57, 53];
const SLATE: [u8; 3] = [59, 74, 90];
const LINE: [u8; 3] = [222, 228, 234];
const WHITE: [u8; 3] = [255, 255, 255];

/// A 5×7 font for the digits and `+`, one byte per row, the high five bits of each used.
const GLYPH_WIDTH: usize = 5;
const GLYPH_HEIGHT: usize = 7;
const DIGITS: [[u8; GLYPH_HEIGHT]; 10] = [
    [0x70, 0x88, 0x98, 0xA8, 0xC8, 0x88, 0x70], // 0
    [0x20, 0x60, 0x20, 0x20, 0x20, 0x20, 0x70], // 1
    [0x70, 0x88, 0x08, 0x10, 0x20, 0x40, 0xF8], // 2
    [0xF8, 0x10, 0x20, 0x10, 0x08, 0x88, 0x70], // 3
    [0x10, 0x30, 0x50, 0x90, 0xF8, 0x10, 0x10], // 4
    [0xF8, 0x80, 0xF0, 0x08, 0x08, 0x88, 0x70], // 5
    [0x30, 0x40, 0x80, 0xF0, 0x88, 0x88, 0x70], // 6
    [0xF8, 0x08, 0x10, 0x20, 0x40, 0x40, 0x40], // 7
    [0x70, 0x88, 0x88, 0x70, 0x88, 0x88, 0x70], // 8
    [0x70, 0x88, 0x88, 0x78, 0x08, 0x10, 0x60], // 9
];
const PLUS: [u8; GLYPH_HEIGHT] = [0x00, 0x20, 0x20, 0xF8, 0x20, 0x20, 0x00];

/// Straight (not premultiplied) RGBA, `SIZE`×`SIZE`, rows top to bottom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Icon {
    pub rgba: Vec<u8>,
    pub width: u32,
    pub height: u32,
}

/// Draws the tray icon for `count` sessions needing you.
pub fn render(count: usize) -> Icon {
    let mut canvas = Canvas::new();
    canvas.tablet(Look::of(count) == Look::Calm);
    match Look::of(count) {
        Look::Calm => {}
        Look::Digit(digit) => {
            // A white ring first, so the badge stands apart from the tablet and from dark panels.
            canvas.disc(21.0, 21.0, 11.0, WHITE);
            canvas.disc(21.0, 21.0, 9.8, RED);
            canvas.glyph(&DIGITS[usize::from(digit)], 16, 14, WHITE);
        }
        Look::Many => {
            canvas.bar(0.5, 12.5, 31.5, 31.5, 4.0, WHITE);
            canvas.bar(1.5, 13.5, 30.5, 30.5, 3.5, RED);
            canvas.glyph(&DIGITS[9], 5, 15, WHITE);
            canvas.glyph(&PLUS, 17, 15, WHITE);
        }
    }
    Icon {
        rgba: canvas.rgba,
        width: SIZE,
        height: SIZE,
    }
}

struct Canvas {
    rgba: Vec<u8>,
}

impl Canvas {
    fn new() -> Canvas {
        Canvas {
            rgba: vec![0; (SIZE * SIZE * 4) as usize],
        }
    }

    /// Blends `colour` over pixel (x, y) with `coverage` in 0..=1.
    fn blend(&mut self, x: usize, y: usize, colour: [u8; 3], coverage: f32) {
        if coverage <= 0.0 || x >= SIZE as usize || y >= SIZE as usize {
            return;
        }
        let index = (y * SIZE as usize + x) * 4;
        let alpha = coverage.min(1.0);
        let below = f32::from(self.rgba[index + 3]) / 255.0;
        let out = alpha + below * (1.0 - alpha);
        for (channel, value) in colour.into_iter().enumerate() {
            let top = f32::from(value) * alpha;
            let under = f32::from(self.rgba[index + channel]) * below * (1.0 - alpha);
            self.rgba[index + channel] = ((top + under) / out).round() as u8;
        }
        self.rgba[index + 3] = (out * 255.0).round() as u8;
    }

    /// Fills every pixel by the share of its 4×4 sample points that `inside` accepts, which
    /// smooths the round edges without a rasteriser.
    fn fill(&mut self, colour: [u8; 3], inside: impl Fn(f32, f32) -> bool) {
        for y in 0..SIZE as usize {
            for x in 0..SIZE as usize {
                let mut hits = 0;
                for sy in 0..4 {
                    for sx in 0..4 {
                        let px = x as f32 + (sx as f32 + 0.5) / 4.0;
                        let py = y as f32 + (sy as f32 + 0.5) / 4.0;
                        if inside(px, py) {
                            hits += 1;
                        }
                    }
                }
                self.blend(x, y, colour, hits as f32 / 16.0);
            }
        }
    }

    /// The slate tablet with three lines, a list of sessions. When something needs you the lines
    /// stop short, so the badge covers no half-drawn line.
    fn tablet(&mut self, full_lines: bool) {
        self.bar(1.5, 1.5, 30.5, 30.5, 6.0, SLATE);
        let widths: [f32; 3] = if full_lines {
            [17.0, 13.0, 15.0]
        } else {
            [12.0, 9.0, 0.0]
        };
        for (row, width) in widths.into_iter().enumerate() {
            if width > 0.0 {
                let top = 8.0 + 6.0 * row as f32;
                self.bar(7.0, top, 7.0 + width, top + 3.0, 0.0, LINE);
            }
        }
    }

    fn disc(&mut self, cx: f32, cy: f32, radius: f32, colour: [u8; 3]) {
        self.fill(colour, |x, y| {
            (x - cx) * (x - cx) + (y - cy) * (y - cy) <= radius * radius
        });
    }

    /// A rectangle with rounded corners of `radius`.
    fn bar(&mut self, left: f32, top: f32, right: f32, bottom: f32, radius: f32, colour: [u8; 3]) {
        self.fill(colour, |x, y| {
            if x < left || x > right || y < top || y > bottom {
                return false;
            }
            let dx = (left + radius - x).max(x - (right - radius)).max(0.0);
            let dy = (top + radius - y).max(y - (bottom - radius)).max(0.0);
            dx * dx + dy * dy <= radius * radius
        });
    }

    /// Draws a glyph at double size with its top-left corner at (x, y).
    fn glyph(&mut self, rows: &[u8; GLYPH_HEIGHT], x: usize, y: usize, colour: [u8; 3]) {
        for (row, bits) in rows.iter().enumerate() {
            for column in 0..GLYPH_WIDTH {
                if bits & (0x80 >> column) != 0 {
                    for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                        self.blend(x + column * 2 + dx, y + row * 2 + dy, colour, 1.0);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn has_red(icon: &Icon) -> bool {
        icon.rgba
            .chunks(4)
            .any(|px| px[3] == 255 && px[..3] == RED[..])
    }

    #[test]
    fn the_three_looks_are_told_apart() {
        assert_eq!(Look::of(0), Look::Calm);
        assert_eq!(Look::of(1), Look::Digit(1));
        assert_eq!(Look::of(9), Look::Digit(9));
        assert_eq!(Look::of(10), Look::Many);
        assert_eq!(Look::of(250), Look::Many);
        assert!(!has_red(&render(0)));
        for count in [1, 5, 9, 10, 42] {
            assert!(has_red(&render(count)), "count {count} shows no badge");
        }
    }

    #[test]
    fn every_count_up_to_ten_draws_a_different_icon() {
        let icons: Vec<Icon> = (0..=10).map(render).collect();
        for (i, a) in icons.iter().enumerate() {
            for b in &icons[i + 1..] {
                assert_ne!(a.rgba, b.rgba);
            }
        }
        assert_eq!(render(10), render(99));
    }

    #[test]
    fn the_icon_is_square_rgba() {
        let icon = render(3);
        assert_eq!(icon.rgba.len(), (SIZE * SIZE * 4) as usize);
        // The corners stay transparent, so the tablet reads as a rounded shape on any panel.
        assert_eq!(icon.rgba[3], 0);
    }

    /// The reference PNGs in `icons/tray/` are what the desktop test compares the live tray icon
    /// with. Run with `SLATE_WRITE_ICONS=1` to write them after changing the drawing.
    #[test]
    fn the_reference_pngs_match_the_drawing() {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../icons/tray");
        let write = std::env::var_os("SLATE_WRITE_ICONS").is_some();
        for count in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10] {
            let icon = render(count);
            let path = folder.join(format!("{}.png", Look::of(count).name()));
            if write {
                std::fs::create_dir_all(&folder).unwrap();
                let file = std::fs::File::create(&path).unwrap();
                let mut encoder = png::Encoder::new(file, icon.width, icon.height);
                encoder.set_color(png::ColorType::Rgba);
                encoder.set_depth(png::BitDepth::Eight);
                let mut writer = encoder.write_header().unwrap();
                writer.write_image_data(&icon.rgba).unwrap();
                continue;
            }
            let decoder = png::Decoder::new(std::io::BufReader::new(
                std::fs::File::open(&path)
                    .unwrap_or_else(|err| panic!("{}: {err}", path.display())),
            ));
            let mut reader = decoder.read_info().unwrap();
            let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
            let info = reader.next_frame(&mut pixels).unwrap();
            assert_eq!((info.width, info.height), (icon.width, icon.height));
            assert!(
                pixels[..info.buffer_size()] == icon.rgba[..],
                "{} differs from the drawing; rerun with SLATE_WRITE_ICONS=1",
                path.display()
            );
        }
    }
}
