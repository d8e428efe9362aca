//! What a compiled expression is checked for before it is kept: macros nested or chained no
//! deeper than [`MAX_MACRO_DEPTH`], and the departments it names.

use cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};

use super::MAX_MACRO_DEPTH;

/// Every sub-expression of `e`, with how many macros (comprehensions) enclose it or take
/// it as what they range over: in `a.map(x, …).map(y, …)` the first `map` is one deep, as a
/// `map` inside the second's body would be, since each link of a chain can multiply what
/// the next one turns over.
fn walk<'e>(e: &'e IdedExpr, depth: usize, visit: &mut dyn FnMut(&'e IdedExpr, usize)) {
    visit(e, depth);
    match &e.expr {
        Expr::Call(call) => {
            if let Some(target) = &call.target {
                walk(target, depth, visit);
            }
            for a in &call.args {
                walk(a, depth, visit);
            }
        }
        Expr::Comprehension(c) => {
            walk(&c.iter_range, depth + 1, visit);
            walk(&c.accu_init, depth, visit);
            for part in [&c.loop_cond, &c.loop_step, &c.result] {
                walk(part, depth + 1, visit);
            }
        }
        Expr::List(list) => list.elements.iter().for_each(|x| walk(x, depth, visit)),
        Expr::Map(map) => map.entries.iter().for_each(|x| entry(&x.expr, depth, visit)),
        Expr::Struct(s) => s.entries.iter().for_each(|x| entry(&x.expr, depth, visit)),
        Expr::Select(select) => walk(&select.operand, depth, visit),
        Expr::Unspecified | Expr::Ident(_) | Expr::Literal(_) => {}
    }
}

fn entry<'e>(e: &'e EntryExpr, depth: usize, visit: &mut dyn FnMut(&'e IdedExpr, usize)) {
    match e {
        EntryExpr::MapEntry(m) => {
            walk(&m.key, depth, visit);
            walk(&m.value, depth, visit);
        }
        EntryExpr::StructField(f) => walk(&f.value, depth, visit),
    }
}

/// Macros nested or chained deeper than allowed are refused: a bound on how long
/// evaluation takes.
pub fn check(root: &IdedExpr) -> Result<(), String> {
    let mut deepest = 0;
    walk(root, 0, &mut |_, depth| deepest = deepest.max(depth));
    match deepest > MAX_MACRO_DEPTH {
        true => Err(format!(
            "macros (all, exists, map, filter) nest or chain {deepest} deep; at most {MAX_MACRO_DEPTH} are allowed"
        )),
        false => Ok(()),
    }
}

/// The ids named as `departments.ID` or `departments['ID']`, sorted, each once.
pub fn departments(root: &IdedExpr) -> Vec<String> {
    let mut ids = Vec::new();
    walk(root, 0, &mut |e, _| {
        let named = match &e.expr {
            Expr::Select(s) if is_departments(&s.operand) => Some(s.field.clone()),
            Expr::Call(c) if c.func_name == "_[_]" || c.func_name == "_[?_]" => match c.args.as_slice() {
                [operand, key] if is_departments(operand) => match &key.expr {
                    Expr::Literal(LiteralValue::String(s)) => Some(s.inner().to_string()),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        };
        ids.extend(named);
    });
    ids.sort();
    ids.dedup();
    ids
}

fn is_departments(e: &IdedExpr) -> bool {
    matches!(&e.expr, Expr::Ident(name) if name == "departments")
}
