//! Variants (SPEC §22) as a session gives them: each agent with variants assigned its
//! variant for the run's key (`--assign KEY`, else the request as given), `--variant` and a
//! suite case's `variants:` forcing theirs, before the request is planned.

use std::collections::BTreeMap;

use crate::cli::VariantArgs;
use crate::config::Config;
use crate::plan;

use super::SessionError;

/// Gives every agent of `config` with variants its variant for `request` as `args` say; an
/// unknown agent or variant in `--variant` is a usage error.
pub fn assign(config: &mut Config, request: &str, args: &VariantArgs) -> Result<(), SessionError> {
    assign_case(config, request, args, &BTreeMap::new())
}

/// [`assign`] for a suite case, whose own `variants:` (`case`) yield to `--variant`.
pub fn assign_case(
    config: &mut Config,
    request: &str,
    args: &VariantArgs,
    case: &BTreeMap<String, String>,
) -> Result<(), SessionError> {
    let mut forced = case.clone();
    forced.extend(args.forced.iter().cloned());
    plan::check_forced_variants(config, &forced).map_err(SessionError::refused)?;
    let key = args.assign.as_deref().unwrap_or(request);
    plan::assign_variants(config, key, &forced);
    Ok(())
}
