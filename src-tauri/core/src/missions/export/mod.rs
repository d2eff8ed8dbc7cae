//! What a mission is exported as: its transcript in Markdown or JSON ([`transcript`]) and
//! its report as a Word document ([`report_docx`]).

pub mod report_docx;
pub mod transcript;
