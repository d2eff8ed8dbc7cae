//! The real app under tauri-driver + WebKitWebDriver, driven through WebDriver.

use crate::procs::{alive, descendants};
use crate::{Xvfb, app_binary, artifacts_dir, run};
use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Default)]
pub struct AppOptions {
    /// What native dialogs answer (`CASEBOOK_DIALOG_PATH`); unset opens real dialogs.
    pub dialog_path: Option<String>,
    /// Extra environment for the app.
    pub env: Vec<(String, String)>,
    /// Reuse a data directory (to test what survives a restart); a fresh one otherwise.
    pub data_dir: Option<PathBuf>,
    /// The app's command line after the program (documents to open).
    pub args: Vec<String>,
    /// Another program to drive instead of Casebook (the benchmarks' bare window).
    pub binary: Option<PathBuf>,
}

/// tauri-driver, WebKitWebDriver and the app they started: all ended, and waited for,
/// however the test ends.
struct Driver(Child);

/// WebKitWebDriver's name as /proc keeps it (15 bytes).
const WEBKIT_DRIVER: &str = "WebKitWebDriver";

impl Driver {
    /// Waits, up to `patience`, for what the drivers started (the app and its WebKit
    /// processes) to end on its own, as it does when the session is closed.
    async fn app_gone(&self, patience: Duration) {
        let deadline = Instant::now() + patience;
        while Instant::now() < deadline
            && descendants(self.0.id())
                .iter()
                .any(|(pid, name)| name != WEBKIT_DRIVER && alive(*pid))
        {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        // Killing tauri-driver alone left WebKitWebDriver running, and the app too when
        // it was slow to quit: on a loaded machine the next start on the same data folder
        // met the old app on its way out, its single-instance handover failed, and the
        // new app exited before WebDriver had a session with it.
        let tree = descendants(self.0.id());
        let _ = self.0.kill();
        let _ = self.0.wait();
        if !tree.is_empty() {
            let _ = Command::new("kill")
                .arg("-KILL")
                .args(tree.iter().map(|(pid, _)| pid.to_string()))
                .stderr(Stdio::null())
                .status();
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        while tree.iter().any(|(pid, _)| alive(*pid)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

pub struct App {
    pub client: Client,
    _driver: Driver,
    _data_dir: Option<tempfile::TempDir>,
    data_path: PathBuf,
    pub xvfb: Xvfb,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn tauri_driver() -> PathBuf {
    if let Ok(out) = Command::new("sh")
        .args(["-c", "command -v tauri-driver"])
        .output()
    {
        let p = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        if !p.is_empty() {
            return p.into();
        }
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    let p = home.join(".cargo/bin/tauri-driver");
    assert!(
        p.exists(),
        "tauri-driver is not installed: `cargo install tauri-driver --locked` (make test does)"
    );
    p
}

impl App {
    /// Starts a private display, tauri-driver, and the app in a fresh data directory.
    pub async fn launch(opts: AppOptions) -> App {
        // Both of rustls's providers are linked in; say which one WebDriver's client uses.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let xvfb = Xvfb::start();
        let (data_dir, data_path) = match opts.data_dir {
            Some(p) => (None, p),
            None => {
                let t = tempfile::Builder::new()
                    .prefix("casebook-e2e-")
                    .tempdir()
                    .unwrap();
                let p = t.path().to_path_buf();
                (Some(t), p)
            }
        };
        // Starting WebKitWebDriver and the app is occasionally refused on a loaded
        // machine (the session request gets an incomplete answer); a fresh driver
        // on fresh ports is the cure, so try a few times before failing.
        let mut last_error = String::new();
        let mut session = None;
        for _attempt in 0..3 {
            let port = free_port();
            let native_port = free_port();
            let mut cmd = Command::new(tauri_driver());
            cmd.args([
                "--port",
                &port.to_string(),
                "--native-port",
                &native_port.to_string(),
            ])
            .env("DISPLAY", xvfb.display())
            .env_remove("WAYLAND_DISPLAY")
            .env("GDK_BACKEND", "x11")
            // No accessibility bus runs here; without this GTK warns on every start.
            .env("NO_AT_BRIDGE", "1")
            .env("CASEBOOK_DATA_DIR", &data_path)
            // WebKitWebDriver cannot take screenshots from WebKit with compositing off,
            // which Casebook chooses on a machine without a GPU like this one: the
            // tests keep it on (a test may still ask for `software`).
            .env("CASEBOOK_RENDERER", "gpu")
            .env_remove("CASEBOOK_DIALOG_PATH")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
            if let Some(d) = &opts.dialog_path {
                cmd.env("CASEBOOK_DIALOG_PATH", d);
            }
            for (k, v) in &opts.env {
                cmd.env(k, v);
            }
            let driver = Driver(cmd.spawn().expect("cannot start tauri-driver"));
            let deadline = Instant::now() + Duration::from_secs(20);
            while TcpStream::connect(("127.0.0.1", port)).is_err() {
                assert!(
                    Instant::now() < deadline,
                    "tauri-driver did not open port {port}"
                );
                std::thread::sleep(Duration::from_millis(50));
            }
            let mut caps = serde_json::Map::new();
            caps.insert("browserName".into(), "wry".into());
            caps.insert(
                "tauri:options".into(),
                serde_json::json!({
                    "application": opts.binary.clone().unwrap_or_else(app_binary),
                    "args": opts.args,
                }),
            );
            // An app that exits as it starts leaves the session request unanswered: the
            // wait only turns that hang into another try.
            let mut builder = ClientBuilder::rustls().expect("rustls client");
            builder.capabilities(caps);
            let url = format!("http://127.0.0.1:{port}");
            match tokio::time::timeout(Duration::from_secs(120), builder.connect(&url)).await {
                Ok(Ok(client)) => {
                    session = Some((client, driver));
                    break;
                }
                failed => {
                    last_error = match failed {
                        Ok(Err(e)) => e.to_string(),
                        _ => "no answer to the session request in 120 s".to_owned(),
                    };
                    drop(driver);
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
        let (client, driver) = session.unwrap_or_else(|| {
            panic!("no WebDriver session with the app after 3 tries (is webkit2gtk-driver installed?): {last_error}")
        });
        App {
            client,
            _driver: driver,
            _data_dir: data_dir,
            data_path,
            xvfb,
        }
    }

    pub fn data_dir(&self) -> &std::path::Path {
        &self.data_path
    }

    /// Starts the app again as a person would (same display, data folder and session
    /// bus, not through WebDriver) with `args`, run in `cwd`; waits for it to exit.
    pub fn start_again(&self, args: &[&str], cwd: &std::path::Path) -> std::process::ExitStatus {
        let mut child = Command::new(app_binary())
            .args(args)
            .current_dir(cwd)
            .env("DISPLAY", self.xvfb.display())
            .env_remove("WAYLAND_DISPLAY")
            .env("GDK_BACKEND", "x11")
            .env("NO_AT_BRIDGE", "1")
            .env("CASEBOOK_DATA_DIR", &self.data_path)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("cannot start the app again");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return status;
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the second start did not hand over and exit within 30 s");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits (up to 20 s) for the element with this `data-testid`.
    pub async fn testid(&self, id: &str) -> Element {
        self.wait_css(&format!("[data-testid=\"{id}\"]")).await
    }

    /// The text of the element with this `data-testid` (waited for), or "" if unreadable.
    pub async fn text(&self, id: &str) -> String {
        self.testid(id).await.text().await.unwrap_or_default()
    }

    /// A number from the mission window's test hooks (`count`, `held`); `None` before they
    /// are installed or when the call fails.
    pub async fn mission_figure(&self, name: &str) -> Option<u64> {
        let js =
            format!("return window.__casebookMission ? window.__casebookMission.{name}() : null;");
        self.client.execute(&js, vec![]).await.ok()?.as_u64()
    }

    pub async fn wait_css(&self, css: &str) -> Element {
        self.client
            .wait()
            .at_most(Duration::from_secs(20))
            .for_element(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("no element matches {css} within 20 s: {e}"))
    }

    /// Every element matching `css`, now.
    pub async fn all_css(&self, css: &str) -> Vec<Element> {
        self.client
            .find_all(Locator::Css(css))
            .await
            .unwrap_or_default()
    }

    /// Polls until `f` is true, or panics with `what` after 20 s.
    pub async fn until<F, Fut>(&self, what: &str, mut f: F)
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = bool>,
    {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if f().await {
                return;
            }
            if Instant::now() >= deadline {
                let seen = self.diagnose(what).await;
                panic!("timed out waiting for: {what}\n{seen}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// What a failed wait leaves behind: a screenshot and the alerts on screen, so a
    /// CI failure says what the user would have seen.
    async fn diagnose(&self, what: &str) -> String {
        let name: String = what
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let shot = self.screenshot(&format!("timeout-{name}")).await;
        let mut alerts = Vec::new();
        for el in self.all_css("[role=alert], .error").await {
            if let Ok(text) = el.text().await
                && !text.trim().is_empty()
            {
                alerts.push(text);
            }
        }
        format!(
            "screenshot: {}\nalerts on screen: {alerts:?}",
            shot.display()
        )
    }

    pub async fn click(&self, id: &str) {
        let el = self.testid(id).await;
        self.press(&el, id).await;
    }

    /// Clicks `el` once it has stopped moving. WebDriver clicks land on coordinates,
    /// so a click sent while the view is still laying out (an answer arriving above
    /// the element) can hit something else.
    pub async fn press(&self, el: &Element, what: &str) {
        if let Err(e) = self.try_press(el).await {
            panic!("cannot press {what}: {e}");
        }
    }

    /// [`Self::press`], saying why it could not instead of failing the test: the element
    /// may be gone, replaced by a newer drawing of the same thing, by the time it settles.
    pub async fn try_press(&self, el: &Element) -> Result<(), fantoccini::error::CmdError> {
        self.client
            .execute_async(
                r#"const [el, done] = [arguments[0], arguments[arguments.length - 1]];
                let last = "", still = 0, frames = 0;
                // WebKit without compositing runs no animation frame while nothing
                // repaints: a timer stands in for a frame then.
                const next = (f) => {
                  let ran = false;
                  const once = () => { if (!ran) { ran = true; f(); } };
                  requestAnimationFrame(once);
                  setTimeout(once, 50);
                };
                const tick = () => {
                  const r = el.getBoundingClientRect();
                  const now = `${r.x},${r.y},${r.width},${r.height}`;
                  still = now === last ? still + 1 : 0;
                  last = now;
                  if (still >= 2 || ++frames > 120) done(still >= 2);
                  else next(tick);
                };
                next(tick);"#,
                vec![serde_json::to_value(el).expect("element reference")],
            )
            .await?;
        el.click().await
    }

    /// Saves a PNG of the window to `artifacts/screenshots/NAME.png`.
    /// axe-core's accessibility violations on the page as it is now (WCAG 2 A and AA
    /// rules), one line each: the rule and the elements that break it.
    pub async fn axe_violations(&self) -> Vec<String> {
        let src =
            std::fs::read_to_string(crate::root().join("ui/node_modules/axe-core/axe.min.js"))
                .expect("axe-core is installed with the UI's dev dependencies (make ui-deps)");
        self.client
            .execute(&format!("{src}\nreturn true;"), vec![])
            .await
            .expect("loading axe-core");
        let got = self
            .client
            .execute_async(
                "const done = arguments[arguments.length - 1];
                 axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}})
                   .then((r) => done(r.violations.map((v) => v.id + ': ' + v.help + ' (' + v.nodes.map((n) => n.target.join(' ')).join(', ') + ')')))
                   .catch((e) => done(['axe failed: ' + e]));",
                vec![],
            )
            .await
            .expect("running axe-core");
        got.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }

    pub async fn screenshot(&self, name: &str) -> PathBuf {
        // WebKit captures the last painted frame: wait for two frames so the capture
        // shows the DOM as it is now.
        self.client
            .execute_async(
                // Two frames, or (WebKit without compositing runs none while nothing
                // repaints, and then the last paint is current) a moment.
                "const done = arguments[arguments.length - 1]; const t = setTimeout(done, 200); requestAnimationFrame(() => requestAnimationFrame(() => { clearTimeout(t); done(); }));",
                vec![],
            )
            .await
            .expect("waiting for a frame");
        let png = self.client.screenshot().await.expect("screenshot");
        assert!(png.starts_with(b"\x89PNG"), "screenshot is not a PNG");
        let path = artifacts_dir().join(format!("{name}.png"));
        std::fs::write(&path, png).expect("cannot save screenshot");
        path
    }

    /// The app window's position and size on the X screen: (x, y, width, height).
    pub fn window_geometry(&self) -> (i32, i32, i32, i32) {
        let ids = run(Command::new("xdotool")
            .args(["search", "--sync", "--onlyvisible", "--name", "^Casebook$"])
            .env("DISPLAY", self.xvfb.display()));
        let id = ids
            .lines()
            .next()
            .expect("no Casebook window on the display")
            .to_owned();
        let shell = run(Command::new("xdotool")
            .args(["getwindowgeometry", "--shell", &id])
            .env("DISPLAY", self.xvfb.display()));
        let get = |k: &str| -> i32 {
            shell
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{k}=")))
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("xdotool said no {k}: {shell}"))
        };
        (get("X"), get("Y"), get("WIDTH"), get("HEIGHT"))
    }

    /// How many colours the app window shows on the X screen, read from the screen by
    /// ImageMagick, not from WebKit: WebKitWebDriver cannot take screenshots when
    /// compositing is off, and this tells a drawn window (text, borders, a brand mark:
    /// dozens) from a blank one (one or two).
    pub fn colours_on_screen(&self) -> usize {
        let (x, y, w, h) = self.window_geometry();
        let out = run(Command::new("import")
            .args([
                "-window",
                "root",
                "-crop",
                &format!("{w}x{h}+{x}+{y}"),
                "+repage",
                "-format",
                "%k",
                "info:",
            ])
            .env("DISPLAY", self.xvfb.display()));
        out.trim()
            .parse()
            .unwrap_or_else(|_| panic!("ImageMagick counted no colours: {out}"))
    }

    /// The screen point at the centre of an element, for OS-level input.
    pub async fn screen_center_of(&self, el: &Element) -> (i32, i32) {
        let (x, y, w, h) = el.rectangle().await.expect("element rectangle");
        let (wx, wy, _, _) = self.window_geometry();
        (wx + (x + w / 2.0) as i32, wy + (y + h / 2.0) as i32)
    }

    /// Ends the WebDriver session (which closes the app), waits for the app to quit,
    /// then stops the drivers and whatever is left.
    pub async fn close(self) {
        let _ = self.client.clone().close().await;
        // What the app does on its way out is part of what a test checks on a restart;
        // killing it at once would skip that, and waiting ends when it does.
        self._driver.app_gone(Duration::from_secs(30)).await;
        drop(self);
    }
}
