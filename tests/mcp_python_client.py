"""`recall mcp` driven by the official Python MCP SDK (PyPI `mcp`), a
second client beside the Rust tests' hand-written one.

    python3 tests/mcp_python_client.py RECALL_BIN HOME PROJECT

Starts `RECALL_BIN --home HOME --project PROJECT mcp` over stdio, lists the
tools and resources, calls remember, recall, get and forget, and asserts on
what comes back. `tests/it/mcp_cli.rs` runs it; .ci/run installs the SDK.
Results are compared in their wire form (camelCase), which reads the same
under the SDK's 1.x and 2.x models. Prints "python mcp client: ok" at the
end; any failed check raises, so the exit code is not 0.
"""

import asyncio
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

KEY = "python-client"
FACT = "Python clients talk to recall through the official MCP SDK."


def wire(model):
    """A result as the JSON the server sent (camelCase, no nulls)."""
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


async def call(session, tool, arguments):
    """Call a tool; return (is_error, text)."""
    result = wire(await session.call_tool(tool, arguments))
    return result.get("isError", False), result["content"][0]["text"]


async def main(recall_bin, home, project):
    server = StdioServerParameters(
        command=recall_bin, args=["--home", home, "--project", project, "mcp"]
    )
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            init = wire(await session.initialize())
            assert init["serverInfo"]["name"] == "recall", init

            tools = wire(await session.list_tools())["tools"]
            names = sorted(t["name"] for t in tools)
            assert names == ["forget", "get", "list", "recall", "remember"], names
            for t in tools:
                assert t["inputSchema"]["type"] == "object", t

            resources = wire(await session.list_resources())["resources"]
            assert [r["uri"] for r in resources] == ["memory://summary"], resources
            templates = wire(await session.list_resource_templates())
            record_template = templates["resourceTemplates"][0]
            assert record_template["uriTemplate"] == "memory://records/{id}", templates

            err, text = await call(session, "remember", {"text": FACT, "key": KEY})
            assert not err and text.startswith(f"Remembered {KEY}"), text

            # A number as a string, the way some clients send it.
            err, text = await call(
                session, "recall", {"query": "official MCP SDK", "limit": "3"}
            )
            assert not err and "official MCP SDK" in text, text

            err, text = await call(session, "get", {"id": KEY})
            assert not err and text.startswith("---\n") and FACT in text, text

            summary = wire(await session.read_resource("memory://summary"))
            contents = summary["contents"][0]
            assert "nextest" in contents["text"], summary
            assert contents["mimeType"] == resources[0]["mimeType"], summary
            record = wire(await session.read_resource(f"memory://records/{KEY}"))
            assert FACT in record["contents"][0]["text"], record
            assert record["contents"][0]["mimeType"] == record_template["mimeType"], record

            err, text = await call(session, "recall", {"query": ""})
            assert err and "the query is empty" in text, text

            err, text = await call(session, "forget", {"id": KEY})
            assert not err and text.startswith(f"Forgot {KEY}"), text
            err, text = await call(session, "forget", {"id": KEY})
            assert not err and "already archived" in text, text
            err, text = await call(session, "recall", {"query": "official MCP SDK"})
            assert not err and FACT not in text, text
    print("python mcp client: ok")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: mcp_python_client.py RECALL_BIN HOME PROJECT")
    asyncio.run(main(*sys.argv[1:]))
