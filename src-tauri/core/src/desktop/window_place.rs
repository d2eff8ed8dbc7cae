//! Where the main window was and how large: read when the app starts, kept as it
//! changes. Kept in `window-state.json`, in the shape Tauri's window-state plugin
//! wrote, so a place saved by an earlier Casebook still opens there.
//!
//! Written atomically and at most a few times a second: a drag sends dozens of moves,
//! and a `kill -9` mid-write must not leave a half file that loses the place.

use crate::save;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The label of the one window whose place is kept.
const MAIN: &str = "main";

/// A place file is a few hundred bytes; anything much larger is not one.
const MAX_FILE_BYTES: u64 = 16 * 1024;

/// How long a burst of moves may go on before the latest place is written.
const SETTLE: Duration = Duration::from_millis(250);

/// The window's outer position, inner size in physical pixels, and whether it was
/// maximized (then position and size are the ones it returns to).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowPlace {
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
    #[serde(default)]
    pub maximized: bool,
}

/// A screen as the desktop reports it: place and size in physical pixels, and how many
/// physical pixels make a logical one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Screen {
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
    pub scale: f64,
}

/// How to open a window at a kept place, in the logical pixels window builders take.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Opening {
    pub size: (f64, f64),
    /// None when the place is on no screen: the desktop picks one.
    pub position: Option<(f64, f64)>,
    pub maximized: bool,
}

impl WindowPlace {
    /// The first of `screens` that any of it lies on: a place on a screen since
    /// unplugged is not restored, and the desktop picks one.
    pub fn screen(&self, screens: &[Screen]) -> Option<usize> {
        let (left, top) = (i64::from(self.x), i64::from(self.y));
        let (right, bottom) = (left + i64::from(self.width), top + i64::from(self.height));
        screens.iter().position(|s| {
            let (x, y) = (i64::from(s.x), i64::from(s.y));
            left < x + i64::from(s.width)
                && x < right
                && top < y + i64::from(s.height)
                && y < bottom
        })
    }

    /// Where and how large to open the window, at the scale of the screen it is on.
    pub fn opening(&self, screens: &[Screen]) -> Opening {
        let on = self.screen(screens).map(|i| screens[i].scale);
        let logical = |v: f64| v / on.unwrap_or(1.0);
        Opening {
            size: (logical(self.width.into()), logical(self.height.into())),
            position: on.map(|_| (logical(self.x.into()), logical(self.y.into()))),
            maximized: self.maximized,
        }
    }
}

/// The place kept in `file`, if there is a usable one. A missing, damaged or
/// oversized file means none: the window opens at its default place.
pub fn load(file: &Path) -> Option<WindowPlace> {
    let bytes = save::read_small(file, MAX_FILE_BYTES).ok()?;
    let mut all: BTreeMap<String, WindowPlace> = serde_json::from_slice(&bytes).ok()?;
    all.remove(MAIN).filter(|p| p.width > 0 && p.height > 0)
}

fn save(file: &Path, place: WindowPlace) -> crate::Result<()> {
    let all = BTreeMap::from([(MAIN, place)]);
    let bytes = serde_json::to_vec_pretty(&all).expect("a place serializes");
    save::write_atomic(file, &bytes, true)
}

/// Keeps the window's place in its file as it changes, from a thread of its own (the
/// window's events come on the UI thread, which must not wait on the disk).
pub struct PlaceKeeper {
    latest: std::sync::mpsc::Sender<WindowPlace>,
    normal: std::sync::Mutex<Option<WindowPlace>>,
}

impl PlaceKeeper {
    /// Starts keeping places in `file`; `start` is the place the window opened at (or
    /// returns to, if it opened maximized).
    pub fn new(file: PathBuf, start: Option<WindowPlace>) -> Self {
        use std::sync::mpsc::RecvTimeoutError;
        let (latest, changes) = std::sync::mpsc::channel();
        let keep = move || {
            while let Ok(mut place) = changes.recv() {
                let due = Instant::now() + SETTLE;
                let open = loop {
                    match changes.recv_timeout(due.saturating_duration_since(Instant::now())) {
                        Ok(later) => place = later,
                        Err(RecvTimeoutError::Timeout) => break true,
                        Err(RecvTimeoutError::Disconnected) => break false,
                    }
                };
                if let Err(e) = save(&file, place) {
                    tracing::warn!("the window's place was not kept: {e}");
                }
                if !open {
                    return;
                }
            }
        };
        if let Err(e) = std::thread::Builder::new()
            .name("window-place".into())
            .spawn(keep)
        {
            tracing::warn!("the window's place will not be kept: {e}");
        }
        Self {
            latest,
            normal: std::sync::Mutex::new(start.map(|p| WindowPlace {
                maximized: false,
                ..p
            })),
        }
    }

