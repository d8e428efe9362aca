//! The plain YAML most config files are made of, read straight from the parser's events: a
//! third of the work of reading it through serde-saphyr, which wraps every value in a span.
//!
//! Read here: one document whose root is a mapping or a list, of mappings and lists (block or
//! flow) holding quoted or block text and plain scalars of four shapes: a word (starting with a
//! letter, `-y`, `/`, `$` or `./`), an integer, a decimal (`0.7`), and `true`, `false` or null (`~`, `null`, nothing).
//! Anything else gives `None` (an anchor, an alias, a tag, another scalar, a null or decimal
//! key, a key twice, a directive, a second document, a syntax error, more nesting, events or
//! text than the limits allow), and the caller reads the text through serde-saphyr, whose values,
//! positions and errors are the reference: the tests hold this reader to them.

use std::borrow::Cow;

use serde_saphyr::granit_parser::{Event, Options, Parser, ScalarStyle, Span, StrInput};

use super::node::{Key, Node, Pos, Value};

/// Nesting read here; deeper files go to serde-saphyr (which allows 64).
const MAX_DEPTH: usize = 32;

/// Parser events read here (serde-saphyr's own limits are far above).
const MAX_EVENTS: usize = 100_000;

/// The events of one text, within serde-saphyr's limits (or ours, where lower): past one,
/// there are no more events, and the text goes to serde-saphyr, which words the breach.
struct Events<'a> {
    parser: Parser<'a, StrInput<'a>>,
    events_left: usize,
    scalar_bytes_left: usize,
    max_depth: usize,
}

impl<'a> Events<'a> {
    fn new(text: &'a str, budget: &serde_saphyr::Budget) -> Self {
        Events {
            parser: Parser::new_from_str_with_options(text, options(budget)),
            events_left: MAX_EVENTS.min(budget.max_events).min(budget.max_nodes),
            scalar_bytes_left: budget.max_total_scalar_bytes,
            max_depth: MAX_DEPTH.min(budget.max_depth),
        }
    }

    /// The next event, or `None` on an error, at the end, or past a limit.
    fn next(&mut self) -> Option<(Event<'a>, Span)> {
        self.events_left = self.events_left.checked_sub(1)?;
        let (event, span) = self.parser.next()?.ok()?;
        if let Event::Scalar(text, ..) = &event {
            self.scalar_bytes_left = self.scalar_bytes_left.checked_sub(text.len())?;
        }
        Some((event, span))
    }
}

/// `text` as a [`Node`] when it is plain YAML as the module says; `None` otherwise.
pub fn read(text: &str, budget: &serde_saphyr::Budget) -> Option<Node> {
    let mut events = Events::new(text, budget);
    matches!(events.next()?.0, Event::StreamStart).then_some(())?;
    matches!(events.next()?.0, Event::DocumentStart(_, None)).then_some(())?;
    let (first, span) = events.next()?;
    if !matches!(first, Event::MappingStart(..) | Event::SequenceStart(..)) {
        return None;
    }
    let root = node(&mut events, first, span, 0)?;
    matches!(events.next()?.0, Event::DocumentEnd).then_some(())?;
    matches!(events.next()?.0, Event::StreamEnd).then_some(root)
}

/// The parser's options as serde-saphyr sets them from `budget`.
fn options(budget: &serde_saphyr::Budget) -> Options {
    let mut options = Options::default();
    options.simple_key_max_lookahead = budget.simple_key_max_lookahead;
    options.flow_nesting_limit = budget.flow_nesting_limit;
    options.block_nesting_limit = options.block_nesting_limit.max(budget.max_depth.saturating_add(1));
    options.strict_indentation = serde_saphyr::Options::default().strict_indentation;
    options.emit_comments = false;
    options
}

/// Where an event starts, as serde-saphyr reports it.
fn pos(span: &Span) -> Pos {
    Pos {
        line: (span.start.line() as u32).max(1),
        column: (span.start.col() as u32).saturating_add(1),
    }
}

