//! `recall mcp`: a Model Context Protocol server on stdio, so an agent can
//! search and store memory mid-session.
//!
//! Tools: `recall`, `remember`, `get`, `list`, `forget`. Resources:
//! `memory://summary` and `memory://records/{id}`. Like `serve`, this is a
//! front end over the [`Memory`] façade: it only translates MCP to façade
//! calls (the ones the CLI makes) and back. Every call runs on the server's
//! memory at the current time, reading through pooled read-only
//! connections to the files the CLI and the hooks use (WAL: each sees the
//! others' writes at its next read), on the tokio runtime `recall mcp`
//! alone starts. A failing call is a tool
//! error (`isError`) with a message the model can act on; the server itself
//! never stops for one.
//!
//! Arguments are read the way clients really send them (`params.rs`), and
//! a line that is not JSON gets a parse error (`stdio.rs`).

mod params;
mod stdio;

use jiff::Timestamp;
use percent_encoding::percent_decode_str;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler, ServiceExt};

use crate::error::{Error, Result};
use crate::index::{ListFilter, SecretPolicy};
use crate::memory::{parse_search_scope, Fact, ListOrder, RecallOptions};
use crate::recall::HitKind;
use crate::records::{render_record, Category, Status};
use crate::render::{render_prompt, PromptOptions, PROMPT_TOKENS};
use crate::Memory;
use params::{IdParams, ListParams, RecallParams, RememberParams};

/// Serve MCP over `memory` on stdin/stdout until the client hangs up.
pub fn run(memory: Memory) -> Result<()> {
    // A client may call tools concurrently: reads borrow pooled read-only
    // connections instead of opening the index per call.
    let memory = memory.with_read_pools();
    // The hook's one-shot processes embed with this process's model.
    let _lending = memory.lend_model();
    let server = RecallMcp::new(memory);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("cannot start the MCP runtime for", "recall mcp", e))?;
    rt.block_on(async move {
        let running = server.serve(stdio::transport()).await.map_err(ended)?;
        running.waiting().await.map_err(ended)?;
        Ok(())
    })
}

/// The session with the client failing (it hung up before it initialised,
/// say), as the error `recall mcp` exits with.
fn ended(e: impl std::error::Error + Send + Sync + 'static) -> Error {
    Error::io(
        "the MCP session failed on",
        "stdin/stdout",
        std::io::Error::other(e),
    )
}

/// The URI of the summary resource.
const SUMMARY_URI: &str = "memory://summary";
/// Record resources are this prefix and the record's id, percent-encoded
/// or not.
const RECORD_URI: &str = "memory://records/";
/// Both resources are Markdown: the summary, and a record's file.
const MARKDOWN: &str = "text/markdown";

/// The MCP server: its tools and resources over one [`Memory`].
#[derive(Debug, Clone)]
pub struct RecallMcp {
    memory: Memory,
    tool_router: ToolRouter<Self>,
}

/// A tool's answer: the text, or a tool error the model reads.
fn answer(r: Result<String>) -> Result<CallToolResult, ErrorData> {
    Ok(match r {
        Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
        Err(e) => CallToolResult::error(vec![ContentBlock::text(explain(&e))]),
    })
}

/// An error as the model should read it: what to do with this server's
/// tools, not the CLI's advice (`--redact`, `recall record list`).
fn explain(e: &Error) -> String {
    match e {
        Error::NoRecord { id_or_key, .. } => format!(
            "no record with id or key '{id_or_key}'; the list tool lists the records (with their ids and keys), the recall tool searches them"
        ),
        Error::Secret { kind, location } => format!(
            "refused: this memory contains a secret ({kind} at {location}). Remove the secret (describe where it lives instead) and call remember again."
        ),
        _ => e.chain(),
    }
}

#[tool_router]
impl RecallMcp {
    /// A server over `memory` (its home, config and project).
    pub fn new(memory: Memory) -> RecallMcp {
        RecallMcp {
            memory,
            tool_router: Self::tool_router(),
        }
    }

