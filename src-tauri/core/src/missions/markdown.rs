//! An assistant's Markdown as HTML a window can show as it is: CommonMark with tables,
//! strikethrough and task lists, where the service's text can never become markup of its
//! own. Raw HTML in the message is shown as text, and a link or image keeps its URL only
//! when it is http(s) or mailto (a `javascript:` link becomes plain text). The window
//! opens links in the system browser, never in itself.

use pulldown_cmark::{CowStr, Event, LinkType, Options, Parser, Tag, TagEnd, html};

/// `md` as safe HTML.
pub fn to_html(md: &str) -> String {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut dropped_links = 0usize;
    let events = Parser::new_ext(md, options).filter_map(|e| match e {
        Event::Html(s) | Event::InlineHtml(s) => Some(Event::Text(s)),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => {
            if safe_url(&dest_url) {
                Some(Event::Start(Tag::Link {
                    link_type,
                    dest_url,
                    title,
                    id,
                }))
            } else {
                dropped_links += 1;
                None
            }
        }
        Event::End(TagEnd::Link) if dropped_links > 0 => {
            dropped_links -= 1;
            None
        }
        // An image would be fetched by the window: shown as a link to it instead.
        Event::Start(Tag::Image {
            dest_url,
            title,
            id,
            ..
        }) => {
            if safe_url(&dest_url) {
                Some(Event::Start(Tag::Link {
                    link_type: LinkType::Inline,
                    dest_url,
                    title,
                    id,
                }))
            } else {
                dropped_links += 1;
                None
            }
        }
        Event::End(TagEnd::Image) => {
            if dropped_links > 0 {
                dropped_links -= 1;
                None
            } else {
                Some(Event::End(TagEnd::Link))
            }
        }
        other => Some(other),
    });
    let mut out = String::with_capacity(md.len() * 3 / 2);
    html::push_html(&mut out, events);
    out
}

fn safe_url(url: &CowStr<'_>) -> bool {
    is_safe_url(url)
}

/// Whether a link to `url` is kept: http(s) and mailto only, here and in the report's
/// Word document (`report_docx`).
pub fn is_safe_url(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    lower.starts_with("https://") || lower.starts_with("http://") || lower.starts_with("mailto:")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_renders_and_nothing_from_the_service_becomes_markup() {
        let html = to_html("# Findings\n\n- **a** ([WHO](https://who.int/x))\n- b\n");
        assert!(html.contains("<h1>Findings</h1>"), "{html}");
        assert!(html.contains("<strong>a</strong>"), "{html}");
        assert!(
            html.contains("<a href=\"https://who.int/x\">WHO</a>"),
            "{html}"
        );
        let html = to_html("hi <script>alert(1)</script> <img src=x onerror=alert(1)>");
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        let html = to_html("[click](javascript:alert(1)) and ![pic](data:image/png;base64,xx)");
        assert!(!html.contains("javascript:"), "{html}");
        assert!(!html.contains("data:"), "{html}");
        assert!(html.contains("click"), "{html}");
        let html = to_html("![chart](https://example.org/c.png)");
        assert!(
            html.contains("<a href=\"https://example.org/c.png\">chart</a>"),
            "{html}"
        );
        assert!(!html.contains("<img"), "{html}");
    }
}