/// The node that `event` starts.
fn node(events: &mut Events, event: Event, span: Span, depth: usize) -> Option<Node> {
    let value = match event {
        Event::Scalar(text, style, 0, None) => scalar(text, style)?,
        Event::SequenceStart(_, 0, None) if depth < events.max_depth => Value::Seq(items(events, depth + 1)?),
        Event::MappingStart(_, 0, None) if depth < events.max_depth => Value::Map(entries(events, depth + 1)?),
        _ => return None,
    };
    Some(Node { value, pos: pos(&span) })
}

/// A list's items, up to its end.
fn items(events: &mut Events, depth: usize) -> Option<Vec<Node>> {
    let mut items = Vec::new();
    loop {
        match events.next()? {
            (Event::SequenceEnd, _) => return Some(items),
            (event, span) => items.push(node(events, event, span, depth)?),
        }
    }
}

/// A mapping's entries, up to its end; `None` when a key is not plain text or comes twice.
fn entries(events: &mut Events, depth: usize) -> Option<Vec<(Key, Node)>> {
    let mut entries = Vec::new();
    loop {
        let (event, span) = events.next()?;
        let name = match event {
            Event::MappingEnd => return distinct(&entries).then_some(entries),
            Event::Scalar(text, style, 0, None) => key_text(text, style)?,
            _ => return None,
        };
        let (event, value_span) = events.next()?;
        let value = node(events, event, value_span, depth)?;
        entries.push((Key { name, pos: pos(&span) }, value));
    }
}

/// Whether no key comes twice (serde-saphyr refuses a repeated key).
fn distinct(entries: &[(Key, Node)]) -> bool {
    let mut names: Vec<&str> = entries.iter().map(|(k, _)| k.name.as_str()).collect();
    names.sort_unstable();
    names.windows(2).all(|w| w[0] != w[1])
}

/// A key as text, as `KeyText` reads it: words, integers, `true` and `false` as written.
fn key_text(text: Cow<str>, style: ScalarStyle) -> Option<String> {
    match scalar(text, style)? {
        Value::Str(s) => Some(s),
        Value::Int(i) => Some(i.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A scalar's value: quoted and block text as it is; plain text of the four shapes.
fn scalar(text: Cow<str>, style: ScalarStyle) -> Option<Value> {
    if style != ScalarStyle::Plain {
        return Some(Value::Str(text.into_owned()));
    }
    match text.as_ref() {
        "" | "~" | "null" | "Null" | "NULL" => return Some(Value::Null),
        "true" => return Some(Value::Bool(true)),
        "false" => return Some(Value::Bool(false)),
        _ => {}
    }
    if word(&text) {
        return Some(Value::Str(text.into_owned()));
    }
    number(&text)
}

/// Whether plain text is a word no YAML reader takes for anything else: it starts with a
/// letter (after a sign: `-y`; any non-ASCII character too), a `/`, a `$` or a path's `.`, `..`, `./`, and is not a
/// boolean, null or float word.
fn word(text: &str) -> bool {
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    match unsigned.as_bytes().first() {
        Some(b'/' | b'$') => unsigned.len() == text.len(),
        Some(b'.') => unsigned.len() == text.len() && matches!(text.as_bytes().get(1), None | Some(b'.' | b'/')),
        Some(b) if b.is_ascii_alphabetic() || !b.is_ascii() => !special_word(text) && !float_word(unsigned),
        _ => false,
    }
}

/// Words YAML 1.1 reads as booleans or null, in any case.
fn special_word(word: &str) -> bool {
    const WORDS: [&str; 9] = ["y", "yes", "n", "no", "true", "false", "on", "off", "null"];
    WORDS.iter().any(|w| word.eq_ignore_ascii_case(w))
}

/// Words Rust reads as floats, in any case.
fn float_word(word: &str) -> bool {
    ["inf", "infinity", "nan"].iter().any(|w| word.eq_ignore_ascii_case(w))
}

/// `123` (no leading zero, at most 18 digits) or `0.75` (at most 15 digits in all).
fn number(text: &str) -> Option<Value> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let plain_whole = |s: &str| digits(s) && (s == "0" || !s.starts_with('0'));
    match text.split_once('.') {
        None if plain_whole(text) && text.len() <= 18 => text.parse().ok().map(Value::Int),
        Some((whole, fraction)) if plain_whole(whole) && digits(fraction) && text.len() <= 16 => {
            text.parse().ok().map(Value::Float)
        }
        _ => None,
    }
}
