//! What only the desktop app needs, kept out of the Tauri shell so it is tested
//! headless: how WebKit draws ([`renderer`]), where the window was
//! ([`window_place`]), documents handed to the app by its command line
//! ([`launch`]) and the one running start that takes them ([`instance`]).

pub mod instance;
pub mod launch;
pub mod renderer;
pub mod window_place;
