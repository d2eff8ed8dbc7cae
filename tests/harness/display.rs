//! A private Xvfb display per test, so nothing depends on the developer's desktop.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Xvfb {
    child: Child,
    display: String,
}

impl Xvfb {
    /// Starts Xvfb on the first free display number from :90 up.
    pub fn start() -> Self {
        for n in 90..200 {
            if Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
                || Path::new(&format!("/tmp/.X{n}-lock")).exists()
            {
                continue;
            }
            let display = format!(":{n}");
            let mut child = Command::new("Xvfb")
                .args([
                    display.as_str(),
                    "-screen",
                    "0",
                    "1600x1000x24",
                    "-nolisten",
                    "tcp",
                    "-ac",
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("cannot start Xvfb: install it with scripts/install-deps.sh test");
            let socket = format!("/tmp/.X11-unix/X{n}");
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if Path::new(&socket).exists() {
                    return Self { child, display };
                }
                if let Ok(Some(_)) = child.try_wait() {
                    break; // lost a race for this number; try the next
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("no free X display between :90 and :199");
    }

    pub fn display(&self) -> &str {
        &self.display
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // A killed Xvfb leaves its lock and socket behind, and those displays would
        // stay taken for every later run.
        let n = self.display.trim_start_matches(':');
        let _ = std::fs::remove_file(format!("/tmp/.X{n}-lock"));
        let _ = std::fs::remove_file(format!("/tmp/.X11-unix/X{n}"));
    }
}
