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
        crate::citations::documents::DocKind,
        crate::citations::documents::DocumentInfo,
        crate::keys::Service,
        crate::keys::KeySource,
        crate::keys::KeyStatus,
        crate::citations::client::Mode,
        crate::citations::client::CiteOptions,
        crate::settings::Renderer,
        crate::settings::Settings,
        crate::backend::BackendMode,
        crate::app::AppInfo,
        crate::app::Health,
        crate::missions::client::agent::AgentInfo,
        crate::missions::spend::BudgetLevel,
        crate::missions::spend::BudgetUse,
        crate::citations::documents::Paragraph,
        crate::citations::client::Parsed,
        crate::citations::client::PreviewSource,
        crate::citations::client::Preview,
        crate::citations::client::OutputKind,
        crate::citations::summary::Segment,
        crate::citations::summary::ChangedParagraph,
        crate::citations::summary::CiteSummary,
        crate::citations::jobs::CiteSource,
        crate::citations::jobs::CiteProgress,
        crate::citations::jobs::CiteOutcome,
        crate::citations::jobs::SavedFile,
        crate::citations::jobs::SaveReport,
        crate::missions::client::MissionSpec,
        crate::missions::client::CancelAck,
        crate::missions::client::InputResponse,
        crate::missions::client::Delivered,
        crate::missions::conversation::Role,
        crate::missions::conversation::Message,
        crate::missions::conversation::RequestOption,
        crate::missions::conversation::FileRef,
        crate::missions::client::attachment::AttachmentChoice,
        crate::missions::conversation::PendingRequest,
        crate::missions::conversation::SignIn,
        crate::missions::conversation::ItemKind,
        crate::missions::conversation::StepStatus,
        crate::missions::conversation::Source,
        crate::missions::conversation::ChildRef,
        crate::missions::conversation::Step,
        crate::missions::conversation::Item,
        crate::missions::conversation::ConversationFacts,
        crate::missions::conversation::ConversationChanges,
        crate::missions::conversation::TextAppended,
        crate::missions::conversation::TextClosed,
        crate::missions::conversation::ConversationSummary,
        crate::missions::store::conversations::ConversationPage,
        crate::missions::store::conversations::ConversationHits,
        crate::missions::store::conversations::ConversationHit,
        crate::missions::store::across::MissionHits,
        crate::missions::store::across::MissionHit,
        crate::missions::store::across::HitPlace,
        crate::missions::subagents::SubAgent,
        crate::missions::protocol::EventKind,
        crate::missions::protocol::MissionEvent,
        crate::missions::conversation::cards::Card,
        crate::missions::store::MissionStatus,
        crate::missions::store::MissionRecord,
        crate::missions::store::StoredEvent,
        crate::missions::store::EventFilter,
        crate::missions::store::KindCount,
        crate::missions::store::EventPage,
        crate::missions::follower::MissionUpdate,
        crate::missions::follower::MissionStatusChanged,
        crate::missions::export::transcript::ExportFormat,
        crate::keys::SessionSource,
        crate::account::UsageCounter,
        crate::account::AccountKey,
        crate::account::Account,
        crate::account::AccountView,
        crate::desktop::launch::DropUpdate,
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