    /// The memory one call runs on: the server's, at the current time.
    fn memory(&self) -> Memory {
        self.memory.at(Timestamp::now())
    }

    #[tool(
        description = "Search this project's memory (durable records, past sessions, tickets) and the user's preferences. Use it before starting a task, when stuck, or when the user refers to earlier work. Returns the most relevant memory as text, each item with its source.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    fn recall(&self, Parameters(p): Parameters<RecallParams>) -> Result<CallToolResult, ErrorData> {
        answer(self.do_recall(p))
    }

    #[tool(
        description = "Store one durable fact for future sessions: a decision and why, a procedure, a principle, an incident and its fix, or a user preference. Upserts by key. Refuses secrets. Keep it short and self-contained.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    fn remember(
        &self,
        Parameters(p): Parameters<RememberParams>,
    ) -> Result<CallToolResult, ErrorData> {
        answer(self.do_remember(p))
    }

    #[tool(
        description = "Read one record in full (its frontmatter and text) by id or key.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    fn get(&self, Parameters(p): Parameters<IdParams>) -> Result<CallToolResult, ErrorData> {
        answer(self.record_text(&p.id))
    }

    #[tool(
        description = "List active records, pinned and important first: one line each with key, category, scope, id and text.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    fn list(&self, Parameters(p): Parameters<ListParams>) -> Result<CallToolResult, ErrorData> {
        answer(self.do_list(p))
    }

    #[tool(
        description = "Forget a record that is wrong or outdated, by id or key. It is archived (kept on disk, left out of recall), not deleted.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    fn forget(&self, Parameters(p): Parameters<IdParams>) -> Result<CallToolResult, ErrorData> {
        answer(self.do_forget(&p.id))
    }
}

impl RecallMcp {
    fn do_recall(&self, p: RecallParams) -> Result<String> {
        if p.query.trim().is_empty() {
            return Err(Error::invalid(
                "the query is empty: send what to look for in plain words, such as the task at hand, a question, an error message or a ticket's text",
            ));
        }
        let mem = self.memory();
        let kinds = p
            .kinds
            .map(params::Words::into_vec)
            .unwrap_or_default()
            .iter()
            .map(|k| k.parse())
            .collect::<Result<Vec<HitKind>>>()?;
        let opts = RecallOptions {
            // The range (1 to 200) keeps the cast exact.
            limit: Some(p.limit.map_or(8, |l| l.get() as usize)),
            kinds,
            prompt: true,
            ..RecallOptions::default()
        };
        let req = mem.request(p.query, opts)?;
        let found = mem.recall(&req, parse_search_scope(p.scope.as_deref().unwrap_or(""))?)?;
        found.note_hits(mem.now.as_second());
        if found.response.hits.is_empty() {
            return Ok("No memory matched this query.".into());
        }
        Ok(render_prompt(
            &found.response,
            PromptOptions {
                max_tokens: req.max_tokens.unwrap_or(PROMPT_TOKENS),
            },
        ))
    }

    fn do_remember(&self, p: RememberParams) -> Result<String> {
        let mem = self.memory();
        let category: Option<Category> = p.category.as_deref().map(str::parse).transpose()?;
        let scope = p.scope.as_deref().map(str::parse).transpose()?;
        let fact = Fact {
            text: p.text.trim(),
            category,
            key: p.key.as_deref(),
            // The range (0 to 100) keeps the cast exact.
            importance: p.importance.map(|i| i.get() as u8),
            secrets: SecretPolicy::Refuse,
        };
        let (loc, created) = mem.remember_in(scope, &fact)?;
        let m = &loc.record.meta;
        Ok(format!(
            "{} {} ({}, {} scope, id {})",
            if created { "Remembered" } else { "Updated" },
            m.key,
            m.category,
            m.scope,
            m.id
        ))
    }

