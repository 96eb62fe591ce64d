//! Every `redlock-loadgen` command line the README and the book show parses with the real
//! command-line parser, so a renamed flag or a changed value syntax cannot leave the docs
//! showing a command that no longer works.

use std::path::{Path, PathBuf};

use clap::error::ErrorKind;
use clap::Parser;
use redlock_loadgen::cli::Cli;

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace root")
        .to_path_buf()
}

/// The README and every page of the book.
fn documents() -> Vec<PathBuf> {
    let root = repository();
    let mut found = vec![root.join("README.md")];
    let pages = std::fs::read_dir(root.join("docs/src")).expect("docs/src");
    found.extend(
        pages
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "md")),
    );
    found.sort();
    found
}

/// The command lines of a document's `sh` blocks: continuations joined, comments dropped.
fn shell_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut in_sh = false;
    let mut pending = String::new();
    for line in text.lines() {
        if let Some(lang) = line.strip_prefix("```") {
            in_sh = !in_sh && lang.trim() == "sh";
            continue;
        }
        if !in_sh || line.trim_start().starts_with('#') {
            continue;
        }
        let code = line.split(" #").next().unwrap_or("").trim_end();
        if let Some(head) = code.strip_suffix('\\') {
            pending.push_str(head);
            pending.push(' ');
            continue;
        }
        pending.push_str(code);
        lines.push(std::mem::take(&mut pending).trim().to_string());
    }
    lines
}

/// Words of a command line as a POSIX shell splits them (single and double quotes).
fn split_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    assert!(quote.is_none(), "unbalanced quote in {line:?}");
    words.extend(word);
    words
}

/// True when the shell would substitute part of the line (`$(...)`, `$NAME`, backquotes):
/// its words are only known when it runs.
fn expands(line: &str) -> bool {
    line.contains('`')
        || line.split('$').skip(1).any(|after| {
            after.starts_with(['(', '{'])
                || after.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        })
}

#[test]
fn every_command_line_in_the_docs_parses() {
    let mut checked = 0;
    for document in documents() {
        let text = std::fs::read_to_string(&document).expect("readable");
        for line in shell_lines(&text) {
            let words = split_words(&line);
            let Some(first) = words.first() else { continue };
            if !first.ends_with("redlock-loadgen") || expands(&line) {
                continue;
            }
            let mut argv = vec!["redlock-loadgen".to_string()];
            argv.extend(words[1..].iter().cloned());
            if let Err(e) = Cli::try_parse_from(&argv) {
                assert!(
                    matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion),
                    "{}: `{line}` does not parse: {e}",
                    document.display()
                );
            }
            checked += 1;
        }
    }
    assert!(
        checked >= 15,
        "only {checked} command lines found: the docs moved?"
    );
}