    /// The window moved or changed size. A maximized window keeps the place it will
    /// return to; a minimized one changes nothing.
    pub fn changed(&self, now: WindowPlace, minimized: bool) {
        if minimized {
            return;
        }
        let mut normal = self.normal.lock().unwrap_or_else(|e| e.into_inner());
        let place = if now.maximized {
            match *normal {
                Some(n) => WindowPlace {
                    maximized: true,
                    ..n
                },
                None => now,
            }
        } else {
            *normal = Some(now);
            now
        };
        let _ = self.latest.send(place);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(x: i32, width: u32, maximized: bool) -> WindowPlace {
        WindowPlace {
            x,
            y: 40,
            width,
            height: 600,
            maximized,
        }
    }

    fn settled(file: &Path) -> Option<WindowPlace> {
        std::thread::sleep(SETTLE * 3);
        load(file)
    }

    #[test]
    fn a_place_off_every_screen_is_not_on_one() {
        let screen = |x, width, height| Screen {
            x,
            y: 0,
            width,
            height,
            scale: 1.0,
        };
        let screens = [screen(0, 1920, 1080), screen(1920, 1280, 1024)];
        assert_eq!(place(100, 800, false).screen(&screens), Some(0));
        assert_eq!(place(3000, 800, false).screen(&screens), Some(1));
        assert_eq!(
            place(-700, 800, false).screen(&screens),
            Some(0),
            "partly on"
        );
        assert_eq!(
            place(3200, 800, false).screen(&screens),
            None,
            "right of both"
        );
        assert_eq!(
            place(-900, 800, false).screen(&screens),
            None,
            "left of both"
        );
        assert_eq!(place(100, 800, false).screen(&[]), None);
    }

    #[test]
    fn a_place_opens_in_the_logical_pixels_of_its_screen() {
        let hidpi = Screen {
            x: 0,
            y: 0,
            width: 3840,
            height: 2160,
            scale: 2.0,
        };
        assert_eq!(
            place(100, 800, true).opening(&[hidpi]),
            Opening {
                size: (400.0, 300.0),
                position: Some((50.0, 20.0)),
                maximized: true
            }
        );
        assert_eq!(
            place(5000, 800, false).opening(&[hidpi]),
            Opening {
                size: (800.0, 600.0),
                position: None,
                maximized: false
            },
            "off every screen: its size as kept, placed by the desktop"
        );
    }

    #[test]
    fn reads_the_plugin_shape_and_refuses_what_is_not_a_place() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("window-state.json");
        std::fs::write(
            &file,
            r#"{"main":{"width":900,"height":640,"x":120,"y":90,"prev_x":0,"prev_y":0,"maximized":false,"visible":true,"decorated":true,"fullscreen":false}}"#,
        )
        .unwrap();
        assert_eq!(
            load(&file),
            Some(WindowPlace {
                x: 120,
                y: 90,
                width: 900,
                height: 640,
                maximized: false
            })
        );
        for bad in [
            "",
            "{\"main\":{\"width\":9",
            "{\"main\":{\"width\":0,\"height\":640,\"x\":1,\"y\":1}}",
            "{\"other\":{\"width\":900,\"height\":640,\"x\":1,\"y\":1}}",
        ] {
            std::fs::write(&file, bad).unwrap();
            assert_eq!(load(&file), None, "{bad}");
        }
        let huge = format!(
            "{{\"main\":{{\"width\":900,\"height\":640,\"x\":1,\"y\":1}},\"pad\":\"{}\"}}",
            "x".repeat(MAX_FILE_BYTES as usize)
        );
        std::fs::write(&file, huge).unwrap();
        assert_eq!(load(&file), None, "an oversized file is not read");
        assert_eq!(load(&dir.path().join("missing.json")), None);
    }

    #[test]
    fn keeps_the_latest_place_and_the_one_a_maximized_window_returns_to() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("window-state.json");
        let keeper = PlaceKeeper::new(file.clone(), None);
        for x in 0..50 {
            keeper.changed(place(x, 800, false), false);
        }
        assert_eq!(settled(&file), Some(place(49, 800, false)));
        keeper.changed(place(0, 1920, true), false);
        assert_eq!(
            settled(&file),
            Some(place(49, 800, true)),
            "maximized, it returns to where it was"
        );
        keeper.changed(place(0, 10, false), true);
        assert_eq!(
            settled(&file),
            Some(place(49, 800, true)),
            "minimizing changes nothing"
        );
        keeper.changed(place(7, 700, false), false);
        assert_eq!(settled(&file), Some(place(7, 700, false)));
    }
}
