//! The floor `make bench` measures Casebook against: a bare Tauri window on the same
//! tauri build, showing one static page, with nothing of Casebook's.

fn main() {
    tauri::Builder::default()
        .run(tauri::generate_context!("examples/bare/tauri.conf.json"))
        .expect("the bare window failed");
}
