//! Text the CLI did not write (the services' answers, mission records, documents,
//! file names), made safe to show on a terminal.
//!
//! A terminal obeys control characters wherever they come from: a server's text
//! could set the window title, write the clipboard (OSC 52), clear the screen, ask
//! the terminal to answer (`ESC [6n`), disguise a link (OSC 8), overwrite a printed
//! line (a lone CR, backspaces) or reorder what is shown (bidirectional overrides).
//! Here every such character is shown instead of obeyed, the way `cat -v` and `less`
//! show them, so what is printed can be read and nothing in it acts.

use std::borrow::Cow;
use std::io::{self, Write};

/// `println!` for a line that holds text the CLI did not write: the whole line goes
/// through [`safe`] (the CLI's own words have no controls to lose).
macro_rules! say {
    ($($arg:tt)*) => {
        println!("{}", $crate::terminal::safe(&format!($($arg)*)))
    };
}

/// [`say!`] on stderr.
macro_rules! tell {
    ($($arg:tt)*) => {
        eprintln!("{}", $crate::terminal::safe(&format!($($arg)*)))
    };
}

pub(crate) use {say, tell};

/// Unicode's bidirectional formatting characters: embeddings and overrides
/// (U+202A–U+202E), isolates (U+2066–U+2069), the implicit marks (U+200E, U+200F)
/// and the Arabic letter mark (U+061C).
fn is_bidi(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

fn needs_care(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || is_bidi(c)
}

/// `text` as a terminal should show it: newlines and tabs kept, a CRLF line end made
/// a newline, other C0 controls and DEL in caret notation (`^[`, `^G`, `^M`, `^?`),
/// C1 controls as `\x9b`, bidirectional controls as `<U+202E>`.
pub fn safe(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_care) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' | '\t' => out.push(c),
            '\u{0}'..='\u{1f}' => {
                out.push('^');
                out.push(char::from(c as u8 + 0x40));
            }
            '\u{7f}' => out.push_str("^?"),
            '\u{80}'..='\u{9f}' => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if is_bidi(c) => out.push_str(&format!("<U+{:04X}>", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// JSON as the CLI prints it: the same value, with DEL, the C1 controls and the
/// bidirectional controls written as `\u` escapes. serde_json already escapes C0
/// controls; the others it leaves raw, and a terminal that reads UTF-8 may take
/// U+009B for CSI. Outside strings JSON is ASCII, so every such character is inside
/// a string, where the escape stands for the very same character.
pub fn json(text: String) -> String {
    let raw = |c: char| c as u32 >= 0x7f && needs_care(c);
    if !text.chars().any(raw) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if raw(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// A writer for a stream of text the CLI passes through (a cited essay, a
/// transcript) to a terminal: [`safe`] applied as it goes, holding back only a
/// UTF-8 sequence or a CR a write ends inside, until the next write or `flush`.
pub struct SafeWriter<W: Write> {
    inner: W,
    held: Vec<u8>,
}

impl<W: Write> SafeWriter<W> {
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            held: Vec::new(),
        }
    }

    fn pass(&mut self, end: bool) -> io::Result<()> {
        let mut upto = if end {
            self.held.len()
        } else {
            match std::str::from_utf8(&self.held) {
                Ok(_) => self.held.len(),
                // An invalid sequence is shown as U+FFFD; only an unfinished one waits.
                Err(e) if e.error_len().is_none() => e.valid_up_to(),
                Err(_) => self.held.len(),
            }
        };
        // A CR at the end may be the first half of a CRLF.
        if !end && upto > 0 && self.held[upto - 1] == b'\r' {
            upto -= 1;
        }
        let text = String::from_utf8_lossy(&self.held[..upto]);
        self.inner.write_all(safe(&text).as_bytes())?;
        self.held.drain(..upto);
        Ok(())
    }
}

impl<W: Write> Write for SafeWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.held.extend_from_slice(buf);
        self.pass(false)?;
        Ok(buf.len())
    }

    /// Flushing ends the text: what was held back is shown as it is.
    fn flush(&mut self) -> io::Result<()> {
        self.pass(true)?;
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_shows_controls_instead_of_obeying_them() {
        let table: &[(&str, &str, &str)] = &[
            ("plain text", "Heat and health", "Heat and health"),
            ("newline and tab", "a\tb\nc", "a\tb\nc"),
            ("crlf line ends", "one\r\ntwo\r\n", "one\ntwo\n"),
            ("lone cr", "done\rfake", "done^Mfake"),
            ("cr before cr lf", "a\r\r\nb", "a^M\nb"),
            ("trailing cr", "a\r", "a^M"),
            ("osc title, bel", "\x1b]0;pwned\x07", "^[]0;pwned^G"),
            (
                "osc 52 clipboard",
                "\x1b]52;c;ZWNobyBoaQ==\x1b\\",
                "^[]52;c;ZWNobyBoaQ==^[\\",
            ),
            ("clear screen", "\x1b[2Jx", "^[[2Jx"),
            ("device status", "\x1b[6n", "^[[6n"),
            (
                "osc 8 link",
                "\x1b]8;;https://evil.example\x1b\\safe\x1b]8;;\x1b\\",
                "^[]8;;https://evil.example^[\\safe^[]8;;^[\\",
            ),
            ("backspaces", "rm\x08\x08ok", "rm^H^Hok"),
            ("nul and us", "\0\x1f", "^@^_"),
            ("del", "a\x7fb", "a^?b"),
            ("c1 csi", "\u{9b}2J", "\\x9b2J"),
            ("c1 bounds", "\u{80}\u{9f}\u{a0}", "\\x80\\x9f\u{a0}"),
            ("rlo", "abc\u{202E}fdp.exe", "abc<U+202E>fdp.exe"),
            (
                "embeddings",
                "\u{202A}\u{202B}\u{202C}\u{202D}",
                "<U+202A><U+202B><U+202C><U+202D>",
            ),
            (
                "isolates",
                "\u{2066}\u{2067}\u{2068}\u{2069}",
                "<U+2066><U+2067><U+2068><U+2069>",
            ),
            (
                "marks",
                "\u{200E}\u{200F}\u{061C}",
                "<U+200E><U+200F><U+061C>",
            ),
            ("zero width joiner kept", "a\u{200D}b", "a\u{200D}b"),
            ("other scripts kept", "شكرا ¶ “x” →", "شكرا ¶ “x” →"),
        ];
        for (name, input, shown) in table {
            assert_eq!(safe(input), *shown, "{name}");
        }
        assert!(matches!(safe("no controls"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_escapes_what_a_terminal_would_obey_and_keeps_the_value() {
        let value = serde_json::json!({
            "t": "\x1b]0;x\x07 \u{9b}6n \u{202E}gnp \x7f é",
        });
        let text = json(serde_json::to_string(&value).unwrap());
        assert!(
            !text.chars().any(|c| c.is_control() || is_bidi(c)),
            "{text}"
        );
        assert!(text.contains("\\u009b") && text.contains("\\u202e") && text.contains('é'));
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn the_writer_holds_back_only_what_a_write_cuts() {
        let input = "a\r\nb\u{9b}c\u{202E}d\re\x1b[2J".as_bytes();
        for cut in 1..input.len() {
            let mut w = SafeWriter::new(Vec::new());
            w.write_all(&input[..cut]).unwrap();
            w.write_all(&input[cut..]).unwrap();
            w.flush().unwrap();
            assert_eq!(
                String::from_utf8(w.inner).unwrap(),
                "a\nb\\x9bc<U+202E>d^Me^[[2J",
                "cut at {cut}"
            );
        }
    }
}
