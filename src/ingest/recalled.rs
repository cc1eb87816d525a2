//! recall's own MCP tools, as launchers name them in a transcript. What
//! the `recall`, `get` and `list` tools return is memory recall already
//! holds: indexed back as the session's text, it would come back later as
//! if it were new evidence (as the hooks' injected text would, which the
//! parsers also leave out). The call itself (what the agent asked for) is
//! kept.

/// The tools of recall's MCP server whose result is recalled memory.
const RETURNS_MEMORY: &[&str] = &["recall", "get", "list"];

/// Whether the launcher tool `name` is one of recall's tools that returns
/// memory: `mcp__recall__recall` (Claude Code and Codex), the same served
/// by a Claude Code plugin (`mcp__plugin_recall_recall__get`), Gemini CLI
/// 0.61's `mcp_recall_list`, or an older Gemini CLI's `recall__list`.
pub fn returns_memory(name: &str) -> bool {
    if let Some(tool) = name.strip_prefix("mcp_recall_") {
        return RETURNS_MEMORY.contains(&tool);
    }
    let mut parts = name.rsplitn(2, "__");
    let (Some(tool), Some(server)) = (parts.next(), parts.next()) else {
        return false;
    };
    let server = server.strip_prefix("mcp__").unwrap_or(server);
    let server = server
        .strip_prefix("plugin_")
        .and_then(|rest| rest.rsplit_once('_').map(|(_, s)| s))
        .unwrap_or(server);
    server == "recall" && RETURNS_MEMORY.contains(&tool)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recalls_own_memory_tools_by_each_launchers_name() {
        for name in [
            "mcp__recall__recall",
            "mcp__recall__get",
            "mcp__recall__list",
            "mcp__plugin_recall_recall__recall",
            "recall__recall",
            "mcp_recall_recall",
            "mcp_recall_get",
        ] {
            assert!(returns_memory(name), "{name}");
        }
        for name in [
            "mcp__recall__remember",
            "mcp__recall__forget",
            "mcp__other__recall",
            "mcp__plugin_x_other__get",
            "recall",
            "Bash",
            "mcp__recallx__recall",
            "mcp_recall_remember",
            "mcp_recallx_recall",
        ] {
            assert!(!returns_memory(name), "{name}");
        }
    }
}
