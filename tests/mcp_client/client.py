"""An MCP client for orch's end-to-end tests, written on the official Python SDK (`mcp`).

    python client.py stdio '["orch", "mcp", "--config", "DIR"]' SCENARIO [ARG...]
    python client.py http http://127.0.0.1:PORT/mcp SCENARIO [ARG...]

Scenarios (each prints one JSON document on stdout, results as they are on the wire):
    tools                      the server's name and its tools
    call NAME ARGS             one tools/call
    calls '[[NAME, ARGS]...]'  the calls at once (one session), results in the order given
    sequence '[[NAME, ARGS]...]'  the calls one after another (one session)
    progress NAME ARGS         one tools/call with a progressToken: result and notifications
    elicit REPLIES NAME ARGS   one tools/call from a client that declares elicitation: each
                               elicitation/create gets the next of REPLIES (`{"action", "content"}`;
                               `cancel` once they run out; a reply with `"after": SECONDS` is sent
                               that late); the result and what was asked
"""

import json
import os
import sys

import anyio
from mcp import types
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client


def wire(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def replying(replies, asked):
    """An elicitation callback answering with `replies` in order, noting what it was asked."""
    replies = list(replies)

    async def callback(context, params):
        asked.append(wire(params))
        reply = dict(replies.pop(0) if replies else {"action": "cancel"})
        await anyio.sleep(reply.pop("after", 0))
        return types.ElicitResult(**reply)

    return callback


async def scenario(session, name, args):
    init = await session.initialize()
    if name == "tools":
        listed = await session.list_tools()
        return {"server": init.server_info.name, "tools": [wire(t) for t in listed.tools]}
    if name == "call":
        return wire(await session.call_tool(args[0], json.loads(args[1])))
    if name == "calls":
        calls = json.loads(args[0])
        results = [None] * len(calls)

        async def one(i, tool, arguments):
            results[i] = wire(await session.call_tool(tool, arguments))

        async with anyio.create_task_group() as group:
            for i, (tool, arguments) in enumerate(calls):
                group.start_soon(one, i, tool, arguments)
        return results
    if name == "sequence":
        return [wire(await session.call_tool(tool, arguments)) for tool, arguments in json.loads(args[0])]
    if name == "progress":
        seen = []

        async def heard(progress, total, message):
            seen.append({"progress": progress, "total": total, "message": message})

        result = await session.call_tool(args[0], json.loads(args[1]), progress_callback=heard)
        return {"result": wire(result), "progress": seen}
    if name == "elicit":
        result = await session.call_tool(args[0], json.loads(args[1]))
        return {"result": wire(result)}
    raise SystemExit(f"unknown scenario {name}")


async def main(transport, target, name, args):
    if transport == "stdio":
        command = json.loads(target)
        # orch gets this process's environment (the tests set a provider key in it).
        params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
        connect = stdio_client(params)
    else:
        connect = streamable_http_client(target)
    asked = []
    callbacks = {}
    if name == "elicit":
        callbacks["elicitation_callback"] = replying(json.loads(args[0]), asked)
        args = args[1:]
    async with connect as streams:
        async with ClientSession(streams[0], streams[1], **callbacks) as session:
            out = await scenario(session, name, args)
    if name == "elicit":
        out["asked"] = asked
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:])
