//! The TypeScript side of every type that crosses the IPC bridge, generated from
//! the Rust types (all of them core's) so the two can never drift. `make bindings` rewrites
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
        crate::ErrorCode,
        crate::Error,
        crate::documents::DocKind,
        crate::documents::DocumentInfo,
        crate::keys::Service,
        crate::keys::KeySource,
        crate::keys::KeyStatus,
        crate::citations::Mode,
        crate::citations::CiteOptions,
        crate::settings::Renderer,
        crate::settings::Settings,
        crate::backend::BackendMode,
        crate::app::AppInfo,
        crate::app::Health,
        crate::documents::Paragraph,
        crate::citations::Parsed,
        crate::citations::PreviewSource,
        crate::citations::Preview,
        crate::citations::OutputKind,
        crate::summary::Segment,
        crate::summary::ChangedParagraph,
        crate::summary::CiteSummary,
        crate::jobs::CiteSource,
        crate::jobs::CiteProgress,
        crate::jobs::CiteOutcome,
        crate::jobs::SavedFile,
        crate::jobs::SaveReport,
        crate::missions::MissionSpec,
        crate::missions::CancelAck,
        crate::missions::EventKind,
        crate::missions::MissionEvent,
        crate::cards::Card,
        crate::store::MissionStatus,
        crate::store::MissionRecord,
        crate::store::StoredEvent,
        crate::store::EventFilter,
        crate::store::KindCount,
        crate::store::EventPage,
        crate::follower::MissionUpdate,
        crate::follower::MissionStatusChanged,
        crate::transcript::ExportFormat,
        crate::keys::SessionSource,
        crate::account::UsageCounter,
        crate::account::AccountKey,
        crate::account::Account,
        crate::account::AccountView,
        crate::launch::DropUpdate,
    ];
    let mut out = String::from(
        "// Generated from the Rust types by `make bindings` (src-tauri/core/src/bindings.rs). Do not edit.\n\n",
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
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/lib/bindings.ts")
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
