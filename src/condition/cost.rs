//! What one evaluation may spend: a budget of steps and of the size of the values it builds,
//! and the run's deadline.
//!
//! CEL has no loops, but a comprehension over a model's output runs once per item, nested
//! ones multiply, and `x + x` in a chain of `map`s doubles a value at each link. So an
//! expression is rewritten once, when it compiles, so that every operation passes its result
//! through a meter ([`instrument`]); the meter counts a step for each, adds the size of each
//! value built (a string's or bytes' length, a list's or map's entries), and ends the
//! evaluation with an error as soon as either total passes its bound ([`MAX_STEPS`],
//! [`MAX_BUILT`]) or the deadline has passed. An evaluation cut this way is an evaluation
//! error like any other: false for `when`, a person asked for an approval.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use cel::common::ast::{operators, CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedExpr};
use cel::common::types::{CelBytes, CelString};
use cel::common::value::CowVal;
use cel::{Context, ExecutionError, FunctionContext};

/// The most operations one evaluation may perform.
pub const MAX_STEPS: u64 = 100_000;
/// The most it may build, summed over every value it builds: bytes of strings and bytes,
/// entries of lists and maps.
pub const MAX_BUILT: u64 = 1_000_000;
/// How many steps pass between two looks at the clock.
const CLOCK_EVERY: u64 = 256;

/// The meter's name for an operation that only counts a step.
const STEP: &str = "@orch_step";
/// The meter's name for an operation that builds a value (a step and its size).
const BUILD: &str = "@orch_build";

/// What one evaluation has spent, shared by its meters.
#[derive(Debug)]
pub struct Spent {
    steps: AtomicU64,
    built: AtomicU64,
    deadline: Option<Instant>,
    /// Why the evaluation was stopped, once it was.
    stopped: OnceLock<String>,
}

impl Spent {
    /// Nothing spent yet; `deadline`: when the run must end, if it must.
    pub fn new(deadline: Option<Instant>) -> Arc<Spent> {
        Arc::new(Spent {
            steps: AtomicU64::new(0),
            built: AtomicU64::new(0),
            deadline,
            stopped: OnceLock::new(),
        })
    }

    /// Why a meter stopped the evaluation, if one did.
    pub fn stopped(&self) -> Option<String> {
        self.stopped.get().cloned()
    }

    /// Why the evaluation must stop, once it must: the first bound it passed.
    fn exceeded(&self) -> Option<String> {
        let steps = self.steps.load(Ordering::Relaxed);
        let built = self.built.load(Ordering::Relaxed);
        if steps > MAX_STEPS {
            return Some(format!("the expression took more than {MAX_STEPS} steps"));
        }
        if built > MAX_BUILT {
            return Some(format!(
                "the expression built more than {MAX_BUILT} bytes and entries of values"
            ));
        }
        let late = self.deadline.is_some_and(|d| Instant::now() >= d);
        late.then(|| "the run's deadline passed during evaluation".to_string())
    }

    /// Counts one step and `size` built; an error once a bound is passed.
    fn spend(&self, size: u64) -> Result<(), ExecutionError> {
        let steps = self.steps.fetch_add(1, Ordering::Relaxed) + 1;
        let built = self.built.fetch_add(size, Ordering::Relaxed) + size;
        let look = steps > MAX_STEPS || built > MAX_BUILT || steps.is_multiple_of(CLOCK_EVERY);
        match look.then(|| self.exceeded()).flatten() {
            Some(why) => Err(ExecutionError::function_error("cost", self.stopped.get_or_init(|| why))),
            None => Ok(()),
        }
    }
}

/// A meter as the evaluator calls it: the value in, the same value out, or an error.
type Meter =
    Box<dyn for<'c, 'd> Fn(&mut FunctionContext<'c, 'd>) -> Result<CowVal<'c, 'd>, ExecutionError> + Send + Sync>;

/// Installs the two meters of `spent` in `cx`.
pub fn meter(cx: &mut Context<'static, 'static>, spent: &Arc<Spent>) {
    for (name, sized) in [(STEP, false), (BUILD, true)] {
        let spent = spent.clone();
        let f: Meter = Box::new(move |ftx| {
            let value = ftx.args.pop().ok_or_else(ExecutionError::missing_argument_or_target)?;
            spent.spend(if sized { size(&value) } else { 0 })?;
            Ok(value)
        });
        // The names start with `@`, which no expression can spell: never a conflict.
        let _ = cx.add_function(name, f);
    }
}

/// How much a value holds at its top level: a string's or bytes' length, a list's or map's
/// entries (what building it copied; the values inside are shared, not copied).
fn size(value: &CowVal<'_, '_>) -> u64 {
    let n = if let Some(s) = value.downcast_ref::<CelString>() {
        s.inner().len()
    } else if let Some(b) = value.downcast_ref::<CelBytes>() {
        b.inner().len()
    } else {
        // Lists and maps know their length; other values have no size.
        return value
            .as_sizer()
            .map_or(0, |s| u64::try_from(*s.size().inner()).unwrap_or(0));
    };
    n as u64
}

