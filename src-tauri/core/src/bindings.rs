//! The TypeScript side of every type that crosses the IPC bridge, generated from
//! the Rust types so the two can never drift. `make bindings` rewrites
//! `ui/src/lib/bindings.ts`; a test fails when the committed file is stale.

use ts_rs::TS;

macro_rules! declarations {
    ($cfg:expr; $($ty:ty),* $(,)?) => {
        vec![$(<$ty as TS>::decl($cfg)),*]
    };
}

/// The whole generated file.
pub fn typescript() -> String {
    let cfg = ts_rs::Config::default();
    let decls = declarations![&cfg;
        casebook_core::ErrorCode,
        casebook_core::Error,
        casebook_core::documents::DocKind,
        casebook_core::documents::DocumentInfo,
        casebook_core::keys::Service,
        casebook_core::keys::KeySource,
        casebook_core::keys::KeyStatus,
        casebook_core::citations::Mode,
        casebook_core::citations::CiteOptions,
        casebook_core::settings::Settings,
        casebook_core::backend::BackendMode,
        casebook_core::app::AppInfo,
        casebook_core::app::Health,
        casebook_core::citations::Paragraph,
        casebook_core::citations::Parsed,
        casebook_core::citations::PreviewSource,
        casebook_core::citations::Preview,
        casebook_core::citations::OutputKind,
        casebook_core::summary::Segment,
        casebook_core::summary::ChangedParagraph,
        casebook_core::summary::CiteSummary,
        casebook_core::jobs::CiteSource,
        casebook_core::jobs::CiteProgress,
        casebook_core::jobs::CiteOutcome,
        casebook_core::jobs::SavedFile,
        casebook_core::jobs::SaveReport,
        casebook_core::missions::MissionSpec,
        casebook_core::missions::CancelAck,
        casebook_core::missions::EventKind,
        casebook_core::missions::MissionEvent,
        casebook_core::cards::Card,
        casebook_core::store::MissionStatus,
        casebook_core::store::MissionRecord,
        casebook_core::store::StoredEvent,
        casebook_core::store::EventFilter,
        casebook_core::store::KindCount,
        casebook_core::app::EventPage,
        casebook_core::follower::MissionUpdate,
        casebook_core::follower::MissionStatusChanged,
        casebook_core::transcript::ExportFormat,
        casebook_core::account::SessionSource,
        casebook_core::account::UsageCounter,
        casebook_core::account::AccountKey,
        casebook_core::account::Account,
        casebook_core::account::AccountView,
    ];
    let mut out = String::from(
        "// Generated from the Rust types by `make bindings` (src-tauri/src/bindings.rs). Do not edit.\n\n",
    );
    for decl in decls {
        out.push_str("export ");
        out.push_str(&decl);
        out.push_str("\n\n");
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

/// Where the generated file lives.
pub fn path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/src/lib/bindings.ts")
}

#[cfg(test)]
mod tests {
    #[test]
    fn generated_typescript_is_up_to_date() {
        let want = super::typescript();
        let path = super::path();
        if std::env::var_os("UPDATE_BINDINGS").is_some() {
            std::fs::write(&path, &want).expect("cannot write bindings");
            return;
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "{} is stale: run `make bindings` and commit the result",
            path.display()
        );
    }
}
