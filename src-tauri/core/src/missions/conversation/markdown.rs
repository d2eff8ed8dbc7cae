//! An assistant's Markdown as HTML a window can show as it is: CommonMark with tables,
//! strikethrough and task lists, where the service's text can never become markup of its
//! own. Raw HTML in the message is shown as text, and a link or image keeps its URL only
//! when it is http(s) or mailto (a `javascript:` link becomes plain text). The window
//! opens links in the system browser, never in itself.

use pulldown_cmark::{CowStr, Event, LinkType, Options, Parser, Tag, TagEnd, html};

/// `md` as safe HTML, and where each of its top-level blocks (a paragraph, a list, a
/// table…) starts in it, in UTF-16 code units (JavaScript's string offsets): a window
/// following a long reply draws its last blocks alone, cut where a block starts.
pub fn to_html_blocks(md: &str) -> (String, Vec<u32>) {
    let mut out = String::with_capacity(md.len() * 3 / 2);
    let mut starts = Vec::new();
    let (mut depth, mut units) = (0usize, 0usize);
    let mut block = Vec::new();
    for event in safe_events(md) {
        let opens = matches!(event, Event::Start(_));
        let closes = matches!(event, Event::End(_));
        block.push(event);
        depth = if opens {
            depth + 1
        } else if closes {
            depth.saturating_sub(1)
        } else {
            depth
        };
        // A block is written whole, when it ends: the writer is given one block at a
        // time, each written as it would be among the others (it starts and ends on a
        // line of its own).
        if depth == 0 {
            let at = out.len();
            html::push_html(&mut out, block.drain(..));
            starts.push(u32::try_from(units).unwrap_or(u32::MAX));
            units += out[at..].encode_utf16().count();
        }
    }
    if !block.is_empty() {
        starts.push(u32::try_from(units).unwrap_or(u32::MAX));
        html::push_html(&mut out, block.drain(..));
    }
    (out, starts)
}

/// `md`'s events, with raw HTML as text and links and images kept only to safe URLs.
fn safe_events(md: &str) -> impl Iterator<Item = Event<'_>> {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut dropped_links = 0usize;
    Parser::new_ext(md, options).filter_map(move |e| match e {
        Event::Html(s) | Event::InlineHtml(s) => Some(Event::Text(s)),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => kept_link(link_type, dest_url, title, id, &mut dropped_links),
        // An image would be fetched by the window: shown as a link to it instead.
        Event::Start(Tag::Image {
            dest_url,
            title,
            id,
            ..
        }) => kept_link(LinkType::Inline, dest_url, title, id, &mut dropped_links),
        Event::End(TagEnd::Link | TagEnd::Image) if dropped_links > 0 => {
            dropped_links -= 1;
            None
        }
        Event::End(TagEnd::Image) => Some(Event::End(TagEnd::Link)),
        other => Some(other),
    })
}

/// A link's start, kept only to a safe URL; a dropped one is counted, so its end goes too.
fn kept_link<'a>(
    link_type: LinkType,
    dest_url: CowStr<'a>,
    title: CowStr<'a>,
    id: CowStr<'a>,
    dropped: &mut usize,
) -> Option<Event<'a>> {
    if !safe_url(&dest_url) {
        *dropped += 1;
        return None;
    }
    Some(Event::Start(Tag::Link {
        link_type,
        dest_url,
        title,
        id,
    }))
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

    fn to_html(md: &str) -> String {
        to_html_blocks(md).0
    }

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

    #[test]
    fn a_messages_blocks_start_where_a_window_can_cut_it_counted_in_utf16() {
        let md = "# Heat 🌡\n\nFirst “quoted” café.\n\n- one\n- two\n\n  nested para\n\n\
                  | a | b |\n|---|---|\n| 1 | 2 |\n\n---\n\n```\ncode\n\n<b>x</b>\n```\n\n\
                  <div>raw</div>\n\n> quote\n>\n> more\n\n- [x] done\n\nLast ✅ [WHO](https://who.int).";
        let (html, starts) = to_html_blocks(md);
        // The same HTML as the writer makes from all the events at once.
        let mut whole = String::new();
        html::push_html(&mut whole, safe_events(md));
        assert_eq!(html, whole);
        let units: Vec<u16> = html.encode_utf16().collect();
        let block = |i: usize| {
            let end = starts.get(i + 1).map_or(units.len(), |&e| e as usize);
            String::from_utf16(&units[starts[i] as usize..end]).unwrap()
        };
        let blocks: Vec<String> = (0..starts.len()).map(block).collect();
        assert_eq!(
            blocks
                .iter()
                .map(|b| b.split(['>', ' ']).next().unwrap())
                .collect::<Vec<_>>(),
            [
                "<h1",
                "<p",
                "<ul",
                "<table",
                "<hr",
                "<pre",
                // Raw HTML shown as text: a block with no tag of its own.
                "&lt;div&gt;raw&lt;/div&gt;\n",
                "<blockquote",
                "<ul",
                "<p"
            ],
            "{blocks:#?}"
        );
        assert_eq!(
            blocks.last().unwrap(),
            "<p>Last ✅ <a href=\"https://who.int\">WHO</a>.</p>\n"
        );
        assert!(blocks[2].contains("nested para") && blocks[2].ends_with("</ul>\n"));
        assert_eq!(blocks.concat(), html);
        assert_eq!(to_html_blocks("").1, Vec::<u32>::new());
    }
}