/// `e` with every operation passed through a meter: calls, list and map literals, and one
/// step for each turn of a comprehension.
pub fn instrument(e: &IdedExpr) -> IdedExpr {
    let id = e.id;
    match &e.expr {
        Expr::Call(call) => metered(id, builds_value(&call.func_name), Expr::Call(instrument_call(call))),
        Expr::Comprehension(c) => IdedExpr {
            id,
            expr: Expr::Comprehension(Box::new(instrument_comprehension(c))),
        },
        Expr::List(list) => {
            let mut list = list.clone();
            list.elements = list.elements.iter().map(instrument).collect();
            metered(id, true, Expr::List(list))
        }
        Expr::Map(map) => {
            let mut map = map.clone();
            for entry in &mut map.entries {
                if let EntryExpr::MapEntry(m) = &mut entry.expr {
                    m.key = instrument(&m.key);
                    m.value = instrument(&m.value);
                }
            }
            metered(id, true, Expr::Map(map))
        }
        Expr::Select(s) => {
            let mut s = s.clone();
            s.operand = Box::new(instrument(&s.operand));
            IdedExpr {
                id,
                expr: Expr::Select(s),
            }
        }
        Expr::Struct(_) | Expr::Unspecified | Expr::Ident(_) | Expr::Literal(_) => e.clone(),
    }
}

/// Whether a call's result is a value it built (a concatenation or a conversion), whose size
/// counts, rather than one of its operands or a scalar.
fn builds_value(function: &str) -> bool {
    matches!(function, operators::ADD | "string" | "bytes")
}

/// `call` with its target and arguments instrumented.
fn instrument_call(call: &CallExpr) -> CallExpr {
    CallExpr {
        func_name: call.func_name.clone(),
        target: call.target.as_ref().map(|t| Box::new(instrument(t))),
        args: call.args.iter().map(instrument).collect(),
    }
}

/// `expr` (node `id`) passed through a meter.
fn metered(id: u64, sized: bool, expr: Expr) -> IdedExpr {
    let inner = IdedExpr { id, expr };
    IdedExpr {
        id,
        expr: Expr::Call(CallExpr {
            func_name: if sized { BUILD } else { STEP }.to_string(),
            target: None,
            args: vec![inner],
        }),
    }
}

/// A comprehension whose every turn passes a meter. `map` and `filter` append to their
/// result (`@result + [x]`, guarded by `cond ? … : @result` for `filter`), a shape the
/// evaluator builds in place: that shape is kept and what it appends (and its guard) is
/// metered; any other step is metered whole.
fn instrument_comprehension(c: &ComprehensionExpr) -> ComprehensionExpr {
    let loop_step = match append_parts(c) {
        Some(parts) => parts,
        None => always_metered(instrument(&c.loop_step)),
    };
    ComprehensionExpr {
        iter_range: instrument(&c.iter_range),
        iter_var: c.iter_var.clone(),
        iter_var2: c.iter_var2.clone(),
        accu_var: c.accu_var.clone(),
        accu_init: instrument(&c.accu_init),
        loop_cond: c.loop_cond.clone(),
        loop_step,
        result: c.result.clone(),
    }
}

/// The step of a comprehension that appends to its result, with what it appends (and its
/// guard) metered and its shape kept; `None` for any other step.
fn append_parts(c: &ComprehensionExpr) -> Option<IdedExpr> {
    let accu = c.accu_var.as_str();
    let is_accu = |e: &IdedExpr| matches!(&e.expr, Expr::Ident(name) if name == accu);
    let append = |e: &IdedExpr| -> Option<IdedExpr> {
        let Expr::Call(call) = &e.expr else { return None };
        let [lhs, rhs] = call.args.as_slice() else { return None };
        let Expr::List(list) = &rhs.expr else { return None };
        if call.func_name != operators::ADD || call.target.is_some() || !is_accu(lhs) {
            return None;
        }
        let mut list = list.clone();
        list.elements = list.elements.iter().map(|x| always_metered(instrument(x))).collect();
        let rhs = IdedExpr {
            id: rhs.id,
            expr: Expr::List(list),
        };
        Some(IdedExpr {
            id: e.id,
            expr: Expr::Call(CallExpr {
                args: vec![lhs.clone(), rhs],
                ..call.clone()
            }),
        })
    };
    match &c.loop_step.expr {
        Expr::Call(call) if call.func_name == operators::CONDITIONAL && call.target.is_none() => {
            let [guard, step, otherwise] = call.args.as_slice() else {
                return None;
            };
            let step = append(step)?;
            is_accu(otherwise).then(|| IdedExpr {
                id: c.loop_step.id,
                expr: Expr::Call(CallExpr {
                    args: vec![always_metered(instrument(guard)), step, otherwise.clone()],
                    ..call.clone()
                }),
            })
        }
        _ => append(&c.loop_step),
    }
}

/// `e`, through a meter unless it already passes one.
fn always_metered(e: IdedExpr) -> IdedExpr {
    match &e.expr {
        Expr::Call(call) if call.func_name == STEP || call.func_name == BUILD => e,
        _ => metered(e.id, false, e.expr),
    }
}
