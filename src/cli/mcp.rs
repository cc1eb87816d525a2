//! `recall mcp`: the MCP server on stdio (see [`crate::mcp`]).

use anyhow::Result;

use super::context::Ctx;

/// Serve MCP over the resolved home and project until the client hangs up.
pub fn run(ctx: Ctx) -> Result<u8> {
    crate::mcp::run(ctx)?;
    Ok(0)
}
