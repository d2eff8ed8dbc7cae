//! Files in messages through the CLI against the sandbox, in generations B and 27:
//! `mission reply --attach` sends exactly one AI SDK `UserContent` message (the text, then
//! the file in base64 with its media type and name); the sandbox records the file without
//! its data (B's `message.received.parts`, 27's `delivery.consumed.parts`) and `show` lists
//! it; in 27 the agent's own files (the `agentFile` knob) are listed too, a link only for
//! the https one. A file past the bound is refused by name and nothing is POSTed.

mod common;

use base64::Engine as _;
use casebook_sandbox::MissionProtocol;
use casebook_testsupport::sandbox::missions;
use common::{Cli, ok};
use serde_json::{Value, json};

const DOCX: &str = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

#[tokio::test(flavor = "multi_thread")]
async fn a_reply_attaches_a_document_and_show_lists_the_files() {
    for protocol in [MissionProtocol::EveB, MissionProtocol::Eve27] {
        let service = missions(protocol, 40).await;
        service
            .knobs()
            .set(|k| k.agent_file = protocol == MissionProtocol::Eve27);
        let cli = Cli::new(&service);
        let here = tempfile::tempdir().unwrap();
        let (_, sid) = cli
            .start_following("Does shade reduce heat stroke?", here.path())
            .await;
        let bytes: Vec<u8> = (0..=255u8).cycle().take(3000).collect();
        let doc = here.path().join("Field brief.docx");
        std::fs::write(&doc, &bytes).unwrap();
        ok(&cli
            .run(
                &[
                    "mission",
                    "reply",
                    &sid,
                    "--message",
                    "See the brief.",
                    "--attach",
                    doc.to_str().unwrap(),
                    "--follow",
                ],
                here.path(),
            )
            .await);
        assert_eq!(
            common::posted(&service, &sid, protocol),
            [json!({"route": "", "body": {"message": [
                {"type": "text", "text": "See the brief."},
                {"type": "file",
                 "data": base64::engine::general_purpose::STANDARD.encode(&bytes),
                 "mediaType": DOCX, "filename": "Field brief.docx"},
            ]}})],
            "{protocol:?}"
        );
        let out = ok(&cli
            .run(&["mission", "show", &sid, "--json"], here.path())
            .await);
        let shown: Value = serde_json::from_str(&out).unwrap();
        let user = shown["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["kind"] == "user" && i["text"] == "See the brief.")
            .unwrap_or_else(|| panic!("{protocol:?}: {shown}"));
        assert_eq!(
            user["files"],
            json!([{"name": "Field brief.docx", "mediaType": DOCX, "size": 3000}]),
            "{protocol:?}"
        );
        let text = ok(&cli.run(&["mission", "show", &sid], here.path()).await);
        assert!(
            text.contains(&format!("  [file] Field brief.docx ({DOCX}, 3.0 KB)")),
            "{protocol:?}: {text}"
        );
        if protocol == MissionProtocol::Eve27 {
            assert!(
                text.contains(
                    "  [file] findings.pdf (application/pdf, 48.2 KB) https://files.example.org/findings.pdf"
                ),
                "{text}"
            );
            assert!(
                text.contains("  [file] chart.png (image/png, 8 B)\n"),
                "{text}"
            );
            assert!(!text.contains("data:image"), "{text}");
        } else {
            assert!(!text.contains("findings.pdf"), "{text}");
        }
        // The transcript lists them too.
        let out = here.path().join("t.md");
        ok(&cli
            .run(
                &[
                    "mission",
                    "export",
                    &sid,
                    "--format",
                    "md",
                    "--output",
                    out.to_str().unwrap(),
                ],
                here.path(),
            )
            .await);
        let md = std::fs::read_to_string(&out).unwrap();
        assert!(
            md.contains(&format!("- File: Field brief\\.docx ({DOCX}, 3.0 KB)")),
            "{protocol:?}: {md}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_past_the_bound_is_refused_by_name_and_nothing_is_sent() {
    let service = missions(MissionProtocol::Eve27, 40).await;
    let (cli, here, sid) = common::followed(&service, "Does shade reduce heat stroke?").await;
    let big = here.path().join("big.pdf");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(12_500_000)
        .unwrap();
    let out = cli
        .run(
            &[
                "mission",
                "reply",
                &sid,
                "--message",
                "Here",
                "--attach",
                big.to_str().unwrap(),
            ],
            here.path(),
        )
        .await;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("big.pdf is 12.5 MB: a reply attaches at most 12.0 MB. Nothing was sent."),
        "{err}"
    );
    assert!(service.posts(&sid).is_empty());
}
