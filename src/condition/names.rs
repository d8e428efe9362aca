//! The free names of an expression: the variables it reads from its scope. A macro's own
//! variables (`x` in `items.exists(x, x > 1)`) are bound inside it, not free, and names the
//! standard library resolves itself (the types `int`, `double`, `map`, …, and the `optional`
//! namespace of `optional.of`) are not read from the scope.

use std::sync::LazyLock;

use cel::common::ast::{EntryExpr, Expr, IdedExpr};
use cel::Env;

/// The standard library, whose types a name may spell.
static LIBRARY: LazyLock<Env> = LazyLock::new(Env::stdlib);

/// Whether `name` is the library's own: a type, or the `optional` functions' namespace.
fn library_name(name: &str) -> bool {
    name == "optional" || LIBRARY.types().find_type(name).is_some()
}

/// The free variables of `root`, sorted, each once.
pub fn free(root: &IdedExpr) -> Vec<String> {
    let mut names = Vec::new();
    collect(root, &mut Vec::new(), &mut names);
    names.sort();
    names.dedup();
    names
}

/// Adds to `out` the names `e` reads that no enclosing macro in `bound` binds.
fn collect<'e>(e: &'e IdedExpr, bound: &mut Vec<&'e str>, out: &mut Vec<String>) {
    match &e.expr {
        Expr::Ident(name) => {
            // `@`-names are the parser's own accumulators.
            if !name.starts_with('@') && !bound.contains(&name.as_str()) && !library_name(name) {
                out.push(name.clone());
            }
        }
        Expr::Call(call) => {
            if let Some(target) = &call.target {
                collect(target, bound, out);
            }
            call.args.iter().for_each(|a| collect(a, bound, out));
        }
        Expr::Comprehension(c) => {
            collect(&c.iter_range, bound, out);
            collect(&c.accu_init, bound, out);
            let before = bound.len();
            bound.push(&c.iter_var);
            bound.extend(c.iter_var2.as_deref());
            bound.push(&c.accu_var);
            for part in [&c.loop_cond, &c.loop_step, &c.result] {
                collect(part, bound, out);
            }
            bound.truncate(before);
        }
        Expr::List(list) => list.elements.iter().for_each(|x| collect(x, bound, out)),
        Expr::Map(map) => map.entries.iter().for_each(|x| entry(&x.expr, bound, out)),
        Expr::Struct(s) => s.entries.iter().for_each(|x| entry(&x.expr, bound, out)),
        Expr::Select(select) => collect(&select.operand, bound, out),
        Expr::Unspecified | Expr::Literal(_) => {}
    }
}

fn entry<'e>(e: &'e EntryExpr, bound: &mut Vec<&'e str>, out: &mut Vec<String>) {
    match e {
        EntryExpr::MapEntry(m) => {
            collect(&m.key, bound, out);
            collect(&m.value, bound, out);
        }
        EntryExpr::StructField(f) => collect(&f.value, bound, out),
    }
}

#[cfg(test)]
mod tests {
    use super::free;

    fn names(text: &str) -> Vec<String> {
        free(cel::Program::compile(text).unwrap().expression())
    }

    #[test]
    fn a_macros_own_variables_are_not_free() {
        assert_eq!(names("output.items.exists(x, x > urgency)"), ["output", "urgency"]);
        assert_eq!(names("[1].map(x, [2].all(y, x < y)) == [true]"), Vec::<String>::new());
        assert_eq!(
            names("has(departments.a.output) && tool == 'w'"),
            ["departments", "tool"]
        );
        // A macro variable named like a scope name hides it only inside the macro.
        assert_eq!(names("[1].exists(output, output > 0) || output == 1"), ["output"]);
        assert_eq!(names("{'k': request}.k == arguments.p"), ["arguments", "request"]);
        // The library's types and namespace are no names of the scope.
        assert_eq!(
            names("type(urgency) == double && optional.of(1).hasValue()"),
            ["urgency"]
        );
    }
}
