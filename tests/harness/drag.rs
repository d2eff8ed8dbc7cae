//! A real OS drag-and-drop onto the app window: a GTK drag source offering
//! `text/uri-list`, dragged with xdotool in small steps so GTK's DnD protocol runs
//! exactly as it does when a person drags a file from their file manager.

use crate::run;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Where the drag source window sits: right of the app window.
const SOURCE_X: i32 = 1400;
const SOURCE_Y: i32 = 100;

/// Drags `files` from a GTK drag source and drops them at screen point (`x`, `y`).
pub fn drag_files_onto(display: &str, files: &[&Path], x: i32, y: i32) {
    Drag::hold_over(display, files, x, y).drop();
}

/// Files picked up from a GTK drag source and held over a point of the screen, the
/// mouse button still down: what a window shows while a person is dragging.
pub struct Drag {
    display: String,
    source: std::process::Child,
}

impl Drag {
    /// Picks `files` up and holds them over screen point (`x`, `y`).
    pub fn hold_over(display: &str, files: &[&Path], x: i32, y: i32) -> Drag {
        let script = crate::root().join("tests/harness/drag_source.py");
        let mut source = Command::new("/usr/bin/python3")
            .arg(&script)
            .args([SOURCE_X.to_string(), SOURCE_Y.to_string()])
            .args(files)
            .env("DISPLAY", display)
            .env_remove("WAYLAND_DISPLAY")
            .env("GDK_BACKEND", "x11")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("cannot start the drag source (python3-gi and gir1.2-gtk-3.0 are needed)");
        let mut ready = String::new();
        BufReader::new(source.stdout.take().unwrap())
            .read_line(&mut ready)
            .expect("drag source said nothing");
        assert_eq!(ready.trim(), "ready", "drag source did not start");

        let drag = Drag {
            display: display.to_owned(),
            source,
        };
        let (sx, sy) = (SOURCE_X + 80, SOURCE_Y + 80);
        drag.xdo(&["mousemove", &sx.to_string(), &sy.to_string()]);
        std::thread::sleep(Duration::from_millis(200));
        drag.xdo(&["mousedown", "1"]);
        // GTK starts a drag only after the pointer moves past a threshold, and the target
        // only sees enter/over when motion events arrive: move in steps.
        drag.glide((sx, sy), (x, y));
        // Wiggle on the target so it gets several XdndPosition messages.
        for d in [3, -3, 0] {
            drag.xdo(&["mousemove", &(x + d).to_string(), &y.to_string()]);
            std::thread::sleep(Duration::from_millis(100));
        }
        drag
    }

    /// Lets go where the files are held: the drop.
    pub fn drop(self) {
        self.xdo(&["mouseup", "1"]);
        self.wait_for_the_end();
    }

    /// Carries the files from (`x`, `y`) back to their source and lets go there: they
    /// left the window without being dropped on it.
    pub fn take_back_from(self, x: i32, y: i32) {
        self.glide((x, y), (SOURCE_X + 80, SOURCE_Y + 80));
        self.xdo(&["mouseup", "1"]);
        self.wait_for_the_end();
    }

    fn glide(&self, (fx, fy): (i32, i32), (tx, ty): (i32, i32)) {
        let steps = 30;
        for i in 1..=steps {
            let px = fx + (tx - fx) * i / steps;
            let py = fy + (ty - fy) * i / steps;
            self.xdo(&["mousemove", &px.to_string(), &py.to_string()]);
            std::thread::sleep(Duration::from_millis(40));
        }
    }

    fn xdo(&self, args: &[&str]) {
        run(Command::new("xdotool")
            .args(args)
            .env("DISPLAY", &self.display));
    }

    fn wait_for_the_end(mut self) {
        let status = wait_timeout(&mut self.source, Duration::from_secs(15));
        assert!(status, "the drag source did not see its drag end");
    }
}

fn wait_timeout(child: &mut std::process::Child, timeout: Duration) -> bool {
    let deadline = std::time::Instant::now() + timeout;
    while std::time::Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    false
}
