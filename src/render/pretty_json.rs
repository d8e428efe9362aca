//! serde_json's pretty layout (an indent of two spaces), with each line's break and indent
//! written in one piece: a run's report is mostly keys on lines of their own, and serde_json
//! writes an indent two spaces at a time.

use std::io::{self, Write};

use serde_json::ser::Formatter;

/// `value` as `serde_json::to_writer_pretty` writes it, byte for byte.
pub fn write_pretty_json(out: &mut impl Write, value: &impl serde::Serialize) -> io::Result<()> {
    write_pretty_json_at(out, value, 0)
}

/// The same, for a value written `depth` levels in (its lines indented by as many levels).
pub fn write_pretty_json_at(out: &mut impl Write, value: &impl serde::Serialize, depth: usize) -> io::Result<()> {
    let pretty = Pretty {
        depth,
        has_value: false,
    };
    let mut serializer = serde_json::Serializer::with_formatter(out, pretty);
    value.serialize(&mut serializer).map_err(io::Error::from)
}

/// Levels of indent written in one piece; deeper lines add the rest two spaces at a time.
const LEVELS: usize = 64;

/// `,` and a line break, then the indent of [`LEVELS`] levels.
const LINE: [u8; 2 + 2 * LEVELS] = {
    let mut line = [b' '; 2 + 2 * LEVELS];
    line[0] = b',';
    line[1] = b'\n';
    line
};

/// serde_json's `PrettyFormatter` with an indent of two spaces.
struct Pretty {
    depth: usize,
    has_value: bool,
}

impl Pretty {
    /// A line break (after a comma when `comma`) and the current indent.
    fn new_line<W: ?Sized + Write>(&self, out: &mut W, comma: bool) -> io::Result<()> {
        let from = usize::from(!comma);
        out.write_all(&LINE[from..2 + 2 * self.depth.min(LEVELS)])?;
        for _ in LEVELS..self.depth {
            out.write_all(b"  ")?;
        }
        Ok(())
    }

    fn open<W: ?Sized + Write>(&mut self, out: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        out.write_all(bracket)
    }

    fn close<W: ?Sized + Write>(&mut self, out: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            self.new_line(out, false)?;
        }
        out.write_all(bracket)
    }
}

impl Formatter for Pretty {
    fn begin_array<W: ?Sized + Write>(&mut self, out: &mut W) -> io::Result<()> {
        self.open(out, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, out: &mut W) -> io::Result<()> {
        self.close(out, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, out: &mut W, first: bool) -> io::Result<()> {
        self.new_line(out, !first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _out: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, out: &mut W) -> io::Result<()> {
        self.open(out, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, out: &mut W) -> io::Result<()> {
        self.close(out, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, out: &mut W, first: bool) -> io::Result<()> {
        self.new_line(out, !first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, out: &mut W) -> io::Result<()> {
        out.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _out: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    fn both(value: &Value) -> (String, String) {
        let mut ours = Vec::new();
        super::write_pretty_json(&mut ours, value).unwrap();
        (
            String::from_utf8(ours).unwrap(),
            serde_json::to_string_pretty(value).unwrap(),
        )
    }

    #[test]
    fn the_layout_is_serdes_byte_for_byte() {
        let mut deep = json!({"leaf": [1, {}, []]});
        for level in 0..70 {
            deep = if level % 2 == 0 {
                json!([deep, "x"])
            } else {
                json!({"k": deep, "e": {}})
            };
        }
        let values = [
            json!({}),
            json!([]),
            json!(null),
            json!("t\"ext\n\u{1}"),
            json!({"a": [], "b": {}, "c": [[], [{}], {"d": null}], "e": 1.5, "f": -2, "g": true}),
            json!([[[]], [1, 2], {"x": {"y": {"z": "w"}}}]),
            deep,
        ];
        for value in &values {
            let (ours, serdes) = both(value);
            assert_eq!(ours, serdes);
        }
        for value in &values {
            let mut one_in = Vec::new();
            super::write_pretty_json_at(&mut one_in, value, 1).unwrap();
            let serdes = serde_json::to_string_pretty(value).unwrap().replace('\n', "\n  ");
            assert_eq!(String::from_utf8(one_in).unwrap(), serdes);
        }
        assert!(both(&values[6])
            .0
            .contains(&format!("\n{}\"leaf\"", " ".repeat(2 * 71))));
    }
}
