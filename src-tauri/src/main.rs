// A function longer than clippy.toml's 150 lines is split (`make lint`); tests are
// exempt: a scenario reads top to bottom.
#![cfg_attr(not(test), warn(clippy::too_many_lines))]
// Keeps a console window from opening next to the app on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    casebook_app::run();
}