    fn record_text(&self, id: &str) -> Result<String> {
        let mem = self.memory();
        let loc = mem.get_redacted(&mem.record_dirs(None)?, id)?;
        render_record(&loc.record)
    }

    fn do_list(&self, p: ListParams) -> Result<String> {
        let mem = self.memory();
        let filter = ListFilter {
            category: p.category.as_deref().map(str::parse).transpose()?,
            status: Some(Status::Active),
            source: None,
        };
        let scope = p.scope.as_deref().map(str::parse).transpose()?;
        let rows = mem.list(&mem.record_dirs(scope)?, &filter, ListOrder::Recent)?;
        if rows.is_empty() {
            return Ok("No records.".into());
        }
        Ok(rows
            .iter()
            // The range (1 to 1000) keeps the cast exact.
            .take(p.limit.map_or(50, |l| l.get() as usize))
            .map(|r| {
                format!(
                    "- {} ({}, {} scope, id {}): {}",
                    r.key,
                    r.category,
                    r.scope,
                    r.id,
                    r.text.replace('\n', " ")
                )
            })
            .collect::<Vec<_>>()
            .join("\n"))
    }

    fn do_forget(&self, id: &str) -> Result<String> {
        let mem = self.memory();
        let dirs = mem.record_dirs(None)?;
        let (saved, changed) = mem.set_status(&dirs, id, Status::Archived)?;
        let m = &saved.record.meta;
        // What brings it back: the remember tool with its key, or the
        // person, who has the command line.
        let back = format!(
            "remember with the key '{}' states it anew; a person brings it back with `recall record unarchive {}`",
            m.key, m.id
        );
        Ok(if changed {
            format!("Forgot {} (archived: {back})", m.key)
        } else {
            format!(
                "{} was already archived (forgotten); nothing changed. {back}",
                m.key
            )
        })
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for RecallMcp {
    /// rmcp's router, with an unknown tool named: rmcp only says "tool not
    /// found", which leaves a client guessing which name was wrong.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !self.tool_router.has_route(&request.name) {
            let names: Vec<_> = self
                .tool_router
                .list_all()
                .into_iter()
                .map(|t| t.name)
                .collect();
            return Err(ErrorData::invalid_params(
                format!(
                    "tool not found: '{}'; the tools are {}",
                    request.name,
                    names.join(", ")
                ),
                None,
            ));
        }
        let call = ToolCallContext::new(self, request, context);
        self.tool_router.call(call).await
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("recall", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "recall is this project's memory. Call `recall` with the task or question before you start and whenever earlier work may matter; call `remember` to keep a decision, procedure, principle, incident or user preference for future sessions (never secrets); `forget` archives a wrong record.",
        )
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![Resource::new(
            SUMMARY_URI,
            "memory summary",
        )
        .with_description("A compact index of this project's memory and the user's preferences")
        .with_mime_type(MARKDOWN)]))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new(format!("{RECORD_URI}{{id}}"), "record")
                .with_description(
                    "One record's Markdown file, by id or key (percent-encoded or not)",
                )
                .with_mime_type(MARKDOWN),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        let text = if uri == SUMMARY_URI {
            self.memory()
                .summary(5000)
                .map_err(|e| ErrorData::internal_error(e.chain(), None))?
        } else if let Some(id) = uri.strip_prefix(RECORD_URI) {
            let id = percent_decode_str(id).decode_utf8().map_err(|_| {
                ErrorData::invalid_params(
                    format!("{uri}: the id is not UTF-8 once percent-decoded; percent-encode the record's id or key as UTF-8"),
                    None,
                )
            })?;
            self.record_text(&id).map_err(|e| {
                ErrorData::resource_not_found(format!("{uri}: {}", explain(&e)), None)
            })?
        } else {
            return Err(ErrorData::resource_not_found(
                format!("unknown resource {uri}: use {SUMMARY_URI} or {RECORD_URI}<id>"),
                None,
            ));
        };
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, uri).with_mime_type(MARKDOWN)
        ])
        .into())
    }
}
